"""Constructed-fixture formats (SkyPilot/gpuhunt CSV, HTML page, quotes), bad inputs, detection."""

from __future__ import annotations

import importlib
import json
import pkgutil
import shutil
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

import sources.prices
from sources.common import UnreadableFile, read_head
from sources.prices import aws_offer, azure_retail, catalog_csv, gcp_skus, html_table, oci_pricelist, quotes
from tests.contract_helpers import load_in_memory

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "prices"
FETCHED = datetime(2025, 1, 2, 3, 4, 5)


def _price_formats():
    """The prices family's formats, discovered the way sources.catalog does (without importing other families)."""
    found = []
    for info in sorted(pkgutil.iter_modules(sources.prices.__path__), key=lambda m: m.name):
        found.extend(getattr(importlib.import_module(f"sources.prices.{info.name}"), "FORMATS", []))
    return found


def recognise(path, family="prices"):
    head = read_head(path)
    matches = [f for f in _price_formats() if f.detect(path, head)]
    assert len(matches) == 1, (path.name, [f.name for f in matches])  # exactly one format claims a file
    return matches[0]


def test_skypilot_csv():
    out = catalog_csv.parse_skypilot(FIX / "skypilot_vms_sample.csv", fetched_at=FETCHED)
    rows = out.tables["gpu_price_observations"].to_pylist()
    assert [(r["provider"], r["sku"], r["pricing_category"], r["price"]) for r in rows] == [
        ("aws", "p4d.24xlarge", "on-demand", "32.7726"),
        ("aws", "p4d.24xlarge", "spot", "9.8318"),
        ("aws", "g5.xlarge", "on-demand", "1.006"),
        ("azure", "Standard_NC24ads_A100_v4", "on-demand", "3.673"),
        ("azure", "Standard_NC24ads_A100_v4", "spot", "0.7346"),
        ("lambda", "gpu_1x_h100_pcie", "on-demand", "2.49"),
    ]
    assert [(r.line, r.rule) for r in out.rejects] == [(6, "missing_price")]
    assert rows[0]["observed_at"] == FETCHED
    con = load_in_memory(out, "prices")
    assert con.execute("select sum(gpu_count) from raw.gpu_price_observations").fetchone()[0] == Decimal(20)


def test_gpuhunt_csv():
    out = catalog_csv.parse_gpuhunt(FIX / "gpuhunt_catalog_sample.csv", fetched_at=FETCHED)
    rows = out.tables["gpu_price_observations"].to_pylist()
    assert [(r["sku"], r["pricing_category"], r["price"], r["gpu_count"]) for r in rows] == [
        ("p5.48xlarge", "on-demand", "55.04", "8"),
        ("p5.48xlarge", "spot", "24.8", "8"),
        ("g6.xlarge", "on-demand", "0.8048", "1"),
        ("Standard_ND96isr_H100_v5", "on-demand", "98.32", "8"),
    ]
    assert [(r.line, r.rule) for r in out.rejects] == [(6, "negative_price")]
    load_in_memory(out, "prices")


def test_catalog_rows_without_their_instance_type_or_provider_are_rejected(tmp_path):
    """A SkyPilot line with an empty InstanceType (line 3, g5.xlarge: an on-demand offer only) and a gpuhunt line
    with an empty provider (line 2, in a provider column added to the sample) are rejects with their line; before,
    they loaded with a NULL sku or provider and the blocking staging checks withheld the whole publication. The
    other lines load, beside each sample's own reject."""
    sky = (FIX / "skypilot_vms_sample.csv").read_text().splitlines()
    sky[2] = "," + sky[2].split(",", 1)[1]
    (tmp_path / "vms.csv").write_text("\n".join(sky) + "\n")
    out = catalog_csv.parse_skypilot(tmp_path / "vms.csv", fetched_at=FETCHED)
    assert [(r.line, r.rule, r.column) for r in out.rejects] == [
        (3, "missing_sku", "sku"), (6, "missing_price", "Price")]
    assert "g5.xlarge" not in {r["sku"] for r in out.tables["gpu_price_observations"].to_pylist()}
    hunt = (FIX / "gpuhunt_catalog_sample.csv").read_text().splitlines()
    hunt[0] = hunt[0] + ",provider"
    hunt[1:] = [line + ("," if i == 2 else ",aws") for i, line in enumerate(hunt[1:], start=2)]
    (tmp_path / "hunt.csv").write_text("\n".join(hunt) + "\n")
    out = catalog_csv.parse_gpuhunt(tmp_path / "hunt.csv", fetched_at=FETCHED)
    assert [(r.line, r.rule, r.column) for r in out.rejects] == [(2, "missing_value", "provider"), (6, "negative_price", "price")]
    assert {r["provider"] for r in out.tables["gpu_price_observations"].to_pylist()} == {"aws"}


