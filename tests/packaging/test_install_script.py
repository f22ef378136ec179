"""scripts/install runs pip only when something changed, and scripts/serve asks it for the
runtime dependencies alone.

Run on a copy of the scripts, pyproject.toml and supportgate/__init__.py (so the test may edit
them) with a stand-in virtualenv (SUPPORTGATE_VENV) whose `python` writes down each call instead
of running pip, and whose pip "install" leaves a `supportgate` that writes down its arguments.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..docker_context import REPO

STAND_IN_PYTHON = """\
#!/bin/sh
# Records the call; a pip install "succeeds" unless FAIL_PIP is set, and leaves a supportgate.
bin="$(dirname "$0")"
echo "$*" >> "$bin/../calls"
[ -z "${FAIL_PIP:-}" ] || exit 1
printf '#!/bin/sh\\necho "supportgate $*" >> "$(dirname "$0")/../calls"\\n' > "$bin/supportgate"
chmod +x "$bin/supportgate"
"""


@dataclass
class Checkout:
    root: Path
    venv: Path

    def run(
        self, script: str, *args: str, fail_pip: bool = False, path: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "SUPPORTGATE_VENV": str(self.venv)}
        if path is not None:
            env["PATH"] = path
        env.pop("FAIL_PIP", None)
        if fail_pip:
            env["FAIL_PIP"] = "1"
        return subprocess.run(
            [str(self.root / "scripts" / script), *args],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )

    def calls(self) -> list[str]:
        """Each call since the last look."""
        log = self.venv / "calls"
        lines = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        return lines


@pytest.fixture
def checkout(tmp_path: Path) -> Checkout:
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    for name in ("install", "serve", "lib.sh"):
        shutil.copy2(REPO / "scripts" / name, root / "scripts" / name)
    shutil.copy2(REPO / "pyproject.toml", root / "pyproject.toml")
    (root / "supportgate").mkdir()
    shutil.copy2(REPO / "supportgate" / "__init__.py", root / "supportgate" / "__init__.py")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(STAND_IN_PYTHON)
    python.chmod(0o755)
    return Checkout(root, venv)


def _pip_installs(calls: list[str]) -> list[str]:
    return [call.removeprefix("-m pip install --quiet --editable ") for call in calls]


def test_a_second_install_of_the_same_mode_runs_no_pip(checkout: Checkout) -> None:
    first = checkout.run("install", "--runtime")
    assert first.returncode == 0, first.stderr
    assert _pip_installs(checkout.calls()) == [str(checkout.root)]
    again = checkout.run("install", "--runtime")
    assert again.returncode == 0, again.stderr
    assert checkout.calls() == []


def test_dev_after_runtime_installs_the_dev_extra_and_then_serves_both(
    checkout: Checkout,
) -> None:
    assert checkout.run("install", "--runtime").returncode == 0
    checkout.calls()
    assert checkout.run("install", "--dev").returncode == 0
    assert _pip_installs(checkout.calls()) == [f"{checkout.root}[dev]"]
    assert checkout.run("install", "--dev").returncode == 0
    assert checkout.run("install", "--runtime").returncode == 0  # dev holds runtime
    assert checkout.calls() == []


def test_a_changed_pyproject_installs_again(checkout: Checkout) -> None:
    assert checkout.run("install", "--runtime").returncode == 0
    checkout.calls()
    pyproject = checkout.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n# a new pin\n")
    assert checkout.run("install", "--runtime").returncode == 0
    assert _pip_installs(checkout.calls()) == [str(checkout.root)]


def test_a_new_version_installs_again(checkout: Checkout) -> None:
    # The version is dynamic (supportgate.__version__): the installed metadata changes with it.
    assert checkout.run("install", "--dev").returncode == 0
    checkout.calls()
    init = checkout.root / "supportgate" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', '__version__ = "9'))
    assert checkout.run("install", "--dev").returncode == 0
    assert _pip_installs(checkout.calls()) == [f"{checkout.root}[dev]"]


def test_a_failed_pip_install_is_tried_again_next_time(checkout: Checkout) -> None:
    assert checkout.run("install", "--dev").returncode == 0
    checkout.calls()
    pyproject = checkout.root / "pyproject.toml"
    before = pyproject.read_text()
    pyproject.write_text(before + "\n# a new pin\n")
    assert checkout.run("install", "--dev", fail_pip=True).returncode != 0
    checkout.calls()
    pyproject.write_text(before)  # back to what the stamp once recorded: pip ran half-way since
    assert checkout.run("install", "--dev").returncode == 0
    assert _pip_installs(checkout.calls()) == [f"{checkout.root}[dev]"]


def test_install_needs_a_mode_and_names_an_unknown_option(checkout: Checkout) -> None:
    bare = checkout.run("install")
    assert bare.returncode == 2
    assert "usage: scripts/install --runtime|--dev" in bare.stderr
    unknown = checkout.run("install", "--with-opa", "--everything")
    assert unknown.returncode == 2
    assert "unknown option --everything" in unknown.stderr
    assert checkout.calls() == []


def test_serve_installs_the_runtime_only_then_passes_its_arguments_on(
    checkout: Checkout,
) -> None:
    for _ in range(2):
        served = checkout.run("serve", "--port", "8123")
        assert served.returncode == 0, served.stderr
    assert checkout.calls() == [
        f"-m pip install --quiet --editable {checkout.root}",
        "supportgate serve --bootstrap-admin-key --port 8123",
        "supportgate serve --bootstrap-admin-key --port 8123",
    ]


def _stand_in_go(tools: Path, opa_version: str) -> str:
    """A PATH whose `go` writes down each call (GOPATH: `tools`) and whose `opa` is at
    `opa_version`; the system's tools after them."""
    bin_dir = tools / "bin"
    bin_dir.mkdir(parents=True)
    scripts = {
        "go": f'[ "$1" = env ] && {{ echo {tools}; exit 0; }}\necho "go $*" >> {tools}/calls\n',
        # like the real one, it goes on writing after the Version line (a reader that stops
        # early makes it die of SIGPIPE)
        "opa": f"echo 'Version: {opa_version}'\nsleep 0.2\necho 'Platform: linux'\n",
    }
    for name, body in scripts.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}")
        (bin_dir / name).chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


