"""Reports for `supportgate check`: the same decisions as text, JSON, SARIF, JUnit or GitHub.

    render(results, "sarif", fail_on="rejected") -> str

Every format is a pure function of the checked manifests and the gate (`fail_on`); none does
I/O. Each returns the whole document ending in a newline, for the caller to write as is.
Line numbers come from `locate()` on the text of each file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial

from supportgate.errors import UsageError
from supportgate.reports.github import render_github
from supportgate.reports.json_format import render_json
from supportgate.reports.junit import render_junit
from supportgate.reports.locate import locate
from supportgate.reports.model import FAIL_ON, CheckedManifest, FailOn, gate_failed, summary_line
from supportgate.reports.sarif import render_sarif
from supportgate.reports.text import render_text

__all__ = [
    "FAIL_ON",
    "FORMATS",
    "CheckedManifest",
    "FailOn",
    "gate_failed",
    "locate",
    "render",
    "summary_line",
]

_Renderer = Callable[[Sequence[CheckedManifest], FailOn], str]

_RENDERERS: dict[str, _Renderer] = {
    "text": render_text,
    "json": render_json,
    "sarif": render_sarif,
    "junit": render_junit,
    "github": render_github,
}
FORMATS: tuple[str, ...] = tuple(_RENDERERS)


def render(
    results: Sequence[CheckedManifest],
    fmt: str,
    *,
    fail_on: FailOn,
    rule_titles: Mapping[str, str] | None = None,
) -> str:
    """`results` in format `fmt` (one of `FORMATS`); the gate fails on `fail_on` and worse.

    `rule_titles` (rule id -> title, from the policies' METADATA) names the rules in SARIF.
    """
    renderer = _RENDERERS.get(fmt)
    if fmt == "sarif":
        renderer = partial(render_sarif, rule_titles=rule_titles or {})
    if renderer is None:
        raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fail_on not in FAIL_ON:
        raise UsageError(f"unknown --fail-on {fail_on!r}; choose one of {', '.join(FAIL_ON)}")
    return renderer(results, fail_on)
