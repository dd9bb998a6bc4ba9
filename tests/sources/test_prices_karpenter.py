"""Karpenter AWS/Azure price histories: real files, values checked against an independent read."""

from __future__ import annotations

import csv
from datetime import datetime
from decimal import Decimal

import pytest

from sources.prices.karpenter import parse_aws, parse_azure
from tests.contract_helpers import load_in_memory

AWS = "prices/karpenter_aws_ondemand_gpu_prices_history.csv"
AZ = "prices/karpenter_azure_ondemand_gpu_prices_history.csv"


def _independent_count(path, sku_col, price_col):
    """Distinct (observed_at, region, sku, price) with the stdlib csv module, as a cross-check."""
    keys = set()
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            raw = row["generated_at"] or row["commit_date"]
            ts = datetime.fromisoformat(raw).timestamp()  # 3.11 reads Z and offsets
            keys.add((ts, row["region"], row[sku_col], Decimal(row[price_col])))
    return len(keys)


def test_aws_rows_and_dedupe(public_data):
    out = parse_aws(public_data / AWS)
    t = out.tables["gpu_price_observations"]
    assert (
        t.num_rows
        == _independent_count(public_data / AWS, "instance_type", "on_demand_price_per_hour")
        == 9780
    )
    assert out.rejects == []
    assert any("1349 duplicate" in w for w in out.warnings)
    assert any("300 rows have no generated_at" in w for w in out.warnings)


def test_aws_price_events_and_cny(public_data):
    con = load_in_memory(parse_aws(public_data / AWS), "prices")
    p5 = con.execute(
        "select price, min(observed_at) from raw.gpu_price_observations where sku='p5.48xlarge' and region='us-east-1' "
        "group by price order by 2"
    ).fetchall()
    assert [r[0] for r in p5] == [Decimal("98.32"), Decimal("55.04")]
    assert p5[0][1].date().isoformat() == "2023-07-31" and p5[1][1].date().isoformat() == "2025-06-23"
    cny = con.execute(
        "select distinct currency, price from raw.gpu_price_observations where region='cn-north-1' and sku='p3.2xlarge'"
    ).fetchall()
    assert ("CNY", Decimal("36.078")) in cny
    assert (
        con.execute(
            "select count(*) from raw.gpu_price_observations where region='cn-north-1' and currency<>'CNY'"
        ).fetchone()[0]
        == 0
    )


def test_aws_commit_date_fallback_is_utc(public_data):
    t = parse_aws(public_data / AWS).tables["gpu_price_observations"]
    first = t.slice(0, 1).to_pylist()[0]
    # line 2: generated_at empty, commit_date 2022-06-22T08:26:15-05:00 -> 13:26:15 UTC
    assert first["_source_line"] == 2 and first["sku"] == "dl1.24xlarge"
    assert first["observed_at"] == datetime(2022, 6, 22, 13, 26, 15)
    assert first["price"] == "13.109040"


def test_azure_rows_and_values(public_data):
    out = parse_azure(public_data / AZ)
    t = out.tables["gpu_price_observations"]
    assert (
        t.num_rows
        == _independent_count(public_data / AZ, "arm_sku_name", "on_demand_linux_price_per_hour")
        == 1762
    )
    con = load_in_memory(out, "prices")
    row = con.execute(
        "select price from raw.gpu_price_observations where sku='Standard_ND96asr_v4' and region='eastus' order by observed_at limit 1"
    ).fetchone()
    assert row[0] == Decimal("27.197")
    h100 = dict(
        con.execute(
            "select region, max(price) from raw.gpu_price_observations where sku='Standard_ND96isr_H100_v5' group by region"
        ).fetchall()
    )
    assert h100["eastus"] == Decimal("98.32") and h100["westeurope"] == Decimal("127.816")
    assert (
        con.execute("select count(distinct observed_at) from raw.gpu_price_observations").fetchone()[0] == 16
    )


@pytest.mark.parametrize("parser", [parse_aws, parse_azure])
def test_bad_rows_rejected_not_fatal(tmp_path, parser):
    if parser is parse_aws:
        header = "generated_at,commit,commit_date,source_path,region,currency,instance_type,family,on_demand_price_per_hour"
        rows = [
            "2024-01-01T00:00:00Z,c1,2024-01-01T00:00:00+00:00,p.go,us-east-1,USD,p5.48xlarge,p5,98.32",
            "2024-01-01T00:00:00Z,c1,2024-01-01T00:00:00+00:00,p.go,us-east-1,USD,p4d.24xlarge,p4d,0",
            "2024-01-01T00:00:00Z,c1,2024-01-01T00:00:00+00:00,p.go,us-east-1,USD,g5.xlarge,g5,-1.0",
            "2024-01-01T00:00:00Z,c1,2024-01-01T00:00:00+00:00,p.go,us-east-1,ZZZ,g6.xlarge,g6,0.8",
            "2024-01-01T00:00:00Z,c1,2024-01-01T00:00:00+00:00,p.go,us-east-1,USD,x99.huge,x99,1.5",
            "2024-01-01T00:00:00Z,c1,2024-01-01T00:00:00+00:00,p.go,us-east-1,USD,g6e.xlarge,g6e,abc",
            "2024-01-01T00:00:00Z,,2024-01-01T00:00:00+00:00,p.go,us-east-1,USD,g4dn.xlarge,g4dn,0.526",
            "2024-01-01T00:00:00Z,c1,2024-01-01T00:00:00+00:00,,us-east-1,USD,g4dn.2xlarge,g4dn,0.752",
        ]
    else:
        header = "generated_at,commit,commit_date,region,currency,arm_sku_name,on_demand_linux_price_per_hour"
        rows = [
            "2024-01-01T00:00:00Z,c1,2024-01-01T00:00:00+00:00,eastus,USD,Standard_ND96asr_v4,27.197",
            "2024-01-01T00:00:00Z,c1,2024-01-01T00:00:00+00:00,eastus,USD,Standard_NC6,0",
            "2024-01-01T00:00:00Z,c1,2024-01-01T00:00:00+00:00,eastus,USD,Standard_NC12,-1",
            "2024-01-01T00:00:00Z,c1,2024-01-01T00:00:00+00:00,eastus,ABC,Standard_NC24,1",
            "2024-01-01T00:00:00Z,c1,2024-01-01T00:00:00+00:00,eastus,USD,Standard_Unknown_v9,1.5",
            "2024-01-01T00:00:00Z,c1,2024-01-01T00:00:00+00:00,eastus,USD,Standard_NC24r,abc",
            "2024-01-01T00:00:00Z,,2024-01-01T00:00:00+00:00,eastus,USD,Standard_NC4as_T4_v3,0.526",
        ]
    p = tmp_path / "k.csv"
    p.write_text(header + "\n" + "\n".join(rows) + "\n")
    out = parser(p)
    # lines 8 (and 9 for AWS, whose URL also needs source_path): a price with no source is a reject, not a
    # row whose empty source withheld every publication
    assert [(r.line, r.rule) for r in out.rejects] == [
        (3, "zero_price"),
        (4, "negative_price"),
        (5, "unknown_currency"),
        (7, "non_numeric"),
        (8, "missing_source"),
    ] + ([(9, "missing_source")] if parser is parse_aws else [])
    assert all(out.tables["gpu_price_observations"].column("source").to_pylist())
    skus = out.tables["gpu_price_observations"].column("sku").to_pylist()
    assert len(skus) == 2 and skus[1] in (
        "x99.huge",
        "Standard_Unknown_v9",
    )  # unknown SKU kept: mapping is later
