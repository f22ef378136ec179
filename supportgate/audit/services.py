"""GET /v1/audit: filtered decision pages, and the whole filtered history as CSV streamed in
keyset chunks, each read in its own short transaction, so memory stays flat. A decision
appended while it streams gets a higher seq and is left out: no row is missed or repeated.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.db import transaction
from supportgate.evaluations.views import DecisionPage
from supportgate.ledger.rows import decision_from_columns
from supportgate.pagination import check_limit, decode_seq_cursor, trim_page
from supportgate.threads import thread_twin

from . import repository
from .csv_export import csv_header, csv_rows
from .filters import AuditFilter

CSV_CHUNK = 1000


@dataclass(frozen=True, slots=True)
class CsvChunk:
    body: bytes
    next_before: int | None
    """The seq the next chunk reads below, or None after the last chunk."""


class AuditService:
    def __init__(self, sessions: sessionmaker[Session], *, csv_chunk: int = CSV_CHUNK) -> None:
        self._sessions = sessions
        self._csv_chunk = csv_chunk

    def page(self, where: AuditFilter, *, cursor: str | None, limit: int) -> DecisionPage:
        before = decode_seq_cursor(cursor)
        limit = check_limit(limit)
        with transaction(self._sessions) as session:
            rows = repository.decisions_page(session, where, before_seq=before, limit=limit + 1)
        rows, next_cursor = trim_page(rows, limit, lambda row: [row["seq"]])
        return DecisionPage(
            items=[decision_from_columns(row) for row in rows], next_cursor=next_cursor
        )

    page_in_thread = thread_twin(page)

    def csv_chunk(self, where: AuditFilter, before_seq: int | None) -> CsvChunk:
        with transaction(self._sessions) as session:
            rows = repository.decisions_page(
                session, where, before_seq=before_seq, limit=self._csv_chunk
            )
        full = len(rows) == self._csv_chunk
        return CsvChunk(body=csv_rows(rows), next_before=rows[-1]["seq"] if full else None)

    csv_chunk_in_thread = thread_twin(csv_chunk)

    async def csv(self, where: AuditFilter) -> AsyncIterator[bytes]:
        """The CSV body. The first chunk is read before this returns, so a database that
        cannot answer is a 503 rather than a response cut short."""
        first = await self.csv_chunk_in_thread(where, None)
        return self._csv_body(where, first)

    async def _csv_body(self, where: AuditFilter, chunk: CsvChunk) -> AsyncIterator[bytes]:
        yield csv_header()
        while True:
            if chunk.body:
                yield chunk.body
            if chunk.next_before is None:
                return
            chunk = await self.csv_chunk_in_thread(where, chunk.next_before)
