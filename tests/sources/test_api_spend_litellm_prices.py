"""LiteLLM price catalogs (two real versions)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from sources.api_spend import litellm_prices
from sources.api_spend.formats import matching_formats
from sources.common import UnreadableFile
from tests.contract_helpers import load_in_memory

V155 = "api_spend/litellm_model_prices_v1.55.0_full.json"
V1110 = "api_spend/litellm_model_prices_v1.110.2_subset.json"


def _price(con, key: str) -> tuple:
    return con.execute(
        "select catalog_version, provider, mode, input_cost_per_token, output_cost_per_token, "
        "cache_read_input_token_cost, input_cost_per_token_batches, max_input_tokens "
        "from raw.api_model_prices where model_key = ?", [key]
    ).fetchone()


def test_v1_55_0(public_data: Path) -> None:
    out = litellm_prices.parse(public_data / V155)
    # 704 top-level keys minus sample_spec; nothing rejected.
    assert out.tables["api_model_prices"].num_rows == 703 and out.rejects == []
    con = load_in_memory(out, "api_spend")
    # Read by hand: gpt-3.5-turbo 1.5e-06 / 2e-06 in 1.55.0; azure/gpt-4o 5e-06 / 1.5e-05.
    assert _price(con, "gpt-3.5-turbo") == ("1.55.0", "openai", "chat", Decimal("0.0000015"), Decimal("0.000002"), None, None, 16385)
    assert _price(con, "azure/gpt-4o")[3:5] == (Decimal("0.000005"), Decimal("0.000015"))
    assert _price(con, "gpt-4o-mini")[3:6] == (Decimal("1.5E-7"), Decimal("6E-7"), Decimal("7.5E-8"))
    observed = con.execute("select distinct observed_at from raw.api_model_prices").fetchall()
    assert observed == [(datetime(2024, 12, 13),)]
    assert con.execute("select count(*) from raw.api_model_prices where model_key = 'sample_spec'").fetchone() == (0,)


def test_v1_110_2_and_price_change(public_data: Path) -> None:
    out = litellm_prices.parse(public_data / V1110)
    assert out.tables["api_model_prices"].num_rows == 1428 and out.rejects == []
    assert any("observed_at is NULL" in w for w in out.warnings)  # release date not known offline
    con = load_in_memory(out, "api_spend")
    # gpt-3.5-turbo was repriced between the versions: 5e-07 / 1.5e-06 in 1.110.2.
    assert _price(con, "gpt-3.5-turbo")[3:5] == (Decimal("0.0000005"), Decimal("0.0000015"))
    assert _price(con, "gpt-4o")[6] == Decimal("0.00000125")  # batch price appears in 1.110.2


def test_counts_match_independent_read(public_data: Path) -> None:
    for rel in (V155, V1110):
        raw = json.loads((public_data / rel).read_text())
        entries = {k: v for k, v in raw.items() if k != "sample_spec"}
        ints = sum(isinstance(v.get("input_cost_per_token"), int) for v in entries.values())
        no_price = sum(v.get("input_cost_per_token") is None and v.get("output_cost_per_token") is None
                       for v in entries.values())
        out = litellm_prices.parse(public_data / rel)
        t = out.tables["api_model_prices"]
        assert t.num_rows == len(entries)
        assert ints >= 10  # int prices (0) exist and are accepted
        assert sum(v is None for v in t.column("input_cost_per_token").to_pylist()) == sum(
            v.get("input_cost_per_token") is None for v in entries.values())
        assert any(f"{no_price} entries have no per-token" in w for w in out.warnings)


def test_detection(public_data: Path) -> None:
    assert matching_formats(public_data / V155) == ["litellm_model_prices"]
    assert matching_formats(public_data / "api_spend/openai_usage_costs_schemas.json") == []


def test_overrides(tmp_path: Path) -> None:
    path = tmp_path / "model_prices_observed-2025-03-01.json"
    path.write_text(json.dumps({"m": {"litellm_provider": "openai", "input_cost_per_token": 1e-06}}))
    out = litellm_prices.parse(path)
    t = out.tables["api_model_prices"].to_pylist()[0]
    assert t["observed_at"] == datetime(2025, 3, 1) and t["catalog_version"] is None
    out = litellm_prices.parse_catalog(path, catalog_version="9.9.9", observed_at=datetime(2025, 5, 5))
    assert out.tables["api_model_prices"].to_pylist()[0]["observed_at"] == datetime(2025, 5, 5)


def test_bad_entries(tmp_path: Path) -> None:
    doc = {
        "sample_spec": {"input_cost_per_token": "docs"},
        "ok": {"litellm_provider": "openai", "input_cost_per_token": 2e-07, "max_input_tokens": "lots"},
        "text": {"litellm_provider": "openai", "input_cost_per_token": "0.000001"},
        "neg": {"litellm_provider": "openai", "output_cost_per_token": -1e-06},
        "notdict": 5,
    }
    path = tmp_path / "litellm_v1.0.0.json"
    path.write_text(json.dumps(doc))
    out = litellm_prices.parse(path)
    assert [(r.line, r.rule) for r in out.rejects] == [(3, "non_numeric"), (4, "negative_price"), (5, "invalid_record")]
    rows = out.tables["api_model_prices"].to_pylist()
    assert [(r["model_key"], r["input_cost_per_token"], r["max_input_tokens"]) for r in rows] == [("ok", "0.0000002", None)]


def test_truncated_catalog(tmp_path: Path, public_data: Path) -> None:
    path = tmp_path / "litellm_v1.55.0.json"
    path.write_text((public_data / V155).read_text()[:5000])
    with pytest.raises(UnreadableFile):
        litellm_prices.parse(path)


def test_landing_time_fallback(public_data: Path) -> None:

    landed = datetime(2026, 11, 30, 5, 0, tzinfo=UTC)
    out = litellm_prices.parse(public_data / V1110, landed_at=landed)
    assert set(out.tables["api_model_prices"].column("observed_at").to_pylist()) == {datetime(2026, 11, 30, 5, 0)}
    # A known release date wins over the landing time.
    out = litellm_prices.parse(public_data / V155, landed_at=landed)
    assert set(out.tables["api_model_prices"].column("observed_at").to_pylist()) == {datetime(2024, 12, 13)}
