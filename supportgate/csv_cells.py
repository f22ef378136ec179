"""Every CSV the service writes (the audit export, the fleet report).

Cells are written so a spreadsheet reads them as text (OWASP, CSV injection): a cell that
starts with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, and the csv
module quotes any cell holding a comma, a quote or a line break (quotes doubled). Lines end
with CRLF (RFC 4180).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(text: str) -> str:
    return f"'{text}" if text.startswith(_FORMULA_STARTS) else text


def encode_lines(lines: Iterable[Iterable[str]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerows([safe_cell(cell) for cell in line] for line in lines)
    return buffer.getvalue().encode()
