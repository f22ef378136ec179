"""Organisation policy bundles, directories or `.tar.gz` files of Rego modules
(SUPPORTGATE_POLICY_BUNDLES, docs/organisation-policies.md); org_check.py checks them."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from supportgate.errors import UsageError

BUNDLES_SETTING = "SUPPORTGATE_POLICY_BUNDLES"
# Organisation modules are named `org/<bundle>/<path>` among the policy modules, so no
# bundle's file can take the place of a built-in one (those are under `supportgate/`).
MODULE_PREFIX = "org/"
ARCHIVE_SUFFIX = ".tar.gz"
MAX_MODULE_BYTES = 1 << 20

_BUNDLE_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*")


@dataclass(frozen=True, slots=True)
class OrgBundle:
    name: str
    source: Path
    modules: tuple[tuple[str, str], ...]  # (`org/<name>/<path>`, text), in path order
    tests: tuple[tuple[str, str], ...]  # only `supportgate policy test` loads them

    @property
    def revision(self) -> str:
        return modules_revision(self.modules)

    def file(self, module: str) -> str:
        return f"{self.source}/{module.removeprefix(f'{MODULE_PREFIX}{self.name}/')}"


def modules_revision(modules: Iterable[tuple[str, str]]) -> str:
    """In path order: any edit is a new revision."""
    digest = hashlib.sha256()
    for name, text in modules:
        digest.update(name.encode() + b"\0" + text.encode() + b"\0")
    return f"sha256:{digest.hexdigest()}"


def read_bundles(
    paths: Iterable[Path], *, field: str | None = BUNDLES_SETTING
) -> tuple[OrgBundle, ...]:
    bundles = tuple(read_bundle(path, field=field) for path in paths)
    names = [bundle.name for bundle in bundles]
    for bundle in bundles:
        if names.count(bundle.name) > 1:
            raise UsageError(f"two bundles are named {bundle.name!r}: rename one", field=field)
    return bundles


def read_bundle(path: Path, *, field: str | None = BUNDLES_SETTING) -> OrgBundle:
    if path.is_dir():
        name = path.resolve().name
        files = _directory_files(path, field=field)
    elif path.name.endswith(ARCHIVE_SUFFIX) and path.is_file():
        name = path.name.removesuffix(ARCHIVE_SUFFIX)
        files = _archive_files(path, field=field)
    else:
        raise UsageError(f"{path} is neither a directory nor a {ARCHIVE_SUFFIX} file", field=field)
    if not _BUNDLE_NAME.fullmatch(name):
        raise UsageError(
            f"{path}: a bundle's name ({name!r}) is lower-case letters, digits, '_', '.', '-'",
            field=field,
        )
    modules: list[tuple[str, str]] = []
    tests: list[tuple[str, str]] = []
    for relative, text in files:
        kept = tests if relative.endswith("_test.rego") else modules
        kept.append((f"{MODULE_PREFIX}{name}/{relative}", text))
    if not modules:
        raise UsageError(f"{path} holds no .rego policy files", field=field)
    return OrgBundle(name=name, source=path, modules=tuple(modules), tests=tuple(tests))


def _directory_files(directory: Path, *, field: str | None) -> list[tuple[str, str]]:
    files = []
    for file in sorted(directory.rglob("*.rego")):
        try:
            if file.is_file():
                files.append((file.relative_to(directory).as_posix(), file.read_text("utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{file}: cannot be read as UTF-8 text ({exc})", field=field) from exc
    return files


def _archive_files(path: Path, *, field: str | None) -> list[tuple[str, str]]:
    """Nothing is extracted to disk."""
    import tarfile  # noqa: PLC0415 - `check` without bundle files does not pay for it

    files: list[tuple[str, str]] = []
    try:
        with tarfile.open(path, mode="r:gz") as archive:
            for member in archive.getmembers():
                relative = member.name.lstrip("/")
                if not member.isfile() or not relative.endswith(".rego"):
                    continue
                if ".." in relative.split("/") or member.size > MAX_MODULE_BYTES:
                    raise UsageError(f"{path}: refused member {member.name!r}", field=field)
                content = archive.extractfile(member)
                if content is not None:
                    files.append((relative, content.read().decode("utf-8")))
    except (OSError, tarfile.TarError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not a readable OPA bundle ({exc})", field=field) from exc
    return sorted(files)