def test_html_page():
    out = html_table.parse(FIX / "neocloud_pricing_page.html")
    rows = out.tables["gpu_price_observations"].to_pylist()
    assert [(r["sku"], r["pricing_category"], r["price"], r["gpu_model"], r["gpu_count"]) for r in rows] == [
        ("1x-h100-sxm", "on-demand", "2.49", "H100-SXM-80GB", "1"),
        ("1x-h100-sxm", "spot", "1.25", "H100-SXM-80GB", "1"),
        ("8x-h100-sxm", "on-demand", "19.92", "H100-SXM-80GB", "8"),
        ("8x-h200", "on-demand", "28.00", "H200-SXM-141GB", "8"),
        ("1x-l40s", "on-demand", "0.89", "L40S-48GB", "1"),
        ("1x-l40s", "spot", "0.45", "L40S-48GB", "1"),
    ]
    assert {r["observed_at"] for r in rows} == {datetime(2025, 9, 1, 12)}  # the page's own meta time
    assert [(r.line, r.rule) for r in out.rejects] == [(22, "non_numeric"), (22, "zero_price")]
    load_in_memory(out, "prices")


def test_html_page_regex_timestamp_and_fetch_time(tmp_path):
    page = (
        (FIX / "neocloud_pricing_page.html")
        .read_text()
        .replace('<meta name="last-modified" content="2025-09-01T12:00:00Z">', "")
    )
    p = tmp_path / "p.html"
    p.write_text(page)
    assert {r["observed_at"] for r in html_table.parse(p).tables["gpu_price_observations"].to_pylist()} == {
        datetime(2025, 8, 30)
    }
    p.write_text(page.replace("Prices last updated: 2025-08-30", ""))
    out = html_table.parse(p, fetched_at=FETCHED)
    assert {r["observed_at"] for r in out.tables["gpu_price_observations"].to_pylist()} == {FETCHED}


def test_html_layout_changed(tmp_path):
    page = (FIX / "neocloud_pricing_page.html").read_text()
    p = tmp_path / "p.html"
    p.write_text(page.replace("<th>Spot ($/hr)</th>", "<th>Preemptible</th>"))
    with pytest.raises(UnreadableFile, match=r"layout changed.*Spot \(\$/hr\)"):
        html_table.parse(p)
    p.write_text(page.split("<table")[0] + "</body></html>")
    with pytest.raises(UnreadableFile, match="no <table> found"):
        html_table.parse(p)
    p.write_text("")
    with pytest.raises(UnreadableFile, match="empty"):
        html_table.parse(p)


def test_quotes_csv_and_yaml():
    out = quotes.parse_csv(FIX / "quotes.csv")
    con = load_in_memory(out, "prices")
    rows = con.execute(
        "select quote_id, provider, gpu_model, price, term_months, minimum_commitment, quoted_at, interconnect, compliance "
        "from raw.price_quotes order by quote_id"
    ).fetchall()
    assert rows[0] == (
        "Q-2025-001",
        "aws",
        "H100-SXM-80GB",
        Decimal("38.5"),
        12,
        Decimal(337260),
        datetime(2025, 6, 2, 7, 30),
        "NVLink 900GB/s; EFA 3200 Gbps",
        "SOC2; ISO27001",
    )
    assert len(rows) == 2
    assert [(r.line, r.rule) for r in out.rejects] == [(4, "unknown_currency"), (5, "zero_price")]
    y = quotes.parse_yaml(FIX / "quotes.yaml")
    [q] = y.tables["price_quotes"].to_pylist()
    assert (
        q["quote_id"],
        q["serving_frameworks"],
        q["compliance"],
        q["idle_billed"],
        q["gpus_per_node"],
    ) == ("Q-2025-101", "vLLM; Triton", "SOC2; HIPAA", "true", "8")
    assert q["_source_line"] == 3
    assert [(r.line, r.rule) for r in y.rejects] == [(37, "non_numeric")]
    load_in_memory(y, "prices")


