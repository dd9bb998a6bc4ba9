"""OpenAI organization Costs and Usage (completions) API pages.

`GET /v1/organization/costs` and `GET /v1/organization/usage/completions` return
`{"object": "page", "data": [bucket...], "has_more", "next_page"}`; each bucket is
`{"object": "bucket", "start_time", "end_time" (Unix seconds, UTC), "results": [...]}`.
A file is either one raw page or the merged pages `fetch.py` writes (same shape, plus
`"endpoint"`). Cost amounts are JSON numbers read as Decimal; currency 'usd' -> 'USD'.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa

from sources.api_spend._common import (
    RowError,
    build_table,
    check_period,
    currency_code,
    decimal_text,
    int_value,
    load_json,
    more_pages_pending,
    page_buckets,
    require,
    unix_seconds,
)
from sources.common import ParseOutput, SourceFormat, head_text

COST_RESULT = "organization.costs.result"
COMPLETIONS_RESULT = "organization.usage.completions.result"

COST_SCHEMA = pa.schema(
    [
        ("provider", pa.string()),
        ("bucket_start", pa.timestamp("us")),
        ("bucket_end", pa.timestamp("us")),
        ("amount", pa.string()),
        ("currency", pa.string()),
        ("line_item", pa.string()),
        ("project_id", pa.string()),
        ("api_key_id", pa.string()),
        ("_source_line", pa.int64()),
    ]
)

USAGE_SCHEMA = pa.schema(
    [
        ("provider", pa.string()),
        ("bucket_start", pa.timestamp("us")),
        ("bucket_end", pa.timestamp("us")),
        ("model", pa.string()),
        ("project_id", pa.string()),
        ("api_key_id", pa.string()),
        ("user_id", pa.string()),
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


def _is_page(text: str) -> bool:
    """The document itself is a page (first key `object: page`, or `endpoint` in merged pages).

    Checking the *first* key keeps documentation bundles that merely embed example pages
    (e.g. openai_usage_costs_all_endpoints_examples.json) from matching.
    """
    compact = re.sub(r"\s+", "", text[:4096])
    return compact.startswith(('{"object":"page"', '{"endpoint":"/organization/'))


def detect_costs(path: Path, head: bytes) -> bool:
    """An OpenAI costs page: a JSON `page` whose results are `organization.costs.result`."""
    text = head_text(head)
    return _is_page(text) and (COST_RESULT in text or '"endpoint": "/organization/costs"' in text)


def detect_usage_completions(path: Path, head: bytes) -> bool:
    """An OpenAI usage page of the completions endpoint."""
    text = head_text(head)
    return _is_page(text) and (
        COMPLETIONS_RESULT in text or '"endpoint": "/organization/usage/completions"' in text
    )


def _optional_str(result: dict[str, Any], key: str) -> str | None:
    value = result.get(key)
    if value is not None and not isinstance(value, str):
        raise RowError("invalid_value", f"{key} is not a string", key, value)
    return value


def _walk(path: Path, expected_object: str, row_fn) -> tuple[ParseOutput, list[dict[str, Any]]]:
    """Walk buckets/results, applying `row_fn(bucket_start, bucket_end, result)` per result."""
    doc = load_json(path)
    buckets = page_buckets(doc, path)
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
            start = unix_seconds(require(bucket, "start_time", f"bucket {b_no}"), "start_time")
            end = unix_seconds(require(bucket, "end_time", f"bucket {b_no}"), "end_time")
            check_period(start, end)
            bucket_error = None
        except RowError as err:
            bucket_error = err
        for result in results:
            index += 1  # record index: results numbered across the whole document, 1-based
            try:
                if bucket_error is not None:
                    raise bucket_error
                obj = result.get("object") if isinstance(result, dict) else None
                if obj is not None and obj != expected_object:
                    raise RowError("unexpected_object", f"result object is {obj!r}", "object", obj)
                row = row_fn(start, end, result)
            except RowError as err:
                out.rejects.append(err.reject(index))
                continue
            row["_source_line"] = index
            rows.append(row)
    has_more, next_page = more_pages_pending(doc)
    if has_more:
        out.warnings.append(
            f"page has has_more=true (next_page={next_page!r}): this file holds only part "
            "of the requested range; use sources/api_spend/fetch.py to collect every page"
        )
    return out, rows


def _cost_row(start, end, result: dict[str, Any]) -> dict[str, Any]:
    amount = require(result, "amount", "cost result")
    value = require(amount, "value", "amount")
    return {
        "provider": "openai",
        "bucket_start": start,
        "bucket_end": end,
        "amount": decimal_text(value, "amount.value"),
        "currency": currency_code(require(amount, "currency", "amount"), "amount.currency"),
        "line_item": _optional_str(result, "line_item"),
        "project_id": _optional_str(result, "project_id"),
        "api_key_id": _optional_str(result, "api_key_id"),
    }


def _usage_row(start, end, result: dict[str, Any]) -> dict[str, Any]:
    batch = result.get("batch")
    if batch is not None and not isinstance(batch, bool):
        raise RowError("invalid_value", "batch is not a boolean", "batch", batch)
    return {
        "provider": "openai",
        "bucket_start": start,
        "bucket_end": end,
        "model": _optional_str(result, "model"),
        "project_id": _optional_str(result, "project_id"),
        "api_key_id": _optional_str(result, "api_key_id"),
        "user_id": _optional_str(result, "user_id"),
        "batch": batch,
        "service_tier": _optional_str(result, "service_tier"),
        "input_tokens": int_value(require(result, "input_tokens", "usage result"), "input_tokens"),
        "input_cached_tokens": int_value(result.get("input_cached_tokens"), "input_cached_tokens"),
        "input_cache_write_tokens": int_value(result.get("input_cache_write_tokens"), "input_cache_write_tokens"),
        "output_tokens": int_value(require(result, "output_tokens", "usage result"), "output_tokens"),
        "num_requests": int_value(result.get("num_model_requests"), "num_model_requests"),
    }


def parse_costs(path: Path) -> ParseOutput:
    """Parse an OpenAI /organization/costs page into `api_cost_buckets`."""
    out, rows = _walk(Path(path), COST_RESULT, _cost_row)
    out.tables["api_cost_buckets"] = build_table(rows, COST_SCHEMA)
    return out


def parse_usage_completions(path: Path) -> ParseOutput:
    """Parse an OpenAI /organization/usage/completions page into `api_usage_buckets`."""
    out, rows = _walk(Path(path), COMPLETIONS_RESULT, _usage_row)
    out.tables["api_usage_buckets"] = build_table(rows, USAGE_SCHEMA)
    return out


FORMATS = [
    SourceFormat(
        name="openai_org_costs_page",
        family="api_spend",
        detect=detect_costs,
        parse=parse_costs,
        tables=("api_cost_buckets",),
        description="OpenAI GET /v1/organization/costs page (or merged pages) -> api_cost_buckets",
    ),
    SourceFormat(
        name="openai_org_usage_completions_page",
        family="api_spend",
        detect=detect_usage_completions,
        parse=parse_usage_completions,
        tables=("api_usage_buckets",),
        description="OpenAI GET /v1/organization/usage/completions page (or merged pages) -> api_usage_buckets",
    ),
]
