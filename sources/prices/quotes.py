"""Manual commercial quotes sheet (reserved terms, commitments, dedicated clusters) -> price_quotes.

Two layouts of the same sheet:
- CSV with one column per field (checklist fields flat, e.g. `interconnect`, `data_residency`);
- YAML (registry style): `quotes:` list whose entries may group the checklist fields under
  `topology`, `stack`, `commercial`, `governance`; lists are joined with '; '.
A quotes sheet is hand-written and small (tens of rows), so rows are validated in Python; the
CSV is still read by DuckDB so quoting/encoding follow the same reader as every other CSV.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text
from sources.prices._gpus import gpu_model_from_text
from sources.prices._rows import QUOTES, check_currency, check_price, num_text, parse_ts
from sources.registry.yaml_lines import compose_yaml_text, load_yaml_text

CSV_NAME = "price_quotes_csv"
YAML_NAME = "price_quotes_yaml"
CHECKLIST = {
    "topology": ("interconnect", "gpus_per_node", "node_form_factor", "storage_network"),
    "stack": ("driver_cuda", "orchestration", "serving_frameworks"),
    "commercial": ("idle_billed", "auto_shutdown", "usage_export_format", "egress_fees"),
    "governance": ("network_boundary", "data_residency", "compliance"),
}
TEXT_FIELDS = (
    "quote_id",
    "provider",
    "sku",
    "gpu_model",
    "region",
    "pricing_category",
    "currency",
    "price_unit",
    "cancellation_terms",
    "support_tier",
    "quoted_by",
) + tuple(f for group in CHECKLIST.values() for f in group)
SCHEMA = pa.schema(
    [(f, pa.string()) for f in TEXT_FIELDS]
    + [
        ("price", pa.string()),
        ("gpu_count", pa.string()),
        ("term_months", pa.string()),
        ("minimum_commitment", pa.string()),
        ("quoted_at", pa.timestamp("us")),
        ("_source_line", pa.int64()),
    ]
)
_REQUIRED = ("quote_id", "provider", "price", "currency", "quoted_at")


def detect_csv(path: Path, head: bytes) -> bool:
    """CSV header naming quote_id, price and quoted_at."""
    lines = head_text(head).splitlines()
    cols = {c.strip().strip('"') for c in lines[0].split(",")} if lines else set()
    return {"quote_id", "price", "quoted_at"} <= cols


def detect_yaml(path: Path, head: bytes) -> bool:
    """YAML document with a top-level `quotes:` list of entries carrying quote_id."""
    text = head_text(head)
    return bool(re.search(r"^quotes\s*:", text, re.MULTILINE) and re.search(r"\bquote_id\s*:", text))


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "; ".join(str(v) for v in value) or None
    if isinstance(value, dict):
        return "; ".join(f"{k}={v}" for k, v in value.items()) or None
    text = str(value).strip()
    return text or None


def _flatten(entry: dict[str, Any]) -> dict[str, Any]:
    flat = {k: v for k, v in entry.items() if k not in CHECKLIST or not isinstance(v, dict)}
    for group in CHECKLIST:
        if isinstance(entry.get(group), dict):
            flat.update(entry[group])
    return flat


def _validate(records: list[tuple[int, dict[str, Any]]], path: Path) -> ParseOutput:
    rows: list[dict[str, Any]] = []
    rejects: list[Reject] = []
    seen: set[str] = set()
    for line, rec in records:
        missing = [f for f in _REQUIRED if _text(rec.get(f)) is None]
        if missing:
            rejects.append(
                Reject(line, "missing_field", f"required field(s) {missing} empty", missing[0], None)
            )
            continue
        price, bad = check_price(_text(rec["price"]), line)
        currency, bad_cur = check_currency(rec["currency"], line)
        quoted_at = parse_ts(_text(rec["quoted_at"]))
        problem = bad or bad_cur
        if problem is None and quoted_at is None:
            problem = Reject(
                line,
                "invalid_timestamp",
                f"quoted_at {rec['quoted_at']!r} is not a timestamp",
                "quoted_at",
                _text(rec["quoted_at"]),
            )
        term = _text(rec.get("term_months"))
        if problem is None and term is not None and not re.fullmatch(r"\d+", term):
            problem = Reject(
                line, "non_numeric", f"term_months {term!r} is not a whole number", "term_months", term
            )
        commitment = _text(rec.get("minimum_commitment"))
        if problem is None and commitment is not None:
            try:
                if Decimal(commitment) < 0:
                    problem = Reject(
                        line,
                        "negative_commitment",
                        "minimum_commitment is negative",
                        "minimum_commitment",
                        commitment,
                    )
            except InvalidOperation:
                problem = Reject(
                    line,
                    "non_numeric",
                    f"minimum_commitment {commitment!r} is not a number",
                    "minimum_commitment",
                    commitment,
                )
        quote_id = _text(rec["quote_id"])
        if problem is None and quote_id in seen:
            problem = Reject(
                line, "duplicate_quote_id", f"quote_id {quote_id} appears twice", "quote_id", quote_id
            )
        if problem:
            rejects.append(problem)
            continue
        seen.add(quote_id)
        row = {f: _text(rec.get(f)) for f in TEXT_FIELDS}
        row.update(
            quote_id=quote_id,
            currency=currency,
            price=price,
            quoted_at=quoted_at,
            _source_line=line,
            provider=(row["provider"] or "").lower(),
            gpu_count=num_text(rec.get("gpu_count")),
            term_months=term,
            minimum_commitment=commitment,
            price_unit=row["price_unit"] or "hour",
        )
        # free text such as "8x H100 SXM" becomes the canonical id; unknown names stay as written
        row["gpu_model"] = gpu_model_from_text(row["gpu_model"]) or row["gpu_model"]
        rows.append(row)
    if not records:
        raise UnreadableFile(path, None, "quotes sheet has no quotes")
    table = pa.table({f.name: [r.get(f.name) for r in rows] for f in SCHEMA}, schema=SCHEMA)
    return ParseOutput(tables={QUOTES: table}, rejects=rejects)


def parse_csv(path: Path) -> ParseOutput:
    """Quotes CSV -> price_quotes."""
    path = Path(path)
    con = duckdb.connect()
    try:
        rel = con.execute(
            "select row_number() over () + 1 as _line, * from read_csv(?, header = true, all_varchar = true, delim = ',', quote = '\"')",
            [str(path)],
        )
        names = [d[0] for d in rel.description]
        records = [(r[0], dict(zip(names[1:], r[1:]))) for r in rel.fetchall()]
    except duckdb.Error as exc:
        raise UnreadableFile(path, None, f"cannot read quotes CSV: {exc}") from exc
    finally:
        con.close()
    return _validate(records, path)


def parse_yaml(path: Path) -> ParseOutput:
    """Quotes YAML (`quotes:` list) -> price_quotes; `_source_line` is the entry's line in the file."""
    path = Path(path)
    text = path.read_text(encoding="utf-8-sig")
    node = compose_yaml_text(text, path)  # anchors/aliases refused: no alias bomb reaches the loader
    doc = load_yaml_text(text, path)
    if not isinstance(doc, dict) or not isinstance(doc.get("quotes"), list):
        raise UnreadableFile(path, None, "not a quotes sheet: top-level 'quotes' list missing")
    quote_nodes = next(v for k, v in node.value if k.value == "quotes").value
    records = [
        (n.start_mark.line + 1, _flatten(entry if isinstance(entry, dict) else {}))
        for n, entry in zip(quote_nodes, doc["quotes"])
    ]
    return _validate(records, path)


FORMATS = [
    SourceFormat(CSV_NAME, "prices", detect_csv, parse_csv, "Manual commercial quotes sheet (CSV)"),
    SourceFormat(YAML_NAME, "prices", detect_yaml, parse_yaml, "Manual commercial quotes sheet (YAML)"),
]
