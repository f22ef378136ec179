"""Reports for `supportgate check`: each format a pure function of the checked manifests, the
problems that kept check from judging some input (part of the report), and the gate (`fail_on`)."""

from __future__ import annotations

from collections.abc import Callable

from supportgate.reports.github import render_github
from supportgate.reports.json_format import render_json
from supportgate.reports.markdown import render_markdown
from supportgate.reports.model import EXIT_CODES as EXIT_CODES
from supportgate.reports.model import FAIL_ON as FAIL_ON
from supportgate.reports.model import CheckedManifest as CheckedManifest
from supportgate.reports.model import FailOn as FailOn
from supportgate.reports.model import Problem as Problem
from supportgate.reports.model import Report as Report
from supportgate.reports.model import gate_failed as gate_failed
from supportgate.reports.model import summary_line as summary_line
from supportgate.reports.sarif import SarifOptions as SarifOptions
from supportgate.reports.sarif import render_sarif
from supportgate.reports.text import render_text


def _render_junit(report: Report) -> str:
    # xml.etree (and expat) only for the format that needs them: `check` starts faster.
    from supportgate.reports.junit import render_junit  # noqa: PLC0415

    return render_junit(report)


_RENDERERS: dict[str, Callable[[Report], str]] = {
    "text": render_text,
    "json": render_json,
    "sarif": render_sarif,
    "junit": _render_junit,
    "github": render_github,
    "markdown": render_markdown,
}
FORMATS: tuple[str, ...] = tuple(_RENDERERS)


def render(report: Report, fmt: str, sarif: SarifOptions | None = None) -> str:
    # `fmt` comes checked: the parser's choices (cli.py) name the option
    if fmt == "sarif":
        return render_sarif(report, sarif)
    return _RENDERERS[fmt](report)
