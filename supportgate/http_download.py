"""The header that makes a response a download (CSV exports, the console's OSCAL document)."""

from __future__ import annotations


def attachment(filename: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{filename}"'}
