"""OpenAI organization costs / usage pages: real vendor examples and broken inputs."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from sources.api_spend import openai_org
from sources.api_spend.formats import matching_formats
from sources.common import UnreadableFile, read_head
from tests.contract_helpers import load_in_memory

COSTS = "api_spend/openai_costs_api_response_example.json"
USAGE = "api_spend/openai_usage_completions_api_response_example.json"


def test_costs_example_values(public_data: Path) -> None:
    out = openai_org.parse_costs(public_data / COSTS)
    assert out.rejects == [] and out.warnings == []
    con = load_in_memory(out, "api_spend")
    rows = con.execute(
        "select provider, bucket_start, bucket_end, amount, currency, line_item, _source_line from raw.api_cost_buckets"
    ).fetchall()
    # Read by hand: start_time 1730419200 = 2024-11-01T00:00Z, end 1730505600, amount 0.06 'usd'.
    assert rows == [
        ("openai", datetime(2024, 11, 1), datetime(2024, 11, 2), Decimal("0.06"), "USD", None, 1)
    ]


def test_usage_completions_example_values(public_data: Path) -> None:
    out = openai_org.parse_usage_completions(public_data / USAGE)
    assert out.rejects == []
    # The example page says has_more=true: the parser must say the file is partial.
    assert len(out.warnings) == 1 and "has_more" in out.warnings[0]
    con = load_in_memory(out, "api_spend")
    row = con.execute(
        "select bucket_start, input_tokens, input_cached_tokens, input_cache_write_tokens, output_tokens, "
        "num_requests, batch, model from raw.api_usage_buckets"
    ).fetchone()
    assert row == (datetime(2024, 11, 1), 1000, 400, 100, 500, 5, None, None)


def test_detection_by_content(public_data: Path) -> None:
    assert matching_formats(public_data / COSTS) == ["openai_org_costs_page"]
    assert matching_formats(public_data / USAGE) == ["openai_org_usage_completions_page"]
    # The documentation bundle embeds example pages but is not itself a page.
    assert matching_formats(public_data / "api_spend/openai_usage_costs_all_endpoints_examples.json") == []
    assert not openai_org.detect_costs(public_data / USAGE, read_head(public_data / USAGE))


def _page(results: list, start: int = 1730419200, end: int = 1730505600) -> dict:
    return {"object": "page", "data": [{"object": "bucket", "start_time": start, "end_time": end, "results": results}],
            "has_more": False, "next_page": None}


def _cost(value, currency="usd") -> dict:
    return {"object": "organization.costs.result", "amount": {"value": value, "currency": currency},
            "line_item": "gpt-4o, input", "project_id": "proj_1"}


def test_bad_cost_rows_are_rejected_good_rows_kept(tmp_path: Path) -> None:
    doc = _page([_cost(1.5), _cost("0.06"), _cost(2, "xyz"), {"object": "organization.costs.result"}, _cost(0.25)])
    path = tmp_path / "costs.json"
    path.write_text(json.dumps(doc))
    out = openai_org.parse_costs(path)
    assert [(r.line, r.rule) for r in out.rejects] == [(2, "non_numeric"), (3, "unknown_currency"), (4, "missing_field")]
    table = out.tables["api_cost_buckets"]
    assert table.column("amount").to_pylist() == ["1.5", "0.25"]
    assert table.column("_source_line").to_pylist() == [1, 5]


def test_reversed_bucket_rejects_its_results(tmp_path: Path) -> None:
    path = tmp_path / "costs.json"
    path.write_text(json.dumps(_page([_cost(1)], start=1730505600, end=1730419200)))
    out = openai_org.parse_costs(path)
    assert [r.rule for r in out.rejects] == ["period_reversed"]
    assert out.tables["api_cost_buckets"].num_rows == 0


def test_truncated_json_is_unreadable(tmp_path: Path, public_data: Path) -> None:
    path = tmp_path / "costs.json"
    path.write_text((public_data / COSTS).read_text()[:200])
    with pytest.raises(UnreadableFile) as exc:
        openai_org.parse_costs(path)
    assert "invalid JSON" in str(exc.value) and exc.value.line is not None


def test_merged_pages_from_fetcher(tmp_path: Path) -> None:
    """A file written by fetch.write_pages: amounts kept verbatim across pages."""
    from sources.api_spend.fetch import FetchResult, write_pages

    pages = [_page([_cost(0.1234567890123456789)]), _page([_cost(2)], 1730505600, 1730592000)]
    raw = [json.dumps(p).replace("0.12345678901234568", "0.1234567890123456789") for p in pages]
    path = write_pages(FetchResult(raw_pages=raw, pages=pages), tmp_path / "m.json",
                       endpoint="/organization/costs", provider="openai")
    assert openai_org.detect_costs(path, read_head(path))
    out = openai_org.parse_costs(path)
    assert out.tables["api_cost_buckets"].column("amount").to_pylist() == ["0.1234567890123456789", "2"]
    assert out.tables["api_cost_buckets"].column("_source_line").to_pylist() == [1, 2]


def test_every_public_api_spend_file_matches_at_most_one_format(public_data: Path) -> None:
    expected = {
        "openai_costs_api_response_example.json": ["openai_org_costs_page"],
        "openai_usage_completions_api_response_example.json": ["openai_org_usage_completions_page"],
        "litellm_model_prices_v1.55.0_full.json": ["litellm_model_prices"],
        "litellm_model_prices_v1.110.2_subset.json": ["litellm_model_prices"],
        # documentation/schema files are not data
        "openai_usage_costs_all_endpoints_examples.json": [],
        "openai_usage_costs_schemas.json": [],
        "anthropic_sdk2.14_org_analytics_usage_cost_schema.json": [],
        "litellm_spend_schema_v1.110.2.prisma": [],
        "PROVENANCE.md": [],
    }
    found = {p.name: matching_formats(p) for p in sorted((public_data / "api_spend").iterdir())}
    assert found == expected
