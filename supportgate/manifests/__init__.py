"""The contract's Structs, safe YAML/JSON decoding and schema export (docs/manifests.md)."""

from supportgate.manifests.decode import MAX_BYTES as MAX_BYTES
from supportgate.manifests.decode import MAX_DEPTH as MAX_DEPTH
from supportgate.manifests.decode import Format as Format
from supportgate.manifests.decode import Manifest as Manifest
from supportgate.manifests.decode import decode_manifest as decode_manifest
from supportgate.manifests.decode import decode_manifests as decode_manifests
from supportgate.manifests.decode import decode_matrix as decode_matrix
from supportgate.manifests.decode import format_of as format_of
from supportgate.manifests.decode import to_builtins as to_builtins
from supportgate.manifests.deployment import DeploymentManifest as DeploymentManifest
from supportgate.manifests.deployment import DeploymentSpec as DeploymentSpec
from supportgate.manifests.hardware import HardwareManifest as HardwareManifest
from supportgate.manifests.hardware import HardwareSpec as HardwareSpec
from supportgate.manifests.matrix import Matrix as Matrix
