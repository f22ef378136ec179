"""The policies in force, and their reload when the files change (docs/organisation-policies.md).

The service starts on the policies it loaded (a bundle that fails its check refuses the
start). Then the scheduler calls reload() at each tick (every POLL_SECONDS): the files are
read again and their revision (a digest of every module) compared with the one in force. A
changed revision is checked; one that fails the check is refused (logged with each file and
line, once per revision) and the service keeps the policies it has; one that passes replaces
them in the engine and in the OPA bundle the service serves, and reload() says so, so that the
scheduler starts the sweep with cause `policy`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from supportgate.config import Settings
from supportgate.errors import UsageError
from supportgate.logging import get_logger

from .bundle import PolicyBundle
from .bundle_server import BundleServer
from .catalog import RuleInfo, read_catalog
from .engine import PolicyEngine
from .org_check import PolicyRefused, refuse_problems

log = get_logger(__name__)


class LivePolicies:
    def __init__(
        self,
        settings: Settings,
        bundle: PolicyBundle,
        *,
        engine: PolicyEngine,
        server: BundleServer,
        default_matrix: Mapping[str, Any],
    ) -> None:
        self._settings = settings
        self._engine = engine
        self._server = server
        self._default_matrix = default_matrix
        self._lock = threading.Lock()  # one reload at a time (ticks and tests)
        self._bundle = bundle
        self._catalog = read_catalog(bundle.modules)
        self._refused: str | None = None
        """The revision last refused: checked and logged once, not at every tick."""

    @property
    def bundle(self) -> PolicyBundle:
        return self._bundle

    @property
    def catalog(self) -> Mapping[str, RuleInfo]:
        """The rules of the policies in force (built-in and organisation), by id."""
        return self._catalog

    def reload(self) -> bool:
        """Whether new policies are now in force (see the module's docstring)."""
        with self._lock:
            try:
                fresh = PolicyBundle.read(self._settings.policy_dir, self._settings.policy_bundles)
            except (UsageError, OSError, UnicodeDecodeError) as exc:
                log.error(  # noqa: TRY400 - a refusal to report, not a crash
                    "policy_reload_refused", error=str(exc), kept=self._bundle.revision
                )
                return False
            if fresh.revision in {self._bundle.revision, self._refused}:
                return False
            try:
                refuse_problems(fresh)
            except PolicyRefused as exc:
                self._refused = fresh.revision
                log.error(  # noqa: TRY400 - a refusal to report, not a crash
                    "policy_reload_refused",
                    revision=fresh.revision,
                    problems=[str(problem) for problem in exc.problems],
                    kept=self._bundle.revision,
                )
                return False
            served = self._server.publish(fresh, self._default_matrix)
            self._engine.use(fresh, served)
            self._bundle, self._catalog = fresh, read_catalog(fresh.modules)
            log.info(
                "policy_reloaded",
                revision=fresh.revision,
                bundles={bundle.name: bundle.revision for bundle in fresh.bundles},
            )
            return True
