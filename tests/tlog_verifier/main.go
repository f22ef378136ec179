// Command tlog_verifier checks supportgate's signed checkpoints and Merkle proofs with
// implementations supportgate did not write: golang.org/x/mod/sumdb/note for the signed
// notes, and github.com/transparency-dev/merkle for RFC 9162 hashing and proofs.
//
// It reads a JSON fixture (-fixture FILE, or $TLOG_FIXTURE):
//
//	{"verifier_key": "<name>+<hash>+<base64>",
//	 "entries": ["<entry bytes as text>", ...],           // leaf i is entries[i]
//	 "checkpoints": ["<signed checkpoint note>", ...],
//	 "inclusion": [{"leaf_index": I, "tree_size": N, "hashes": ["<base64>", ...]}, ...],
//	 "consistency": [{"first": M, "second": N, "hashes": ["<base64>", ...]}, ...]}
//
// Every checkpoint must be signed by the verifier key and name it as its origin; every
// proof must verify against the roots of the checkpoints of its sizes; and every leaf of
// every checkpoint must have its inclusion proof. The leaf hashes are computed here, from
// the entries. Exit 0 prints what was verified; exit 1 names the first thing that fails.
package main

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"
)

type inclusionProof struct {
	LeafIndex uint64   `json:"leaf_index"`
	TreeSize  uint64   `json:"tree_size"`
	Hashes    [][]byte `json:"hashes"`
}

type consistencyProof struct {
	First  uint64   `json:"first"`
	Second uint64   `json:"second"`
	Hashes [][]byte `json:"hashes"`
}

type fixture struct {
	VerifierKey string             `json:"verifier_key"`
	Entries     []string           `json:"entries"`
	Checkpoints []string           `json:"checkpoints"`
	Inclusion   []inclusionProof   `json:"inclusion"`
	Consistency []consistencyProof `json:"consistency"`
}

func main() {
	path := flag.String("fixture", os.Getenv("TLOG_FIXTURE"), "the JSON fixture to verify")
	flag.Parse()
	summary, err := verifyFile(*path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tlog_verifier:", err)
		os.Exit(1)
	}
	fmt.Println(summary)
}

func verifyFile(path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("no fixture: pass -fixture FILE or set TLOG_FIXTURE")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var f fixture
	if err := json.Unmarshal(data, &f); err != nil {
		return "", fmt.Errorf("fixture %s: %w", path, err)
	}
	verifier, err := note.NewVerifier(f.VerifierKey)
	if err != nil {
		return "", fmt.Errorf("verifier key: %w", err)
	}
	roots := map[uint64][]byte{}
	for i, signed := range f.Checkpoints {
		size, root, err := openCheckpoint(signed, verifier)
		if err != nil {
			return "", fmt.Errorf("checkpoint %d: %w", i, err)
		}
		roots[size] = root
	}
	if err := verifyInclusion(f, roots); err != nil {
		return "", err
	}
	for _, c := range f.Consistency {
		root1, ok1 := roots[c.First]
		root2, ok2 := roots[c.Second]
		if !ok1 || !ok2 {
			return "", fmt.Errorf("consistency %d -> %d: no checkpoint of that size", c.First, c.Second)
		}
		if err := proof.VerifyConsistency(rfc6962.DefaultHasher, c.First, c.Second, c.Hashes, root1, root2); err != nil {
			return "", fmt.Errorf("consistency %d -> %d: %w", c.First, c.Second, err)
		}
	}
	return fmt.Sprintf("verified %d checkpoints, %d inclusion proofs, %d consistency proofs",
		len(f.Checkpoints), len(f.Inclusion), len(f.Consistency)), nil
}

// openCheckpoint checks the note's signature with note.Open and reads the c2sp.org/
// tlog-checkpoint body: origin (the key's name), tree size, base64 root hash.
func openCheckpoint(signed string, verifier note.Verifier) (uint64, []byte, error) {
	n, err := note.Open([]byte(signed), note.VerifierList(verifier))
	if err != nil {
		return 0, nil, err
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) != 4 || lines[3] != "" {
		return 0, nil, fmt.Errorf("the body is not three lines: %q", n.Text)
	}
	if lines[0] != verifier.Name() {
		return 0, nil, fmt.Errorf("origin %q is not the key's name %q", lines[0], verifier.Name())
	}
	size, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil {
		return 0, nil, fmt.Errorf("tree size: %w", err)
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != rfc6962.DefaultHasher.Size() {
		return 0, nil, fmt.Errorf("root hash %q is not base64 of %d bytes", lines[2], rfc6962.DefaultHasher.Size())
	}
	return size, root, nil
}

func verifyInclusion(f fixture, roots map[uint64][]byte) error {
	proven := map[uint64]map[uint64]bool{}
	for _, p := range f.Inclusion {
		root, ok := roots[p.TreeSize]
		if !ok {
			return fmt.Errorf("inclusion of leaf %d: no checkpoint of size %d", p.LeafIndex, p.TreeSize)
		}
		if p.LeafIndex >= uint64(len(f.Entries)) {
			return fmt.Errorf("inclusion of leaf %d: the fixture has %d entries", p.LeafIndex, len(f.Entries))
		}
		leaf := rfc6962.DefaultHasher.HashLeaf([]byte(f.Entries[p.LeafIndex]))
		if err := proof.VerifyInclusion(rfc6962.DefaultHasher, p.LeafIndex, p.TreeSize, leaf, p.Hashes, root); err != nil {
			return fmt.Errorf("inclusion of leaf %d in the tree of %d: %w", p.LeafIndex, p.TreeSize, err)
		}
		if proven[p.TreeSize] == nil {
			proven[p.TreeSize] = map[uint64]bool{}
		}
		proven[p.TreeSize][p.LeafIndex] = true
	}
	for size := range roots {
		if got := uint64(len(proven[size])); got != size {
			return fmt.Errorf("inclusion: %d of the %d leaves of the tree of %d have a proof", got, size, size)
		}
	}
	return nil
}
