"""Every CSV the service writes: a cell that starts as a formula would gets a leading `'`, so
a spreadsheet reads it as text (OWASP, CSV injection); lines end with CRLF (RFC 4180).
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
