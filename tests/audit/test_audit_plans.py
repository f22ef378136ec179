"""Custom plans (PostgreSQL's `plan_cache_mode`) are asked for in the audit's reads alone: the
audit's probes need them, the writers must not pay for them (docs/performance.md: 5-17% of a
committed decision's CPU)."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlmodel import Session

from supportgate.audit.filters import AuditFilter
from supportgate.audit.repository import decisions_page
from supportgate.db import create_db_engine, session_factory, transaction
from tests.services import temporary_database

pytestmark = pytest.mark.postgres


def _plan_cache_mode(session: Session) -> str:
    return str(session.execute(text("SHOW plan_cache_mode")).scalar_one())


def test_only_the_audit_plans_every_statement_for_its_values(
    postgres_url: str, postgres_template: str
) -> None:
    with temporary_database(postgres_url, template=postgres_template) as url:
        engine = create_db_engine(url)
        try:
            sessions = session_factory(engine)
            with transaction(sessions) as session:
                assert _plan_cache_mode(session) == "auto"
                decisions_page(session, AuditFilter(), before_seq=None, limit=10)
                assert _plan_cache_mode(session) == "force_custom_plan"
            with transaction(sessions) as session:
                assert _plan_cache_mode(session) == "auto"
        finally:
            engine.dispose()
