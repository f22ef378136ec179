"""HTTP: GET /v1/audit (JSON pages or streamed CSV), and the verifiable log (CONTRACT 6)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated

from litestar import Controller, Response, Router, get
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import PathParameter, QueryParameter
from litestar.response import Stream

from supportgate.dependencies import Part, served
from supportgate.errors import NotFound
from supportgate.evaluations.views import DecisionPage
from supportgate.http_download import attachment
from supportgate.http_paging import Cursor, Kind, Name
from supportgate.manifests.decision import VERDICTS
from supportgate.openapi import body, csv_operation, error
from supportgate.pagination import DEFAULT_LIMIT, MAX_LIMIT, check_choice

from .csv_export import CSV_COLUMNS
from .filters import FORMATS, AuditFilter
from .proofs import ProofService
from .services import AuditService
from .views import ConsistencyProof, InclusionProof, LogEntry

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
LeafIndexPath = Annotated[int, PathParameter(ge=0, description="an entry's 0-based position")]
LeafIndex = Annotated[int, QueryParameter(ge=0, description="the entry's 0-based position")]
TreeSize = Annotated[
    int,
    QueryParameter(
        ge=0,
        description="the tree's size, at most the log's; check the proof against a signed "
        "checkpoint of this size (GET /v1/audit/checkpoint gives the latest)",
    ),
]
First = Annotated[int, QueryParameter(ge=0, description="the earlier tree size")]
Second = Annotated[int, QueryParameter(ge=0, description="the later tree size, at most the log's")]
CSV_MEDIA_TYPE = "text/csv; charset=utf-8"
TEXT_MEDIA_TYPE = "text/plain"  # Litestar adds "; charset=utf-8"


def text(description: str) -> ResponseSpec:
    """A 200 answer in text/plain. (The handler's own media type stays JSON: Litestar gives
    it to the handler's error answers too, whose bodies are JSON.)"""
    return ResponseSpec(
        data_container=str,
        media_type=TEXT_MEDIA_TYPE,
        description=description,
        generate_examples=False,
    )


def csv_download(body: AsyncIterator[bytes]) -> Stream:
    """The API's and the console's CSV download, named for when it was asked for."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return Stream(
        body,
        media_type=CSV_MEDIA_TYPE,
        headers={  # Litestar 2.25 gives a Stream the handler's media type: set it here
            "Content-Type": CSV_MEDIA_TYPE,
            **attachment(f"supportgate-audit-{stamp}.csv"),
        },
    )


class AuditController(Controller):
    path = "/v1/audit"
    tags = ["audit"]  # noqa: RUF012 - Litestar reads class attributes

    @get(
        "/",
        opt={"role": "procurement"},
        summary="Decisions, newest first, filtered; cursor pages, or CSV with format=csv",
        operation_class=csv_operation(CSV_COLUMNS),
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
        check_choice("format", output, FORMATS)
        if output == "csv":
            return csv_download(await audit.csv(where))
        return await audit.page_in_thread(where, cursor=cursor, limit=limit)

    @get(
        "/checkpoint",
        opt={"role": "procurement"},
        summary="The latest signed checkpoint of the log (a C2SP tlog-checkpoint signed note)",
        responses={
            200: text("The checkpoint: origin, tree size, base64 root, a blank line, signatures"),
            404: error(404),
        },
    )
    async def checkpoint(self, proofs: Part[ProofService]) -> Response[str]:
        note = await proofs.checkpoint_in_thread()
        if note is None:
            raise NotFound("no checkpoint is signed yet", field="checkpoint")
        return Response(note, media_type=TEXT_MEDIA_TYPE)

    @get(
        "/verifier-key",
        opt={"role": "procurement"},
        summary="The verifier key of the checkpoints' signatures",
        responses={200: text("The verifier key, <name>+<hash>+<base64>, and a newline")},
    )
    async def verifier_key(self, proofs: Part[ProofService]) -> Response[str]:
        return Response(proofs.verifier_key() + "\n", media_type=TEXT_MEDIA_TYPE)

    @get(
        "/entries/{leaf_index:int}",
        opt={"role": "procurement"},
        summary="One entry of the log: the exact text hashed into its leaf",
    )
    async def entry(self, proofs: Part[ProofService], leaf_index: LeafIndexPath) -> LogEntry:
        return await proofs.entry_in_thread(leaf_index)

    @get(
        "/proof/inclusion",
        opt={"role": "procurement"},
        summary="The inclusion proof of one entry in the tree of tree_size entries",
    )
    async def inclusion(
        self, proofs: Part[ProofService], *, leaf_index: LeafIndex, tree_size: TreeSize
    ) -> InclusionProof:
        return await proofs.inclusion(leaf_index, tree_size)

    @get(
        "/proof/consistency",
        opt={"role": "procurement"},
        summary="The consistency proof that the tree of `second` entries extends that of `first`",
    )
    async def consistency(
        self, proofs: Part[ProofService], *, first: First, second: Second
    ) -> ConsistencyProof:
        return await proofs.consistency(first, second)


def routes(audit: AuditService, proofs: ProofService) -> Router:
    return served(AuditController, audit=audit, proofs=proofs)
