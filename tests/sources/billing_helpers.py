"""Detection helper for billing tests that does not import other families' modules."""

from __future__ import annotations

from pathlib import Path

from sources.billing import aws_cur, azure_export, focus, oci_cost
from sources.common import read_head

BILLING_FORMATS = [*aws_cur.FORMATS, *azure_export.FORMATS, *focus.FORMATS, *oci_cost.FORMATS]


def billing_format(path: Path) -> str | None:
    """Name of the ONE billing format whose detector accepts the file (asserts no overlap)."""
    head = read_head(path)
    hits = [f.name for f in BILLING_FORMATS if f.detect(path, head)]
    assert len(hits) <= 1, f"{path}: several billing detectors match: {hits}"
    return hits[0] if hits else None
