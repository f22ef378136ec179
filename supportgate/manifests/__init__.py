"""The contract's Structs, safe YAML/JSON decoding and schema export (docs/manifests.md)."""

from supportgate.manifests.decode import (
    MAX_BYTES,
    MAX_DEPTH,
    Format,
    Manifest,
    decode_manifest,
    decode_manifests,
    decode_matrix,
    format_of,
    to_builtins,
)
from supportgate.manifests.deployment import DeploymentManifest, DeploymentSpec
from supportgate.manifests.hardware import HardwareManifest, HardwareSpec
from supportgate.manifests.matrix import Matrix

__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "DeploymentManifest",
    "DeploymentSpec",
    "Format",
    "HardwareManifest",
    "HardwareSpec",
    "Manifest",
    "Matrix",
    "decode_manifest",
    "decode_manifests",
    "decode_matrix",
    "format_of",
    "to_builtins",
]
