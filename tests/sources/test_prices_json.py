"""JSON price sources on the real samples (AWS offer, GCP SKUs, OCI list, gpuhunt) and the Azure fixture."""

from __future__ import annotations

import json
import re
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from sources.prices import aws_offer, azure_retail, gcp_skus, gpuhunt, oci_pricelist
from tests.contract_helpers import load_in_memory

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "prices"
FETCHED = datetime(2025, 1, 2, 3, 4, 5)


def _rows(out):
    return out.tables["gpu_price_observations"].to_pylist()


def test_aws_offer_1_lenient_reserved_and_windows(public_data):
    out = aws_offer.parse(public_data / "prices/aws_pricelist_offer_fixture_1.json")
    assert any("not strict JSON" in w and "line 170" in w for w in out.warnings)
    rows = {r["sku"]: r for r in _rows(out)}
    assert set(rows) == {"p3.8xlarge", "m5.large", "gp3"}
    p3 = rows["p3.8xlarge"]
    assert (p3["price"], p3["currency"], p3["price_unit"], p3["gpu_count"], p3["region"]) == (
        "12.2400000000",
        "USD",
        "hour",
        "4",
        "us-east-2",
    )
    assert json.loads(p3["term_details"])["operating_system"] == "Windows"
    ri = rows["m5.large"]
    terms = json.loads(ri["term_details"])
    assert ri["pricing_category"] == "reserved-3y" and ri["price_unit"] == "upfront" and ri["price"] == "1161"
    assert (terms["purchase_option"], terms["offering_class"]) == ("All Upfront", "convertible")
    assert p3["observed_at"] == datetime(2023, 3, 22, 14, 56, 51)
    load_in_memory(out, "prices")


def test_aws_offer_2_skips_zero_dimension(public_data):
    out = aws_offer.parse(public_data / "prices/aws_pricelist_offer_fixture_2.json")
    rows = _rows(out)
    assert [(r["sku"], r["price"], r["gpu_count"]) for r in rows] == [("p4d.24xlarge", "32.7726000000", "8")]
    assert any("1 price dimension(s) of 0.00 skipped" in w for w in out.warnings)
    assert out.rejects == []


def test_aws_offer_3_cny_is_strict_json(public_data):
    out = aws_offer.parse(public_data / "prices/aws_pricelist_offer_fixture_3.json")
    assert out.warnings == []
    [row] = _rows(out)
    assert (row["currency"], row["price"], row["region"], row["price_unit"]) == (
        "CNY",
        "0.5312000000",
        "cn-northwest-1",
        "gb-month",
    )


def test_gcp_units_plus_nanos(public_data):
    path = public_data / "prices/gcp_cloudbilling_skus_api_sample.json"
    doc = json.loads(path.read_text())
    out = gcp_skus.parse(path, fetched_at=FETCHED)
    # independent count: one row per (sku, region, tier)
    expected = sum(
        len(s["serviceRegions"]) * sum(len(p["pricingExpression"]["tieredRates"]) for p in s["pricingInfo"])
        for s in doc["skus"]
    )
    rows = _rows(out)
    assert len(rows) == expected == 17
    gpu = [r for r in rows if r["sku"] == "039F-D0DA-4055"]
    assert {r["region"] for r in gpu} == {"us-central1", "us-east1", "us-west1"}
    assert {(r["price"], r["price_unit"], r["gpu_model"], r["gpu_count"]) for r in gpu} == {
        ("2.933908", "gpu-hour", "A100-40GB", "1")
    }
    assert gpu[0]["observed_at"] == datetime(2023, 3, 24, 10, 52, 50, 681000)
    idr = next(r for r in rows if r["sku"] == "9E37-EAF4-1576")
    assert (idr["currency"], idr["price"], idr["observed_at"]) == ("IDR", "508.934997455", FETCHED)
    assert any("nextPageToken" in w for w in out.warnings)
    con = load_in_memory(out, "prices")
    assert con.execute(
        "select price from raw.gpu_price_observations where sku='039F-D0DA-4055' limit 1"
    ).fetchone()[0] == Decimal("2.933908")


