"""AWS Cost and Usage Report -> FOCUS, in both of AWS's column namings.

- `aws_cur_legacy`: CUR 1.0 as CSV (`lineItem/UnblendedCost`, tags one column each: `resourceTags/user:team`).
- `aws_cur_snake`: the same columns in AWS's snake case, as CUR 2.0 (Data Exports) writes them and as CUR 1.0
  writes them in Parquet for Athena (`line_item_unblended_cost`, `savings_plan_savings_plan_a_r_n`). Tags are
  CUR 2.0's `resource_tags` map (JSON text in a CSV) or Athena's `resource_tags_user_<key>` columns; the
  `user_` AWS puts before every user-defined tag key is dropped, as `user:` is for CUR 1.0 (reference/tags.py).
One mapping (mappings.AWS_CUR) serves both: the snake case is derived from the CUR 1.0 names by AWS's rule.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sources.billing import mappings
from sources.billing.legacy import parse_legacy
from sources.billing.reader import header_keys_from_head
from sources.common import ParseOutput, SourceFormat

REQUIRED = ("lineItem/UnblendedCost", "lineItem/UsageStartDate", "lineItem/UsageEndDate", "lineItem/LineItemType")
_CAPITAL = re.compile(r"(?<!^)([A-Z])")
_PLACEHOLDER = re.compile(r"\[\[([^\]]+)\]\]")


def snake_name(name: str) -> str:
    """A CUR 1.0 column in AWS's snake case: each part's capitals start a word, `/` joins the parts
    (`lineItem/UnblendedCost` -> `line_item_unblended_cost`, `savingsPlan/SavingsPlanARN` ->
    `savings_plan_savings_plan_a_r_n`, `product/regionCode` -> `product_region_code`)."""
    return "_".join(_CAPITAL.sub(r"_\1", part).lower() for part in name.split("/"))


def _snake_spec(spec: Any) -> Any:
    """A mapping spec with every CUR 1.0 name (`a|b` alternatives, `[[a|b]]` in SQL) in snake case."""
    def names(text: str) -> str:
        return "|".join(snake_name(n) for n in text.split("|"))
    if isinstance(spec, str):
        return names(spec)
    if "sql" in spec:
        return {"sql": _PLACEHOLDER.sub(lambda m: f"[[{names(m.group(1))}]]", spec["sql"])}
    return spec


AWS_CUR_SNAKE: dict[str, Any] = {
    **{k: _snake_spec(v) for k, v in mappings.AWS_CUR.items() if not k.startswith("_")},
    "_tags_prefix": "resource_tags_user_",  # Athena's one column per user-defined tag
    "_tags_map": ("resource_tags", "user_"),  # CUR 2.0's map column, and the key prefix AWS adds
}
SNAKE_REQUIRED = tuple(_snake_spec(r) for r in REQUIRED)


def detect(path: Path, head: bytes) -> bool:
    """Header has lineItem/UnblendedCost and lineItem/UsageStartDate (CUR 1.0 naming)."""
    keys = header_keys_from_head(path, head)
    return "lineitem/unblendedcost" in keys and "lineitem/usagestartdate" in keys


def detect_snake(path: Path, head: bytes) -> bool:
    """Header has line_item_unblended_cost and line_item_usage_start_date (CUR 2.0, or CUR for Athena)."""
    keys = header_keys_from_head(path, head)
    return "line_item_unblended_cost" in keys and "line_item_usage_start_date" in keys


def parse(path: Path) -> ParseOutput:
    """Parse a legacy CUR CSV/CSV.gz/Parquet into billing_charges (mapping: mappings.AWS_CUR)."""
    out, _ = parse_legacy(Path(path), mappings.AWS_CUR, "legacy-aws-cur", FORMATS[0].name, REQUIRED)
    return out


def parse_snake(path: Path) -> ParseOutput:
    """Parse a CUR 2.0 (or Athena CUR) CSV/CSV.gz/Parquet into billing_charges (AWS_CUR_SNAKE)."""
    out, _ = parse_legacy(Path(path), AWS_CUR_SNAKE, "legacy-aws-cur-snake", FORMATS[1].name, SNAKE_REQUIRED)
    return out


FORMATS = [
    SourceFormat(
        name="aws_cur_legacy",
        family="billing",
        detect=detect,
        parse=parse,
        description="AWS Cost and Usage Report, legacy CSV headers (lineItem/..., product/..., pricing/...)",
    ),
    SourceFormat(
        name="aws_cur_snake",
        family="billing",
        detect=detect_snake,
        parse=parse_snake,
        description="AWS Cost and Usage Report in snake case: CUR 2.0 (Data Exports), or CUR 1.0 in Parquet for Athena",
    ),
]
