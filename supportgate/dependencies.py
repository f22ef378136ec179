"""What route handlers may ask Litestar to inject."""

from __future__ import annotations

from litestar.di import NamedDependency

from supportgate.runtime import Runtime

RuntimeDep = NamedDependency[Runtime]
"""The running service's parts (`runtime: RuntimeDep` in a handler's signature)."""
