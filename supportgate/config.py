"""Settings, read once from the environment by whoever starts the program (never at import)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from supportgate.package_data import POLICIES_PACKAGE, package_directory
from supportgate.pagination import check_choice

DEFAULT_POLICY_DIR = package_directory(POLICIES_PACKAGE)
DEFAULT_DATABASE_URL = "sqlite:///supportgate.db"
DEFAULT_REEVALUATE_CRON = "0 3 * * *"


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str = DEFAULT_DATABASE_URL
    opa_url: str | None = None
    reevaluate_cron: str = DEFAULT_REEVALUATE_CRON
    policy_dir: Path = DEFAULT_POLICY_DIR
    decision_writer: str = "auto"
    """Where group commits run: `process` (a child process, beside the request loop),
    `thread` (a thread of the service) or `auto` (process on PostgreSQL, thread on SQLite,
    whose single file lock gains nothing from a second process)."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        return cls(
            database_url=env.get("SUPPORTGATE_DATABASE_URL") or DEFAULT_DATABASE_URL,
            opa_url=env.get("SUPPORTGATE_OPA_URL") or None,
            reevaluate_cron=env.get("SUPPORTGATE_REEVALUATE_CRON") or DEFAULT_REEVALUATE_CRON,
            policy_dir=Path(env.get("SUPPORTGATE_POLICY_DIR") or DEFAULT_POLICY_DIR),
            decision_writer=_decision_writer(env.get("SUPPORTGATE_DECISION_WRITER") or "auto"),
        )

    @property
    def writes_in_process(self) -> bool:
        """Whether decisions are written by a child process (see decision_writer)."""
        if self.decision_writer == "auto":
            return self.database_url.startswith("postgresql")
        return self.decision_writer == "process"


DECISION_WRITERS = ("auto", "process", "thread")


def _decision_writer(value: str) -> str:
    check_choice("SUPPORTGATE_DECISION_WRITER", value, DECISION_WRITERS)
    return value
