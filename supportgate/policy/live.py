"""The policies in force, and their reload when the files change (docs/organisation-policies.md).

The service starts on the policies it loaded (a bundle that fails its check refuses the
start). Then the scheduler calls reload() at each tick (every POLL_SECONDS): the files are
read again and their revision (a digest of every module) compared with the one in force. A
changed revision is checked; one that fails the check is refused and the service keeps the
policies it has: the refusal (each file and line) is logged, shown as `last_error` by
GET /v1/policy and told once per revision as a PolicyReloadFailed event (counted in /metrics,
sent to webhook subscribers as `policy.reload_failed`). One that passes replaces them in the
engine and in the OPA bundle the service serves, and reload() says so, so that the scheduler
starts the sweep with cause `policy`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.config import Settings
from supportgate.errors import UsageError
from supportgate.events import Events, PolicyReloadFailed
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
        events: Events,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._settings = settings
        self._engine = engine
        self._server = server
        self._default_matrix = default_matrix
        self._events = events
        self._clock = clock
        self._lock = threading.Lock()  # one reload at a time (ticks and tests)
        self._bundle = bundle
        self._catalog = read_catalog(bundle.modules)
        self.last_error: PolicyReloadFailed | None = None
        """The last refusal, until new policies come into force: each is checked and told
        once, not at every tick."""

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
                self._refuse(None, [str(exc)])
                return False
            refused = self.last_error.revision if self.last_error else None
            if fresh.revision in {self._bundle.revision, refused}:
                return False
            try:
                refuse_problems(fresh)
            except PolicyRefused as exc:
                self._refuse(fresh.revision, [str(problem) for problem in exc.problems])
                return False
            served = self._server.publish(fresh, self._default_matrix)
            self._engine.use(fresh, served)
            self._bundle, self._catalog = fresh, read_catalog(fresh.modules)
            self.last_error = None
            log.info(
                "policy_reloaded",
                revision=fresh.revision,
                bundles={bundle.name: bundle.revision for bundle in fresh.bundles},
            )
            return True

    def _refuse(self, revision: str | None, problems: list[str]) -> None:
        if self.last_error and (self.last_error.revision, self.last_error.problems) == (
            revision,
            problems,
        ):
            return  # told already
        self.last_error = PolicyReloadFailed(
            revision=revision, kept=self._bundle.revision, problems=problems, at=self._clock.now()
        )
        log.error(
            "policy_reload_refused",
            revision=revision,
            problems=problems,
            kept=self._bundle.revision,
        )
        self._events.publish([self.last_error])
