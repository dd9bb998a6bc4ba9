"""Oracle Cloud (OCI) cost report CSV (`lineItem/referenceNo`, `cost/myCost`, `tags/<ns>.<key>`) -> FOCUS."""

from __future__ import annotations

from pathlib import Path

from sources.billing import mappings
from sources.billing.legacy import parse_legacy
from sources.billing.reader import header_keys_from_head
from sources.common import ParseOutput, SourceFormat

REQUIRED = ("cost/myCost", "lineItem/intervalUsageStart", "lineItem/intervalUsageEnd")


def detect(path: Path, head: bytes) -> bool:
    """Header has lineItem/referenceNo and cost/myCost."""
    keys = header_keys_from_head(path, head)
    return "lineitem/referenceno" in keys and "cost/mycost" in keys


def parse(path: Path) -> ParseOutput:
    """Parse an OCI cost report into billing_charges (mapping: mappings.OCI).

    Every `tags/<namespace>.<key>` column becomes one key `<namespace>.<key>` of Tags.
    """
    out, _ = parse_legacy(Path(path), mappings.OCI, "legacy-oci-cost-report", FORMATS[0].name, REQUIRED)
    return out


FORMATS = [
    SourceFormat(
        name="oci_cost_report",
        family="billing",
        detect=detect,
        parse=parse,
        description="Oracle Cloud Infrastructure cost report CSV (reports/cost-csv)",
    )
]
