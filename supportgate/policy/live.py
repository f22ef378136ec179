"""The policies in force, reloaded at each scheduler tick when the files change (a refusal
told once; docs/organisation-policies.md). Under OPA a new bundle is taken only once OPA holds
it, and withdrawn if OPA has not after OPA_ACTIVATION_BOUND (docs/opa.md).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.config import Settings
from supportgate.errors import PolicyEngineError, UsageError
from supportgate.events import Events, PolicyReloadFailed
from supportgate.logging import get_logger

from .bundle import PolicyBundle
from .bundle_server import BundleServer
from .catalog import RuleInfo, read_catalog
from .engine import PolicyEngine
from .opa import OpaEngine
from .org_check import PolicyRefused, refuse_problems

log = get_logger(__name__)

OPA_ACTIVATION_BOUND = timedelta(seconds=60)
"""Four times the longest poll delay of opa/config.yaml (15 s): OPA has polled several times."""


@dataclass(frozen=True, slots=True)
class _Published:
    """Served to OPA, not yet taken; `fallback` is served again if OPA never takes them."""

    bundle: PolicyBundle
    served: str
    since: datetime
    fallback: PolicyBundle


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
        self.bundle = bundle  # the policies in force, and their rules
        self.catalog: Mapping[str, RuleInfo] = read_catalog(bundle.modules)
        # The last refusal, until new policies come into force: told once, not at every tick.
        self.last_error: PolicyReloadFailed | None = None
        self._published: _Published | None = None
        self._opa_refused: str | None = None  # the OPA bundle revision OPA refused (_settle)
        served = server.bundle.revision if server.bundle else None
        if isinstance(engine, OpaEngine) and served is not None and bundle.bundles:
            self._published = _Published(bundle, served, clock.now(), bundle.builtin_only())

    def reload(self) -> bool:
        """Whether new policies are now in force (the scheduler then sweeps, cause `policy`)."""
        with self._lock:
            if self._published is not None:
                settled = self._settle(self._published)
                if settled or self._published is not None:
                    return settled
            fresh = self._changed()
            if fresh is None:
                return False
            served = self._server.publish(fresh, self._default_matrix)
            if isinstance(self._engine, OpaEngine) and served is not None:
                self._published = _Published(fresh, served, self._clock.now(), self.bundle)
                log.info("policy_published", revision=fresh.revision, bundle_revision=served)
                return self._settle(self._published)
            return self._take(fresh, served)

    def _changed(self) -> PolicyBundle | None:
        try:
            fresh = PolicyBundle.read(self._settings.policy_dir, self._settings.policy_bundles)
        except (UsageError, OSError, UnicodeDecodeError) as exc:
            self._refuse(None, [str(exc)])
            return None
        refused = self.last_error.revision if self.last_error else None
        if fresh.revision == refused and self._opa_refused is not None:
            # OPA holds it after all (another replica served it to an OPA that polled late):
            # follow OPA rather than fight it.
            return fresh if self._opa_holds(self._opa_refused) else None
        if fresh.revision in {self.bundle.revision, refused}:
            return None
        try:
            refuse_problems(fresh)
        except PolicyRefused as exc:
            self._refuse(fresh.revision, [str(problem) for problem in exc.problems])
            return None
        return fresh

    def _settle(self, published: _Published) -> bool:
        """After OPA_ACTIVATION_BOUND without OPA holding them, the fallback is served again."""
        try:
            held = self._engine.held_revision() if isinstance(self._engine, OpaEngine) else None
        except PolicyEngineError:  # OPA cannot have refused them: the bound starts once it answers
            self._published = replace(published, since=self._clock.now())
            return False
        if held == published.served:
            self._published = None
            started_on = published.bundle is self.bundle  # no change to sweep for
            return self._take(published.bundle, published.served) and not started_on
        if self._clock.now() - published.since < OPA_ACTIVATION_BOUND:
            return False
        self._published = None
        changed = published.fallback is not self.bundle
        served = self._server.publish(published.fallback, self._default_matrix)
        if changed:
            self._take(published.fallback, served)
        kept = (
            "the built-in policies alone are served"
            if changed
            else "the last good bundle is served again"
        )
        seconds = OPA_ACTIVATION_BOUND.total_seconds()
        self._refuse(
            published.bundle.revision,
            [
                f"OPA did not activate bundle revision {published.served} within {seconds:g} s: "
                "it refused it (OPA's log names the module; run `supportgate policy check` "
                f"with `opa` on PATH) or did not poll; {kept}"
            ],
        )
        self._opa_refused = published.served
        return changed

    def _opa_holds(self, served: str) -> bool:
        try:
            return isinstance(self._engine, OpaEngine) and self._engine.held_revision() == served
        except PolicyEngineError:
            return False

    def _take(self, fresh: PolicyBundle, served: str | None) -> bool:
        self._engine.use(fresh, served)
        self.bundle, self.catalog = fresh, read_catalog(fresh.modules)
        self.last_error = self._opa_refused = None
        log.info(
            "policy_reloaded",
            revision=fresh.revision,
            bundles={bundle.name: bundle.revision for bundle in fresh.bundles},
        )
        return True

    def _refuse(self, revision: str | None, problems: list[str]) -> None:
        self._opa_refused = None  # _settle sets it again for a refusal of OPA's
        if self.last_error and (self.last_error.revision, self.last_error.problems) == (
            revision,
            problems,
        ):
            return  # told already
        self.last_error = PolicyReloadFailed(
            revision=revision, kept=self.bundle.revision, problems=problems, at=self._clock.now()
        )
        log.error(
            "policy_reload_refused",
            revision=revision,
            problems=problems,
            kept=self.bundle.revision,
        )
        self._events.publish([self.last_error])
