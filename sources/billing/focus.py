"""FOCUS 1.0-1.3 exports (CSV, CSV.gz, Parquet) -> billing_charges.

Columns are matched case-insensitively (`SkuPriceid` -> SkuPriceId); every non-FOCUS column
(the FOCUS sample's `Id`, `x_*` provider columns, FOCUS columns we do not carry) goes to x_extra.
The FOCUS version is not in the file; it is inferred from marker columns (mappings.py).
"""

from __future__ import annotations

from pathlib import Path

from sources.billing import mappings
from sources.billing.engine import Staged, connect, direct_columns, finish
from sources.billing.reader import header_keys_from_head, load_file
from sources.common import ParseOutput, SourceFormat, UnreadableFile


def detect(path: Path, head: bytes) -> bool:
    """A FOCUS header: BilledCost and ChargePeriodStart, and no CUR/OCI `lineItem/` columns.

    A semicolon-separated FOCUS header also matches, so `parse` can say "wrong delimiter".
    """
    keys = header_keys_from_head(path, head)
    if len(keys) == 1:
        only = next(iter(keys))
        return "billedcost" in only and "chargeperiodstart" in only
    return "billedcost" in keys and "chargeperiodstart" in keys and not any(k.startswith("lineitem/") for k in keys)


def infer_version(present: set[str]) -> str:
    """Newest FOCUS version whose marker columns appear (1.0 when none do)."""
    lower = {p.lower() for p in present}
    for version, markers in mappings.FOCUS_VERSION_MARKERS:
        if not markers or any(m.lower() in lower for m in markers):
            return version
    return "1.0"


def parse(path: Path) -> ParseOutput:
    """Parse a FOCUS CSV/CSV.gz/Parquet file into billing_charges."""
    path = Path(path)
    con = connect()
    raw = load_file(con, path)
    mapped, extra = direct_columns(raw)
    missing = [c for c in mappings.FOCUS_REQUIRED_COLUMNS if c not in mapped]
    if missing:
        raise UnreadableFile(path, 1, f"not a usable FOCUS file: mandatory columns missing: {', '.join(missing)}")
    all_names = set(raw.columns)
    version = infer_version(all_names)
    warnings = []
    absent = [c for c in mappings.FOCUS_MANDATORY_WARN if c not in mapped]
    if absent:
        warnings.append(f"FOCUS mandatory columns absent (loaded as NULL): {', '.join(absent)}")
    staged = Staged(
        exprs={c: col for c, col in mapped.items()},
        extra=extra,
        focus_version=version,
        source_format=FORMATS[0].name,
        warnings=warnings,
    )
    return finish(con, raw, staged)


FORMATS = [
    SourceFormat(
        name="focus",
        family="billing",
        detect=detect,
        parse=parse,
        description="FinOps FOCUS 1.0-1.3 cost and usage export (CSV, CSV.gz or Parquet)",
    )
]
