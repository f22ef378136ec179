"""Settings, read once from the environment by whoever starts the program (never at import)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_POLICY_DIR = Path(__file__).resolve().parent.parent / "policies"
DEFAULT_DATABASE_URL = "sqlite:///supportgate.db"
DEFAULT_REEVALUATE_CRON = "0 3 * * *"


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str = DEFAULT_DATABASE_URL
    opa_url: str | None = None
    reevaluate_cron: str = DEFAULT_REEVALUATE_CRON
    policy_dir: Path = DEFAULT_POLICY_DIR

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        return cls(
            database_url=env.get("SUPPORTGATE_DATABASE_URL") or DEFAULT_DATABASE_URL,
            opa_url=env.get("SUPPORTGATE_OPA_URL") or None,
            reevaluate_cron=env.get("SUPPORTGATE_REEVALUATE_CRON") or DEFAULT_REEVALUATE_CRON,
            policy_dir=Path(env.get("SUPPORTGATE_POLICY_DIR") or DEFAULT_POLICY_DIR),
        )
