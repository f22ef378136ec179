"""The header that makes a response a download (CSV exports, the console's OSCAL document)."""

from __future__ import annotations


def attachment(filename: str) -> dict[str, str]:
    """Content-Disposition for a response the browser saves as `filename`."""
    return {"Content-Disposition": f'attachment; filename="{filename}"'}