def test_a_price_record_missing_a_required_value_is_a_reject_with_its_line(public_data, tmp_path):
    """The GCP sample with SKU 1's skuId and SKU 2's usageType (its pricing category) nulled, and SKU 3's name and
    skuId both nulled (its source URL is built from them): each record is rejected with its line, once per column
    however many regions and tiers it had (missing_value / missing_source), and every other SKU's rows load.
    Before, such rows loaded with NULLs and the blocking staging checks withheld the whole publication."""
    doc = json.loads((public_data / "prices/gcp_cloudbilling_skus_api_sample.json").read_text())
    doc["skus"][0]["skuId"] = None
    doc["skus"][1]["category"]["usageType"] = None
    doc["skus"][2]["name"] = doc["skus"][2]["skuId"] = None
    path = tmp_path / "gcp_skus.json"
    path.write_text(json.dumps(doc))
    out = gcp_skus.parse(path, fetched_at=FETCHED)
    assert sorted((r.line, r.rule, r.column) for r in out.rejects) == [
        (1, "missing_value", "sku"), (2, "missing_value", "pricing_category"),
        (3, "missing_source", "source"), (3, "missing_value", "sku")]
    rest = doc["skus"][3:]
    expected = sum(len(s["serviceRegions"]) * sum(len(p["pricingExpression"]["tieredRates"]) for p in s["pricingInfo"])
                   for s in rest)
    rows = _rows(out)
    assert len(rows) == expected
    assert {r["sku"] for r in rows} == {s["skuId"] for s in rest}


def test_oci_gpu_parts_and_tiers(public_data):
    path = public_data / "prices/oci_pricelist_api_prices_usd.json"
    out = oci_pricelist.parse(path, fetched_at=FETCHED)
    rows = _rows(out)
    gpu = {r["sku"]: r for r in rows if r["price_unit"] == "gpu-hour"}
    assert {k: v["price"] for k, v in gpu.items()} == {
        "B88517": "1.275",
        "B88518": "1.275",
        "B89734": "2.95",
        "B92740": "3.05",
        "B95907": "4",
        "B95909": "2",
        "B98415": "10",
    }
    assert (
        gpu["B95907"]["gpu_model"] == "A100-80GB"
        and gpu["B95909"]["sku_description"] == "Compute - GPU - A10"
    )
    # independent count of price entries in the raw file: every entry is a row, a free tier or a reject
    doc = json.loads(path.read_text())
    entries = sum(len(l["prices"]) for it in doc["items"] for l in it["currencyCodeLocalizations"])
    free = int(re.search(r"(\d+) free", next(w for w in out.warnings if "free" in w)).group(1))
    assert len(rows) + free + len(out.rejects) == entries
    assert len(rows) == 451 and free == 51 and len(out.rejects) == 18
    assert {r.rule for r in out.rejects} == {"zero_price"}
    tiered = [r for r in rows if r["term_details"] and "range_min" in r["term_details"]]
    assert tiered and all("999999999999999" not in r["term_details"] for r in tiered)
    load_in_memory(out, "prices")


def test_gpuhunt_shapes(public_data):
    out = gpuhunt.parse(public_data / "prices/gpuhunt_provider_api_fixtures.json", fetched_at=FETCHED)
    rows = _rows(out)
    assert len(rows) == 34 and out.rejects == []
    by = {(r["provider"], r["sku"], r["pricing_category"], r["region"]): r for r in rows}
    v = by[("verda", "1H100.80S.30V", "spot", None)]
    assert (v["price"], v["gpu_model"], v["gpu_count"], v["currency"]) == (
        "1.70",
        "H100-SXM-80GB",
        "1",
        "USD",
    )
    assert by[("vultr", "vbm-112c-2048gb-8-h100-gpu", "on-demand", "sea")]["price"] == "23.92"
    assert by[("vultr", "vcg-a100-6c-60g-40vram", "on-demand", "ewr")]["gpu_count"] == "0.5"
    do = by[("digitalocean", "gpu-h100x8-640gb", "on-demand", "nyc1")]
    assert (do["price"], do["gpu_count"], json.loads(do["term_details"])["price_monthly"]) == (
        "23.92",
        "8",
        "17796.48",
    )
    jl = [r for r in rows if r["provider"] == "jarvislabs"]
    assert {r["price_unit"] for r in jl} == {"gpu-hour"}
    assert sorted({r["gpu_model"] for r in jl}) == [
        "A100-80GB",
        "H100-SXM-80GB",
        "L4-24GB",
        "RTX-PRO-6000-96GB",
    ]
    assert len([r for r in jl if r["pricing_category"] == "spot"]) == 4  # null spot_price -> no spot row
    load_in_memory(out, "prices")


