"""Anthropic Organization Analytics cost_report and usage_report responses.

Shape (anthropic SDK 2.14 models BetaAnalytics{Cost,Usage}ReportTimeBucket / *BucketedResult):
`{"data": [{"starting_at", "ending_at" (RFC 3339), "results": [...]}], "has_more", "next_page"}`.

Cost results carry `amount` and `list_amount` as decimal *strings* in fractional cents (minor
units), so they are read with Decimal and divided by 100 to land in USD like OpenAI's amounts.
Usage results split input into uncached / cache-read / cache-creation tokens; `input_tokens`
is their sum, matching OpenAI's definition (input_tokens includes cached tokens).
No real response sample exists: tests use constructed fixtures (tests/fixtures/api_spend/).
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa

from sources.api_spend._common import (
    RowError,
    build_table,
    check_period,
    currency_code,
    decimal_string,
    int_value,
    load_json,
    more_pages_pending,
    page_buckets,
    require,
    rfc3339,
)
from sources.common import ParseOutput, SourceFormat, head_text

CENTS_PER_UNIT = Decimal(100)

COST_SCHEMA = pa.schema(
    [
        ("provider", pa.string()),
        ("bucket_start", pa.timestamp("us")),
        ("bucket_end", pa.timestamp("us")),
        ("amount", pa.string()),
        ("list_amount", pa.string()),
        ("currency", pa.string()),
        ("line_item", pa.string()),
        ("cost_type", pa.string()),
        ("token_type", pa.string()),
        ("model", pa.string()),
        ("workspace_id", pa.string()),
        ("api_key_id", pa.string()),
        ("requests", pa.int64()),
        ("_source_line", pa.int64()),
    ]
)

USAGE_SCHEMA = pa.schema(
    [
        ("provider", pa.string()),
        ("bucket_start", pa.timestamp("us")),
        ("bucket_end", pa.timestamp("us")),
        ("model", pa.string()),
        ("api_key_id", pa.string()),
        ("batch", pa.bool_()),
        ("service_tier", pa.string()),
        ("input_tokens", pa.int64()),
        ("input_cached_tokens", pa.int64()),
        ("input_cache_write_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("num_requests", pa.int64()),
        ("_source_line", pa.int64()),
    ]
)


def _is_report(text: str) -> bool:
    compact = re.sub(r"\s+", "", text[:4096])
    return compact.startswith('{"data":[') and '"starting_at"' in text and '"results"' in text


def detect_cost_report(path: Path, head: bytes) -> bool:
    """An Anthropic cost_report: time buckets with `starting_at` and results with `list_amount`."""
    text = head_text(head)
    return _is_report(text) and '"list_amount"' in text


def detect_usage_report(path: Path, head: bytes) -> bool:
    """An Anthropic usage_report: time buckets whose results carry `uncached_input_tokens`."""
    text = head_text(head)
    return _is_report(text) and '"uncached_input_tokens"' in text and '"list_amount"' not in text


def _str(result: dict[str, Any], key: str) -> str | None:
    value = result.get(key)
    if value is not None and not isinstance(value, str):
        raise RowError("invalid_value", f"{key} is not a string", key, value)
    return value


def _cents_to_units(text: str | None) -> str | None:
    return None if text is None else format(Decimal(text) / CENTS_PER_UNIT, "f")


def _cost_row(result: dict[str, Any]) -> dict[str, Any]:
    amount = decimal_string(require(result, "amount", "cost result"), "amount")
    list_amount = decimal_string(result.get("list_amount"), "list_amount")
    return {
        "provider": "anthropic",
        "amount": _cents_to_units(amount),
        "list_amount": _cents_to_units(list_amount),
        "currency": currency_code(require(result, "currency", "cost result")),
        # The older Admin API cost_report had a free-text `description`; keep it as the line item.
        "line_item": _str(result, "description"),
        "cost_type": _str(result, "cost_type"),
        "token_type": _str(result, "token_type"),
        "model": _str(result, "model"),
        "workspace_id": _str(result, "workspace_id"),
        "api_key_id": _str(result, "api_key_id"),
        "requests": int_value(result.get("requests"), "requests"),
    }


def _usage_row(result: dict[str, Any]) -> dict[str, Any]:
    uncached = int_value(require(result, "uncached_input_tokens", "usage result"), "uncached_input_tokens")
    cache_read = int_value(result.get("cache_read_input_tokens"), "cache_read_input_tokens") or 0
    creation = result.get("cache_creation") or {}
    if not isinstance(creation, dict):
        raise RowError("invalid_value", "cache_creation is not an object", "cache_creation", creation)
    cache_write = sum(int_value(v, f"cache_creation.{k}") or 0 for k, v in creation.items())
    tier = _str(result, "service_tier")
    return {
        "provider": "anthropic",
        "model": _str(result, "model"),
        "api_key_id": _str(result, "api_key_id"),
        "batch": None if tier is None else tier == "batch",
        "service_tier": tier,
        "input_tokens": (uncached or 0) + cache_read + cache_write,
        "input_cached_tokens": cache_read,
        "input_cache_write_tokens": cache_write,
        "output_tokens": int_value(require(result, "output_tokens", "usage result"), "output_tokens"),
        "num_requests": int_value(result.get("requests"), "requests"),
    }


def _parse(path: Path, table: str, schema: pa.Schema, row_fn) -> ParseOutput:
    doc = load_json(Path(path))
    buckets = page_buckets(doc, Path(path))
    out = ParseOutput()
    rows: list[dict[str, Any]] = []
    index = 0
    for b_no, bucket in enumerate(buckets, start=1):
        results = bucket.get("results") if isinstance(bucket, dict) else None
        if not isinstance(results, list):
            index += 1
            out.rejects.append(RowError("missing_field", f"bucket {b_no} has no 'results' list", "results").reject(index))
            continue
        try:
            start = rfc3339(require(bucket, "starting_at", f"bucket {b_no}"), "starting_at")
            end = rfc3339(require(bucket, "ending_at", f"bucket {b_no}"), "ending_at")
            check_period(start, end)
            bucket_error = None
        except RowError as err:
            bucket_error = err
        for result in results:
            index += 1  # record index across the document, 1-based
            try:
                if bucket_error is not None:
                    raise bucket_error
                if not isinstance(result, dict):
                    raise RowError("invalid_record", "result is not an object", None, type(result).__name__)
                row = row_fn(result)
            except RowError as err:
                out.rejects.append(err.reject(index))
                continue
            row.update(bucket_start=start, bucket_end=end, _source_line=index)
            rows.append(row)
    has_more, next_page = more_pages_pending(doc)
    if has_more:
        out.warnings.append(
            f"report has has_more=true (next_page={next_page!r}): only part of the range is in this file"
        )
    out.tables[table] = build_table(rows, schema)
    return out


def parse_cost_report(path: Path) -> ParseOutput:
    """Parse an Anthropic cost_report response into `api_cost_buckets` (amounts in USD)."""
    return _parse(path, "api_cost_buckets", COST_SCHEMA, _cost_row)


def parse_usage_report(path: Path) -> ParseOutput:
    """Parse an Anthropic usage_report response into `api_usage_buckets`."""
    return _parse(path, "api_usage_buckets", USAGE_SCHEMA, _usage_row)


FORMATS = [
    SourceFormat(
        name="anthropic_cost_report",
        family="api_spend",
        detect=detect_cost_report,
        parse=parse_cost_report,
        tables=("api_cost_buckets",),
        description="Anthropic organization analytics cost_report (amounts in fractional cents) -> api_cost_buckets",
    ),
    SourceFormat(
        name="anthropic_usage_report",
        family="api_spend",
        detect=detect_usage_report,
        parse=parse_usage_report,
        tables=("api_usage_buckets",),
        description="Anthropic organization analytics usage_report -> api_usage_buckets",
    ),
]