def test_truncated_json_names_file_and_position(tmp_path, public_data):
    text = (public_data / "prices/gcp_cloudbilling_skus_api_sample.json").read_text()
    p = tmp_path / "skus.json"
    p.write_text(text[:3000])
    with pytest.raises(UnreadableFile) as err:
        gcp_skus.parse(p, fetched_at=FETCHED)
    assert err.value.path.endswith("skus.json") and err.value.line and "column" in err.value.problem
    # a truncated AWS offer stays fatal even in lenient mode
    p.write_text((public_data / "prices/aws_pricelist_offer_fixture_2.json").read_text()[:2000])
    with pytest.raises(UnreadableFile, match="invalid JSON"):
        aws_offer.parse(p)


@pytest.mark.parametrize("parser", [gcp_skus.parse, oci_pricelist.parse, azure_retail.parse, aws_offer.parse])
def test_empty_file(tmp_path, parser):
    p = tmp_path / "empty.json"
    p.write_text("  \n")
    with pytest.raises(UnreadableFile, match="empty"):
        parser(p)


def test_unknown_currency_and_non_positive_prices_rejected(tmp_path):
    doc = json.loads((FIX / "azure_retail_prices_page1.json").read_text())
    doc["Items"][0]["currencyCode"] = "US$"
    doc["Items"][1]["retailPrice"] = -1.5
    doc["Items"][2]["retailPrice"] = 0
    doc["Items"][3]["armSkuName"] = "Standard_Totally_New_v9"
    p = tmp_path / "az.json"
    p.write_text(json.dumps(doc))
    out = azure_retail.parse(p)
    assert [(r.line, r.rule) for r in out.rejects] == [
        (1, "unknown_currency"),
        (2, "negative_price"),
        (3, "zero_price"),
    ]
    assert "Standard_Totally_New_v9" in out.tables["gpu_price_observations"].column("sku").to_pylist()


def test_detection_by_content(public_data, tmp_path):
    expected = {
        "karpenter_aws_ondemand_gpu_prices_history.csv": "karpenter_aws_pricing_history",
        "karpenter_azure_ondemand_gpu_prices_history.csv": "karpenter_azure_pricing_history",
        "aws_pricelist_offer_fixture_1.json": "aws_pricelist_offer",
        "aws_pricelist_offer_fixture_3.json": "aws_pricelist_offer",
        "gcp_cloudbilling_skus_api_sample.json": "gcp_cloudbilling_skus",
        "oci_pricelist_api_prices_usd.json": "oci_pricelist",
        "gpuhunt_provider_api_fixtures.json": "gpuhunt_provider_json",
    }
    for name, fmt in expected.items():
        renamed = tmp_path / ("x" + Path(name).suffix)  # detection must not depend on the file name
        shutil.copy(public_data / "prices" / name, renamed)
        assert recognise(renamed, "prices").name == fmt, name
    for name, fmt in {
        "azure_retail_prices_page1.json": "azure_retail_prices",
        "skypilot_vms_sample.csv": "skypilot_catalog_csv",
        "gpuhunt_catalog_sample.csv": "gpuhunt_catalog_csv",
        "neocloud_pricing_page.html": "html_pricing_table",
        "quotes.csv": "price_quotes_csv",
        "quotes.yaml": "price_quotes_yaml",
    }.items():
        assert recognise(FIX / name, "prices").name == fmt, name
    # no prices format claims another family's real files
    others = [
        p
        for p in public_data.rglob("*")
        if p.is_file() and "prices" not in p.parts and p.suffix in (".csv", ".json", ".yaml", ".html")
    ]
    assert others
    claimed = [
        (p.name, f.name) for p in others for f in _price_formats() if f.detect(p, p.read_bytes()[:65536])
    ]
    assert claimed == []
