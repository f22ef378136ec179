"""HTTP: GET /v1/audit, the decision history filtered, as JSON pages or streamed CSV."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated

import anyio.to_thread
from litestar import Controller, get
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIResponse, Operation, Schema
from litestar.openapi.spec.enums import OpenAPIType
from litestar.params import QueryParameter
from litestar.response import Stream

from supportgate.dependencies import Part
from supportgate.evaluations.views import DecisionPage
from supportgate.http_paging import Cursor, Kind, Name
from supportgate.manifests.decision import VERDICTS
from supportgate.openapi import body
from supportgate.pagination import DEFAULT_LIMIT, MAX_LIMIT

from .csv_export import CSV_COLUMNS
from .filters import FORMATS, AuditFilter, parse_format
from .services import AuditService

VerdictParam = Annotated[str | None, QueryParameter(enum=list(VERDICTS), description="verdict")]
Rule = Annotated[
    str | None,
    QueryParameter(description="a rule id among the violations, any severity (`port.pinning`)"),
]
Since = Annotated[
    str | None,
    QueryParameter(
        format="date-time", description="evaluated at or after (RFC 3339 with a time zone)"
    ),
]
Until = Annotated[
    str | None,
    QueryParameter(format="date-time", description="evaluated before (RFC 3339 with a time zone)"),
]
MatrixVersion = Annotated[str | None, QueryParameter(description="support matrix version")]
Format = Annotated[
    str,
    QueryParameter(
        name="format",
        enum=list(FORMATS),
        description="`json`: cursor pages; `csv`: every matching decision, streamed",
    ),
]
Limit = Annotated[int, QueryParameter(ge=1, le=MAX_LIMIT, description="page size (JSON only)")]
CSV_MEDIA_TYPE = "text/csv; charset=utf-8"
CSV_HEADER = ",".join(CSV_COLUMNS)


@dataclass(eq=False)  # a dataclass, so that its __init__ calls __post_init__
class AuditOperation(Operation):
    """The 200 answer is a DecisionPage as JSON, or CSV text with `format=csv`."""

    def __post_init__(self) -> None:
        ok = (self.responses or {}).get("200")
        if isinstance(ok, OpenAPIResponse) and ok.content is not None:
            ok.content["text/csv"] = OpenAPIMediaType(
                schema=Schema(type=OpenAPIType.STRING, description=f"columns: {CSV_HEADER}")
            )


class AuditController(Controller):
    path = "/v1/audit"
    tags = ["audit"]  # noqa: RUF012 - Litestar reads class attributes

    @get(
        "/",
        opt={"role": "procurement"},
        summary="Decisions, newest first, filtered; cursor pages, or CSV with format=csv",
        operation_class=AuditOperation,
        responses={200: body(DecisionPage, "A page of decisions (JSON), or all of them (CSV)")},
    )
    async def search(
        self,
        audit: Part[AuditService],
        *,
        kind: Kind = None,
        name: Name = None,
        verdict: VerdictParam = None,
        rule: Rule = None,
        since: Since = None,
        until: Until = None,
        matrix_version: MatrixVersion = None,
        output: Format = "json",
        cursor: Cursor = None,
        limit: Limit = DEFAULT_LIMIT,
    ) -> DecisionPage | Stream:
        where = AuditFilter.parse(
            kind=kind,
            name=name,
            verdict=verdict,
            rule=rule,
            since=since,
            until=until,
            matrix_version=matrix_version,
        )
        if parse_format(output) == "csv":
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            return Stream(
                await audit.csv(where),
                media_type=CSV_MEDIA_TYPE,
                headers={  # Litestar 2.25 gives a Stream the handler's media type: set it here
                    "Content-Type": CSV_MEDIA_TYPE,
                    "Content-Disposition": f'attachment; filename="supportgate-audit-{stamp}.csv"',
                },
            )
        return await anyio.to_thread.run_sync(lambda: audit.page(where, cursor=cursor, limit=limit))
