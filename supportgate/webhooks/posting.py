"""One delivery attempt's POST: to the address that was checked (targets.py), with the URL's
host in `Host` and as the TLS server name, within one total deadline (http_deadline.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from supportgate.errors import SupportgateError
from supportgate.http_deadline import Cutoff

from .targets import AllowList, delivery_address


class DeadlinePassed(SupportgateError):
    pass


@dataclass(frozen=True, slots=True)
class Answer:
    status_code: int
    retry_after: str | None


def post(
    client: httpx.Client,
    url: str,
    *,
    body: bytes,
    headers: dict[str, str],
    allow: AllowList,
    deadline: float,
) -> Answer:
    """Via the checked address; raises TargetRefused, DeadlinePassed or httpx's errors."""
    target = httpx.URL(url)
    host = target.raw_host.decode("ascii")
    port = target.port or (443 if target.scheme == "https" else 80)
    address = delivery_address(host, port, allow)
    extensions: dict[str, Any] = {}
    if address is not None:
        headers = {**headers, "host": target.netloc.decode("ascii")}
        if target.scheme == "https":
            extensions["sni_hostname"] = host
        target = target.copy_with(host=str(address))
    cutoff = Cutoff(deadline)
    extensions["trace"] = cutoff.trace
    try:
        with client.stream(
            "POST", target, content=body, headers=headers, extensions=extensions
        ) as response:
            return Answer(response.status_code, response.headers.get("retry-after"))
    except httpx.HTTPError as exc:
        if cutoff.passed:
            passed = f"no answer within the attempt's deadline of {deadline:g} s"
            raise DeadlinePassed(passed) from exc
        raise
    finally:
        cutoff.cancel()
