"""The edge's settings as read from the environment: server limits, database timeouts and the
webhook allow-list, with their defaults; a bad value is a UsageError naming its variable."""

from __future__ import annotations

import pytest

from supportgate.config import DatabaseTimeouts, ServerLimits, Settings
from supportgate.errors import UsageError

pytestmark = pytest.mark.fast


def test_the_defaults() -> None:
    settings = Settings.from_env({})
    assert settings.server_limits == ServerLimits(
        header_timeout=10.0, keep_alive_timeout=5, max_connections=1000
    )
    assert settings.database_timeouts == DatabaseTimeouts(statement=30.0, lock=5.0)
    assert settings.webhook_allow == ()


def test_each_variable_is_read() -> None:
    settings = Settings.from_env(
        {
            "SUPPORTGATE_HEADER_TIMEOUT": "2.5",
            "SUPPORTGATE_KEEP_ALIVE_TIMEOUT": "3",
            "SUPPORTGATE_MAX_CONNECTIONS": "200",
            "SUPPORTGATE_DB_STATEMENT_TIMEOUT": "0",
            "SUPPORTGATE_DB_LOCK_TIMEOUT": "0.5",
            "SUPPORTGATE_WEBHOOK_ALLOW": " 10.0.0.0/8, hooks.internal ,,",
        }
    )
    assert settings.server_limits == ServerLimits(2.5, 3, 200)
    assert settings.database_timeouts == DatabaseTimeouts(statement=0.0, lock=0.5)
    assert settings.webhook_allow == ("10.0.0.0/8", "hooks.internal")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SUPPORTGATE_HEADER_TIMEOUT", "0"),
        ("SUPPORTGATE_HEADER_TIMEOUT", "soon"),
        ("SUPPORTGATE_KEEP_ALIVE_TIMEOUT", "1.5"),
        ("SUPPORTGATE_MAX_CONNECTIONS", "0"),
        ("SUPPORTGATE_DB_STATEMENT_TIMEOUT", "-1"),
        ("SUPPORTGATE_DB_LOCK_TIMEOUT", "nan"),
        ("SUPPORTGATE_DB_LOCK_TIMEOUT", "inf"),
    ],
)
def test_a_bad_value_names_its_variable(name: str, value: str) -> None:
    with pytest.raises(UsageError) as raised:
        Settings.from_env({name: value})
    assert raised.value.field == name
