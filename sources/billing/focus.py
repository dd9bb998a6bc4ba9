"""FOCUS 1.0-1.3 exports (CSV, CSV.gz, Parquet) -> billing_charges.

Columns are matched case-insensitively (`SkuPriceid` -> SkuPriceId); every non-FOCUS column
(the FOCUS sample's `Id`, `x_*` provider columns, FOCUS columns we do not carry) goes to x_extra.
The FOCUS version is not in the file; it is inferred from marker columns (mappings.py).
"""

from __future__ import annotations

from pathlib import Path

from sources.billing import mappings
from sources.billing.engine import Staged, connect, direct_columns, finish
from sources.billing.focus_csv import parse_focus_csv
from sources.billing.gates import gate
from sources.billing.reader import PARQUET_MAGIC, RawFile, header_key, header_keys_from_head, load_file
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


def _stage(path: Path, raw: RawFile) -> Staged:
    """FOCUS column -> source column (case-insensitive), version, absent-column warnings."""
    mapped, extra = direct_columns(raw)
    canonical = {c.lower(): c for c in mappings.FOCUS_EXTRA_COLUMNS}
    extra = {canonical.get(header_key(name), name): col for name, col in extra.items()}
    if "ProviderName" not in mapped and "ServiceProviderName" in extra:
        # FOCUS 1.3 deprecates ProviderName for ServiceProviderName: a file with only the new name
        # still tells the ledger (which keys on ProviderName) who provided the service.
        mapped["ProviderName"] = extra["ServiceProviderName"]
    missing = [c for c in mappings.FOCUS_REQUIRED_COLUMNS if c not in mapped]
    if missing:
        raise UnreadableFile(path, 1, f"not a usable FOCUS file: mandatory columns missing: {', '.join(missing)}")
    version = infer_version(set(raw.columns))
    warnings = []
    absent = [c for c in mappings.FOCUS_MANDATORY_WARN if c not in mapped]
    if absent:
        warnings.append(f"FOCUS mandatory columns absent (loaded as NULL): {', '.join(absent)}")
    return Staged(
        exprs={c: col for c, col in mapped.items()},
        extra=extra,
        focus_version=version,
        source_format=FORMATS[0].name,
        warnings=warnings,
    )


def _parse_general(path: Path) -> ParseOutput:
    """All-VARCHAR staging + set-based typing (`engine.finish`): Parquet and odd CSV layouts."""
    con = connect()
    raw = load_file(con, path)
    return finish(con, raw, _stage(path, raw))


def parse(path: Path) -> ParseOutput:
    """Parse a FOCUS CSV/CSV.gz/Parquet file into billing_charges.

    CSV takes the one-pass typed read of `focus_csv.py` (which hands the rare layouts it does
    not handle to the general path); Parquet takes the general path. Then the load-time gates
    (`gates.py`: implausible amounts quarantined, a file without currency named).
    """
    path = Path(path)
    with open(path, "rb") as fh:
        if fh.read(4) == PARQUET_MAGIC:
            return gate(_parse_general(path))
    return gate(parse_focus_csv(path, lambda raw: _stage(path, raw), _parse_general))


def near_miss(path: Path, head: bytes) -> str | None:
    """Google Cloud's own billing exports (the console's cost table CSV, the BigQuery standard export saved as
    CSV: `Service description`, `service.description` or `service_description`, and the SKU's): not mapped
    here, since Google Cloud writes FOCUS itself."""
    keys = {k.replace("_", " ").replace(".", " ") for k in header_keys_from_head(path, head)}
    if {"service description", "sku description"} <= keys:
        return ("it looks like a Google Cloud billing export (the console's cost table or the BigQuery standard "
                "export), which is not mapped here: export FOCUS instead (Google Cloud's FOCUS BigQuery view), "
                "as CSV or Parquet")
    return None


FORMATS = [
    SourceFormat(
        name="focus",
        family="billing",
        detect=detect,
        parse=parse,
        description="FinOps FOCUS 1.0-1.3 cost and usage export (CSV, CSV.gz or Parquet)",
        near_miss=near_miss,
    )
]
