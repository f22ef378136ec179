"""An https source, read with httpx (the service's HTTP client already), as
docs/matrix-sources.md describes (ETags, no redirects, no SSRF check: the URL is the
operator's). The whole exchange has one deadline (supportgate/http_deadline.py), so a server
that stalls or trickles its answer cannot hold the poll."""

from __future__ import annotations

import hashlib
import ssl
from pathlib import Path
from typing import Any

import httpx

from supportgate.http_deadline import Cutoff
from supportgate.manifests import format_of

from .fetch import MAX_BYTES, Fetched, SourceUnreachable, Unchanged
from .spec import HttpsSource

DIGEST_PREFIX = "sha256:"


class HttpsReader:
    def __init__(self, source: HttpsSource, *, deadline: float, ca_file: Path | None) -> None:
        self._source = source
        self._deadline = deadline
        self._verify: ssl.SSLContext | bool = (
            ssl.create_default_context(cafile=str(ca_file)) if ca_file is not None else True
        )

    def read(self, known: str | None) -> Fetched | Unchanged:
        headers = {"accept": "application/yaml, application/json;q=0.9, */*;q=0.5"}
        if known is not None and not known.startswith(DIGEST_PREFIX):
            headers["if-none-match"] = known
        cutoff = Cutoff(self._deadline)
        extensions: dict[str, Any] = {"trace": cutoff.trace}
        try:
            with (
                httpx.Client(
                    verify=self._verify,
                    timeout=self._deadline,
                    follow_redirects=False,
                    trust_env=False,
                    limits=httpx.Limits(max_keepalive_connections=0),
                ) as client,
                client.stream(
                    "GET", self._source.url, headers=headers, extensions=extensions
                ) as response,
            ):
                if response.status_code == httpx.codes.NOT_MODIFIED and known is not None:
                    return Unchanged(known)
                if response.status_code != httpx.codes.OK:
                    raise SourceUnreachable(
                        f"{self._source.shown} answered {response.status_code}"
                        f" {response.reason_phrase}".rstrip()
                    )
                body = _body(response, self._source.shown)
                etag = response.headers.get("etag")
        except httpx.HTTPError as exc:
            if cutoff.passed:
                raise SourceUnreachable(
                    f"{self._source.shown}: no answer within the deadline of {self._deadline:g} s"
                ) from exc
            problem = str(exc) or type(exc).__name__
            raise SourceUnreachable(f"{self._source.shown}: {problem[:500]}") from exc
        finally:
            cutoff.cancel()
        revision = etag or DIGEST_PREFIX + hashlib.sha256(body).hexdigest()
        if known is not None and revision == known:
            return Unchanged(known)
        return Fetched(
            revision=revision, content=body, fmt=format_of(httpx.URL(self._source.url).path)
        )


def _body(response: httpx.Response, shown: str) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_BYTES:
            raise SourceUnreachable(f"{shown}: the document is larger than {MAX_BYTES} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
