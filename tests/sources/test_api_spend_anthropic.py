"""Anthropic cost_report / usage_report on constructed fixtures (no real sample exists)."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from sources.api_spend import anthropic_reports
from sources.api_spend.formats import matching_formats
from sources.common import UnreadableFile
from tests.contract_helpers import load_in_memory

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "api_spend"
COST = FIXTURES / "anthropic_cost_report_constructed.json"
USAGE = FIXTURES / "anthropic_usage_report_constructed.json"


def test_fixture_fields_exist_in_sdk_schema(public_data: Path) -> None:
    """The constructed fixtures only use fields the SDK 2.14 models declare."""
    models = json.loads((public_data / "api_spend/anthropic_sdk2.14_org_analytics_usage_cost_schema.json").read_text())["models"]
    cost_fields = set(models["BetaAnalyticsCostBucketedResult"]["fields"])
    usage_fields = set(models["BetaAnalyticsUsageBucketedResult"]["fields"])
    bucket_fields = set(models["BetaAnalyticsCostReportTimeBucket"]["fields"])
    cost_doc, usage_doc = json.loads(COST.read_text()), json.loads(USAGE.read_text())
    assert set(cost_doc["data"][0]) == bucket_fields
    assert {k for b in cost_doc["data"] for r in b["results"] for k in r} <= cost_fields
    assert {k for b in usage_doc["data"] for r in b["results"] for k in r} <= usage_fields
    assert models["BetaAnalyticsCostBucketedResult"]["fields"]["amount"]["type"] == "str"


def test_cost_report_amounts_in_usd() -> None:
    out = anthropic_reports.parse_cost_report(COST)
    assert out.rejects == [] and out.warnings == []
    con = load_in_memory(out, "api_spend")
    total, list_total, n = con.execute(
        "select sum(amount), sum(list_amount), count(*) from raw.api_cost_buckets"
    ).fetchone()
    # README: 781.65 cents billed, 868.5 cents at list price; 7 result rows (day 3 is empty).
    assert (total, list_total, n) == (Decimal("7.8165"), Decimal("8.685"), 7)
    row = con.execute(
        "select bucket_start, bucket_end, amount, currency, cost_type, token_type, model "
        "from raw.api_cost_buckets where _source_line = 3"
    ).fetchone()
    assert row == (datetime(2026, 1, 5), datetime(2026, 1, 6), Decimal("0.3375"), "USD", "tokens",
                   "cache_creation.ephemeral_5m_input_tokens", "claude-sonnet-4-5")


def test_usage_report_tokens() -> None:
    out = anthropic_reports.parse_usage_report(USAGE)
    con = load_in_memory(out, "api_spend")
    rows = con.execute(
        "select bucket_start, input_tokens, input_cached_tokens, input_cache_write_tokens, output_tokens, num_requests "
        "from raw.api_usage_buckets order by bucket_start"
    ).fetchall()
    assert rows == [
        (datetime(2026, 1, 5), 2_100_000, 800_000, 100_000, 150_000, 420),
        (datetime(2026, 1, 6), 500_000, 0, 0, 40_000, 130),
    ]


def test_detection() -> None:
    assert matching_formats(COST) == ["anthropic_cost_report"]
    assert matching_formats(USAGE) == ["anthropic_usage_report"]


def _doc(results: list) -> str:
    return json.dumps({"data": [{"starting_at": "2026-01-05T00:00:00Z", "ending_at": "2026-01-06T00:00:00+00:00",
                                 "results": results}], "has_more": True, "next_page": "page_2"})


def test_bad_amounts_and_currency(tmp_path: Path) -> None:
    good = {"amount": "100", "list_amount": "120", "currency": "USD", "cost_type": "tokens"}
    path = tmp_path / "c.json"
    path.write_text(_doc([good, {**good, "amount": "twelve"}, {**good, "currency": "usd "},
                          {**good, "currency": "ZZZ"}, {"list_amount": "1", "currency": "USD"}]))
    out = anthropic_reports.parse_cost_report(path)
    assert [(r.line, r.rule) for r in out.rejects] == [(2, "non_numeric"), (4, "unknown_currency"), (5, "missing_field")]
    assert out.tables["api_cost_buckets"].column("amount").to_pylist() == ["1", "1"]
    assert out.tables["api_cost_buckets"].column("currency").to_pylist() == ["USD", "USD"]
    assert any("has_more" in w for w in out.warnings)


def test_timestamp_without_offset_rejected(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(_doc([{"amount": "1", "currency": "USD"}]).replace("2026-01-05T00:00:00Z", "2026-01-05T00:00:00"))
    out = anthropic_reports.parse_cost_report(path)
    assert [r.rule for r in out.rejects] == ["invalid_timestamp"]


def test_truncated_report_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(COST.read_text()[:300])
    with pytest.raises(UnreadableFile):
        anthropic_reports.parse_cost_report(path)
