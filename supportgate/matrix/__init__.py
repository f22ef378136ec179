"""The support matrix: reading a matrix file and preparing it for the engines."""

from __future__ import annotations

from pathlib import Path

from supportgate.errors import UsageError
from supportgate.manifests import Matrix, decode_matrix, format_of, to_builtins
from supportgate.policy.engine import LoadedMatrix


def prepare(matrix: Matrix) -> LoadedMatrix:
    return LoadedMatrix.from_document(to_builtins(matrix))


def load_matrix_file(path: Path) -> Matrix:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read matrix file {path}: {exc.strerror}", field=None) from exc
    return decode_matrix(data, fmt=format_of(path.name), source=str(path))
