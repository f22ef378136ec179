"""A manifest as `check` read it: its file, its text and its place in the file. Its own module
so that the local check and the `--server` client both read it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass

from supportgate.manifests import Manifest
from supportgate.manifests.decision import Decision
from supportgate.reports import CheckedManifest


@dataclass(frozen=True, slots=True)
class SourcedManifest:
    source: str
    text: str
    document_index: int
    manifest: Manifest

    def checked(self, decision: Decision, seconds: float) -> CheckedManifest:
        return CheckedManifest(self.source, decision, self.text, self.document_index, seconds)
