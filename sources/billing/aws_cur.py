"""AWS Cost and Usage Report, legacy format (`lineItem/UnblendedCost` style headers) -> FOCUS."""

from __future__ import annotations

from pathlib import Path

from sources.billing import mappings
from sources.billing.legacy import parse_legacy
from sources.billing.reader import header_keys_from_head
from sources.common import ParseOutput, SourceFormat

REQUIRED = ("lineItem/UnblendedCost", "lineItem/UsageStartDate", "lineItem/UsageEndDate", "lineItem/LineItemType")


def detect(path: Path, head: bytes) -> bool:
    """Header has lineItem/UnblendedCost and lineItem/UsageStartDate (CUR 1.0 naming)."""
    keys = header_keys_from_head(path, head)
    return "lineitem/unblendedcost" in keys and "lineitem/usagestartdate" in keys


def parse(path: Path) -> ParseOutput:
    """Parse a legacy CUR CSV/CSV.gz/Parquet into billing_charges (mapping: mappings.AWS_CUR)."""
    out, _ = parse_legacy(Path(path), mappings.AWS_CUR, "legacy-aws-cur", FORMATS[0].name, REQUIRED)
    return out


FORMATS = [
    SourceFormat(
        name="aws_cur_legacy",
        family="billing",
        detect=detect,
        parse=parse,
        description="AWS Cost and Usage Report, legacy CSV headers (lineItem/..., product/..., pricing/...)",
    )
]
