"""`supportgate serve` with an organisation bundle that fails `supportgate policy check`: the
start is refused (exit 2), naming the file and line (docs/organisation-policies.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..server import clean_env, run_cli
from ..services import free_port

ACME = Path(__file__).resolve().parents[2] / "examples" / "policies" / "acme"
ACME_FILE = "supportgate/org/acme/acme.rego"  # in the directory its package names


def test_serve_refuses_a_bundle_that_fails_its_check(tmp_path: Path) -> None:
    bundle = tmp_path / "acme"
    shutil.copytree(ACME, bundle)
    rules = bundle / ACME_FILE
    text = rules.read_text()
    rules.write_text(text.replace("id: org.acme.rtx-production", "id: org.acme.decode-replicas"))
    line = next(
        number
        for number, row in enumerate(rules.read_text().splitlines(), 1)
        if '"rule": "org.acme.rtx-production"' in row
    )
    env = clean_env(
        SUPPORTGATE_DATABASE_URL=f"sqlite:///{tmp_path / 'supportgate.db'}",
        SUPPORTGATE_POLICY_BUNDLES=str(bundle),
    )
    done = run_cli(["serve", "--port", str(free_port())], env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "SUPPORTGATE_POLICY_BUNDLES: organisation policies refused" in done.stderr
    assert (
        f"{bundle}/{ACME_FILE}:{line}: the finding's \"rule\" is 'org.acme.rtx-production', "
        "not the "
        "METADATA custom.id 'org.acme.decode-replicas' above it" in done.stderr
    )
