"""The built-in modules and the organisation bundles' as one unit: one revision covers them all,
and both engines load every module."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from supportgate.errors import UsageError

from .engine import LoadedMatrix
from .org import BUNDLES_SETTING, OrgBundle, modules_revision, read_bundles
from .org_check import refuse_problems

DEFAULT_MATRIX_FILE = Path("matrix") / "data.yaml"


@dataclass(frozen=True, slots=True)
class PolicyBundle:
    """Every non-test `.rego` module under a policy directory, keyed by its relative path,
    then every organisation bundle's (named `org/<bundle>/<path>`)."""

    directory: Path
    modules: tuple[tuple[str, str], ...]
    revision: str
    bundles: tuple[OrgBundle, ...] = ()

    @classmethod
    def load(cls, directory: Path, bundle_paths: Sequence[Path] = ()) -> PolicyBundle:
        bundle = cls.read(directory, bundle_paths)
        if bundle.bundles:
            refuse_problems(bundle)
        return bundle

    @classmethod
    def read(
        cls,
        directory: Path,
        bundle_paths: Sequence[Path] = (),
        *,
        field: str | None = BUNDLES_SETTING,
    ) -> PolicyBundle:
        """Unchecked: to compare revisions before paying for a check."""
        if not directory.is_dir():
            raise UsageError(f"{directory} does not exist", field="SUPPORTGATE_POLICY_DIR")
        files = sorted(
            path for path in directory.rglob("*.rego") if not path.name.endswith("_test.rego")
        )
        if not files:
            raise UsageError(f"{directory} holds no .rego files", field="SUPPORTGATE_POLICY_DIR")
        builtin = tuple(
            (path.relative_to(directory).as_posix(), path.read_text(encoding="utf-8"))
            for path in files
        )
        bundles = read_bundles(bundle_paths, field=field)
        modules = builtin + tuple(module for bundle in bundles for module in bundle.modules)
        return cls(
            directory=directory,
            modules=modules,
            revision=modules_revision(modules),
            bundles=bundles,
        )

    @property
    def builtin_modules(self) -> tuple[tuple[str, str], ...]:
        return self.modules[: len(self.modules) - sum(len(b.modules) for b in self.bundles)]

    def builtin_only(self) -> PolicyBundle:
        modules = self.builtin_modules
        return PolicyBundle(self.directory, modules, modules_revision(modules))

    @property
    def default_matrix_path(self) -> Path:
        return self.directory / DEFAULT_MATRIX_FILE

    def default_matrix(self) -> LoadedMatrix:
        """As read, unvalidated: for the Rego tests and the examples' check."""
        return LoadedMatrix.from_document(
            yaml.safe_load(self.default_matrix_path.read_text(encoding="utf-8"))
        )