def test_azure_retail_fixture_categories():
    p1 = azure_retail.parse(FIX / "azure_retail_prices_page1.json")
    cats = [(r["sku"], r["pricing_category"], r["price"]) for r in _rows(p1)]
    assert cats[:3] == [
        ("Standard_ND96isr_H100_v5", "on-demand", "98.32"),
        ("Standard_ND96isr_H100_v5", "spot", "29.496"),
        ("Standard_ND96asr_v4", "low-priority", "5.4394"),
    ]
    assert any("NextPageLink present" in w for w in p1.warnings)
    p2 = azure_retail.parse(FIX / "azure_retail_prices_page2.json")
    rows = _rows(p2)
    assert [(r["pricing_category"], r["price_unit"]) for r in rows[:2]] == [
        ("reserved-1y", "term"),
        ("reserved-3y", "term"),
    ]
    per_hour = rows[2]
    assert (per_hour["currency"], per_hour["price"], per_hour["price_unit"]) == (
        "EUR",
        "0.9",
        "hour",
    )  # 90 per 100 Hours
    assert [(r.line, r.rule) for r in p2.rejects] == [(4, "zero_price")]
    load_in_memory(p2, "prices")


def test_an_undated_price_file_is_undated_never_stamped_as_observed_today(public_data, tmp_path):
    """gpuhunt payloads carry no time. Fetched by the pipeline: the fetch time ("fetched"). A copied
    file: a date in its name ("file_name", midnight UTC), else "undated" (the modification time kept
    only to order versions; screens show no age). A time inside the file always wins ("source")."""
    src = public_data / "prices/gpuhunt_provider_api_fixtures.json"
    fetched = _rows(gpuhunt.parse(src, fetched_at=FETCHED))
    assert {(r["observed_at"], r["observed_at_basis"]) for r in fetched} == {(FETCHED, "fetched")}

    named = tmp_path / "gpuhunt_offers_2025-04-10.json"
    named.write_bytes(src.read_bytes())
    assert {(r["observed_at"], r["observed_at_basis"]) for r in _rows(gpuhunt.parse(named))} == {
        (datetime(2025, 4, 10), "file_name")}
    compact = tmp_path / "gpuhunt_offers_20250410.json"
    compact.write_bytes(src.read_bytes())
    assert {r["observed_at_basis"] for r in _rows(gpuhunt.parse(compact))} == {"file_name"}
    # Not a date (month 13; February 30): the name dates nothing.
    for name in ("gpuhunt_2025-13-01.json", "gpuhunt_2025-02-30.json"):
        (tmp_path / name).write_bytes(src.read_bytes())
        out = gpuhunt.parse(tmp_path / name)
        assert {r["observed_at_basis"] for r in _rows(out)} == {"undated"}
        assert any("undated" in w for w in out.warnings)

    # A GCP SKU with effectiveTime keeps its own time even when the file was fetched.
    gcp = _rows(gcp_skus.parse(public_data / "prices/gcp_cloudbilling_skus_api_sample.json", fetched_at=FETCHED))
    own = next(r for r in gcp if r["sku"] == "039F-D0DA-4055")
    assert (own["observed_at"], own["observed_at_basis"]) == (datetime(2023, 3, 24, 10, 52, 50, 681000), "source")
    assert {r["observed_at_basis"] for r in gcp if r["observed_at"] == FETCHED} == {"fetched"}
