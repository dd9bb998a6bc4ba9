"""LiteLLM model price catalog (`model_prices_and_context_window.json`).

One JSON object `{model_key: {litellm_provider, mode, input_cost_per_token, ...}}`. Prices are
USD per single token (~1e-7), read from the JSON text as Decimal and declared DECIMAL(38,18).
`sample_spec` is a documentation pseudo-entry and is skipped. Entries without per-token prices
(per-second, per-image or commitment pricing) are kept with null prices and counted in a warning.

The catalog carries no version: it is taken from the file name (`..._v1.55.0_...json`).
`observed_at` is when that catalog became the price list in force, i.e. the release date of
that litellm version (`RELEASE_DATES`). Override per file by putting `observed-YYYY-MM-DD` in
the file name, or call `parse_catalog(path, catalog_version=..., observed_at=...)`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from sources.api_spend._common import RowError, build_table, decimal_text, int_value, load_json
from sources.common import ParseOutput, SourceFormat, UnreadableFile, head_text

# Release dates of litellm versions on PyPI, *as known* (from the PyPI release history as
# remembered; NOT verified offline: the PyPI JSON API was unreachable when this was written).
# 1.55.0 shipped mid-December 2024. 1.110.2's date is unknown here, so it is left out: its
# rows take the landing time (`landed_at`) or NULL, with a warning, unless a date is supplied.
RELEASE_DATES: dict[str, datetime] = {
    "1.55.0": datetime(2024, 12, 13),
}

PRICE_COLUMNS = (
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_read_input_token_cost",
    "cache_creation_input_token_cost",
    "input_cost_per_token_batches",
    "output_cost_per_token_batches",
)

SCHEMA = pa.schema(
    [
        ("catalog_version", pa.string()),
        ("observed_at", pa.timestamp("us")),
        ("model_key", pa.string()),
        ("provider", pa.string()),
        ("mode", pa.string()),
        *[(c, pa.string()) for c in PRICE_COLUMNS],
        ("max_input_tokens", pa.int64()),
        ("max_output_tokens", pa.int64()),
        ("_source_line", pa.int64()),
    ]
)

_VERSION_IN_NAME = re.compile(r"v(\d+\.\d+\.\d+)")
_OBSERVED_IN_NAME = re.compile(r"observed[-_](\d{4})-?(\d{2})-?(\d{2})")


def detect(path: Path, head: bytes) -> bool:
    """A JSON object of model entries with `litellm_provider` and per-token prices."""
    text = head_text(head).lstrip()
    return text.startswith("{") and '"litellm_provider"' in text and '"input_cost_per_token"' in text


def version_from_name(path: Path) -> str | None:
    """`1.55.0` from `litellm_model_prices_v1.55.0_full.json`; None if the name has no version."""
    match = _VERSION_IN_NAME.search(Path(path).name)
    return match.group(1) if match else None


def observed_from_name(path: Path) -> datetime | None:
    """An explicit `observed-YYYY-MM-DD` in the file name overrides the release-date mapping."""
    match = _OBSERVED_IN_NAME.search(Path(path).name)
    if not match:
        return None
    try:
        return datetime(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None


def _entry_row(key: str, entry: dict[str, Any], warn: dict[str, int]) -> dict[str, Any]:
    provider = entry.get("litellm_provider")
    if provider is not None and not isinstance(provider, str):
        raise RowError("invalid_value", "litellm_provider is not a string", "litellm_provider", provider)
    row: dict[str, Any] = {"model_key": key, "provider": provider, "mode": entry.get("mode")}
    if row["mode"] is not None and not isinstance(row["mode"], str):
        row["mode"] = str(row["mode"])
    for col in PRICE_COLUMNS:
        row[col] = decimal_text(entry.get(col), col, allow_negative=False)
    if row["input_cost_per_token"] is None and row["output_cost_per_token"] is None:
        warn["no_token_price"] += 1
    for col in ("max_input_tokens", "max_output_tokens"):
        try:
            row[col] = int_value(entry.get(col), col)
        except RowError:
            # A context limit is descriptive; a malformed one nulls the value, not the price row.
            row[col] = None
            warn["bad_token_limit"] += 1
    return row


def parse_catalog(
    path: Path, *, catalog_version: str | None = None, observed_at: datetime | None = None
) -> ParseOutput:
    """Parse a LiteLLM price catalog into `api_model_prices`.

    `catalog_version` / `observed_at` override what the file name and `RELEASE_DATES` give.
    """
    path = Path(path)
    doc = load_json(path)
    if not isinstance(doc, dict):
        raise UnreadableFile(path, 1, "top level is not a JSON object of model entries")
    out = ParseOutput()
    version = catalog_version or version_from_name(path)
    observed = observed_at or observed_from_name(path) or (RELEASE_DATES.get(version) if version else None)
    if version is None:
        out.warnings.append("catalog version unknown (no vX.Y.Z in the file name): catalog_version is NULL")
    if observed is None:
        out.warnings.append(
            f"no release date known for litellm {version!r}: observed_at is NULL "
            "(add observed-YYYY-MM-DD to the file name to set it)"
        )
    warn = {"no_token_price": 0, "bad_token_limit": 0}
    rows: list[dict[str, Any]] = []
    for index, (key, entry) in enumerate(doc.items(), start=1):
        if key == "sample_spec":
            continue  # documentation pseudo-entry: its numeric fields are prose
        try:
            if not isinstance(entry, dict):
                raise RowError("invalid_record", "model entry is not an object", key, type(entry).__name__)
            row = _entry_row(key, entry, warn)
        except RowError as err:
            out.rejects.append(err.reject(index))
            continue
        row.update(catalog_version=version, observed_at=observed, _source_line=index)
        rows.append(row)
    if warn["no_token_price"]:
        out.warnings.append(
            f"{warn['no_token_price']} entries have no per-token input/output price "
            "(per-second, per-image or commitment pricing): kept with NULL prices"
        )
    if warn["bad_token_limit"]:
        out.warnings.append(f"{warn['bad_token_limit']} max_*_tokens values were not integers: set to NULL")
    out.tables["api_model_prices"] = build_table(rows, SCHEMA)
    return out


def parse(path: Path, landed_at: datetime | None = None) -> ParseOutput:
    """`SourceFormat.parse`: version and observed time from the file name / release-date map.

    The pipeline passes the landing time as `landed_at`; it is used for `observed_at` only when
    neither the file name nor `RELEASE_DATES` gives one (we saw that catalog at least then), with a
    warning saying so.
    """
    path = Path(path)
    version = version_from_name(path)
    if observed_from_name(path) or (version and version in RELEASE_DATES) or landed_at is None:
        return parse_catalog(path)
    landed = landed_at.astimezone(UTC).replace(tzinfo=None) if landed_at.tzinfo else landed_at
    out = parse_catalog(path, observed_at=landed)
    out.warnings.append(f"no release date known for litellm {version!r}: observed_at = landing time {landed.isoformat()}")
    return out


FORMATS = [
    SourceFormat(
        name="litellm_model_prices",
        family="api_spend",
        detect=detect,
        parse=parse,
        tables=("api_model_prices",),
        description="LiteLLM model_prices_and_context_window.json (one litellm version) -> api_model_prices",
    )
]