def test_with_opa_runs_go_install_only_when_opa_is_not_at_the_pinned_version(
    checkout: Checkout, tmp_path: Path
) -> None:
    pinned = re.search(r'^OPA_VERSION="v([^"]+)"', (REPO / "scripts/lib.sh").read_text(), re.M)
    assert pinned is not None
    current, old = tmp_path / "current", tmp_path / "old"
    assert (
        checkout.run(
            "install", "--runtime", "--with-opa", path=_stand_in_go(current, pinned[1])
        ).returncode
        == 0
    )
    assert not (current / "calls").exists()
    assert (
        checkout.run(
            "install", "--runtime", "--with-opa", path=_stand_in_go(old, "0.70.0")
        ).returncode
        == 0
    )
    assert (old / "calls").read_text() == (
        f"go install github.com/open-policy-agent/opa@v{pinned[1]}\n"
    )


def test_an_old_python_is_refused_before_any_virtualenv_is_made(tmp_path: Path) -> None:
    old_python = tmp_path / "python3.10"
    old_python.write_text('#!/bin/sh\n[ "$1" = --version ] && echo "Python 3.10.12"\nexit 1\n')
    old_python.chmod(0o755)
    venv = tmp_path / "no-venv-yet"
    refused = subprocess.run(
        [str(REPO / "scripts" / "install"), "--runtime"],
        env={**os.environ, "SUPPORTGATE_VENV": str(venv), "SUPPORTGATE_PYTHON": str(old_python)},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert refused.returncode == 1
    assert f"needs Python 3.11 or newer; '{old_python}' is Python 3.10.12" in refused.stderr
    assert not venv.exists()
