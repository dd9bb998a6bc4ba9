"""FOCUS parser on the real FOCUS sample and every FOCUS spec example, plus broken inputs."""

from __future__ import annotations

import gzip
import json
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from sources.billing import focus
from sources.common import UnreadableFile, read_head
from tests.contract_helpers import load_in_memory
from tests.sources.billing_helpers import billing_format

SAMPLE = "focus/focus_1.0_sample_1000_multicloud.csv"
SPEC = "focus/focus_spec_examples"


def _plain_totals(path: Path, where: str = "true") -> dict:
    """Billed totals per currency with a plain DuckDB read (independent of our parser)."""
    con = duckdb.connect()
    cur = "BillingCurrency" if "BillingCurrency" in [
        r[0] for r in con.execute(f"describe select * from read_csv('{path}', all_varchar=true)").fetchall()
    ] else "null"
    return dict(con.execute(
        f"select {cur}, sum(BilledCost::decimal(38,12)) from read_csv('{path}', all_varchar=true, "
        f"nullstr=['NULL','null']) where {where} group by 1"
    ).fetchall())


def _loaded_totals(out) -> dict:  # type: ignore[no-untyped-def]
    con = load_in_memory(out, "billing", fmt="focus")
    return dict(con.execute("select BillingCurrency, sum(BilledCost) from raw.billing_charges group by 1").fetchall())


def test_sample_rows_totals_and_contract(public_data: Path) -> None:
    path = public_data / SAMPLE
    assert billing_format(path) == "focus"
    out = focus.parse(path)
    assert out.rejects == []
    assert out.row_count() == 1000
    assert _loaded_totals(out) == _plain_totals(path)
    con = load_in_memory(out, "billing")
    assert con.execute("select count(*) from raw.billing_charges where BilledCost < 0").fetchone()[0] == 13
    by_provider = dict(con.execute("select ProviderName, count(*) from raw.billing_charges group by 1").fetchall())
    assert by_provider == {"AWS": 942, "Microsoft": 51, "Oracle": 7}
    cats = dict(con.execute("select ChargeCategory, count(*) from raw.billing_charges group by 1").fetchall())
    assert cats == {"Usage": 997, "Adjustment": 2, "Credit": 1}
    # 'Usage-based' (Oracle rows) is canonicalised.
    freq = {r[0] for r in con.execute("select distinct ChargeFrequency from raw.billing_charges").fetchall()}
    assert "Usage-based" not in freq and "Usage-Based" in freq
    credit = con.execute("select BilledCost from raw.billing_charges where ChargeCategory = 'Credit'").fetchone()[0]
    assert credit == Decimal("-2.6137")


def test_sample_first_row_values_and_lines(public_data: Path) -> None:
    out = focus.parse(public_data / SAMPLE)
    t = out.tables["billing_charges"].to_pylist()
    first = t[0]
    assert first["_source_line"] == 2 and t[-1]["_source_line"] == 1001
    assert first["BilledCost"] == Decimal("0.00000080000")
    assert first["ListUnitPrice"] == Decimal("0.0000004")
    assert first["AvailabilityZone"] is None  # literal NULL
    assert str(first["ChargePeriodStart"]) == "2024-09-18 22:00:00"
    assert first["SkuPriceId"] == "G95FST5FTYV3JSRX.JRTCKXETXF.VXGXCWQKTY"
    assert json.loads(first["x_extra"]) == {"Id": "11472"}
    assert first["x_focus_version"] == "1.0" and first["x_source_format"] == "focus"
    assert first["BillingAccountId"] == "1234567890123"


def test_sample_tags_near_duplicate_keys_merged(public_data: Path) -> None:
    out = focus.parse(public_data / SAMPLE)
    tags = [r["Tags"] for r in out.tables["billing_charges"].to_pylist() if r["Tags"]]
    merged = [json.loads(t) for t in tags if '"org"' in t]
    assert merged, "sample has rows with 'org' and ' org' tag keys"
    assert all(" org" not in d for d in merged)
    assert merged[0]["org"] == "trey"
    assert any("'org'" in w and "near-duplicate" in w for w in out.warnings)


SPEC_EXPECTED = {
    # file: (rows kept, rejected lines)
    "commitment_discount_purchase_scenario_1.csv": (1, []),
    "commitment_discount_purchase_scenario_2.csv": (2, [4]),
    "commitment_discount_purchase_scenario_3.csv": (3, [5]),
    "commitment_discount_usage_scenario_1.csv": (1, []),
    "commitment_discount_usage_scenario_2.csv": (1, []),
    "commitment_discount_usage_scenario_3.csv": (2, []),
    "commitment_discount_usage_scenario_4.csv": (2, []),
    "one_hundred_percent_utilization_with_commitment_discount_flexibility_with_1_resource.csv": (3, []),
    "one_hundred_percent_utilization_with_commitment_discount_flexibility_with_2_resources.csv": (3, []),
    "one_hundred_percent_utilization_without_commitment_discount_flexibility.csv": (2, []),
    "zero_percent_utilization_without_commitment_discount_flexibility.csv": (3, []),
}


@pytest.mark.parametrize("name", sorted(SPEC_EXPECTED))
def test_spec_examples(public_data: Path, name: str) -> None:
    path = public_data / SPEC / name
    assert billing_format(path) == "focus"
    rows, bad_lines = SPEC_EXPECTED[name]
    out = focus.parse(path)
    assert out.row_count() == rows
    # The spec examples carry no BillingCurrency column: the rows load into raw, ONE file-level entry
    # (line None) names the file in dq_rejects, and the ledger holds them out unless the registry
    # gives the account's currency.
    file_level = [r for r in out.rejects if r.line is None]
    assert [(r.rule, r.column) for r in file_level] == [("missing_currency_column", "BillingCurrency")]
    assert f"its {rows} rows are held out of the ledger" in file_level[0].message
    row_level = [r for r in out.rejects if r.line is not None]
    assert [r.line for r in row_level] == bad_lines
    for r in row_level:  # the spec's invalid hour 30
        assert (r.rule, r.column, r.value) == ("invalid_timestamp", "ChargePeriodEnd", "2023-02-01T30:00:00Z")
    assert _loaded_totals(out) == _plain_totals(path, "ChargePeriodEnd not like '%T30:%'")


def test_spec_example_blank_lines_give_true_line_numbers(public_data: Path) -> None:
    # Rows in this file are separated by blank lines: rows sit on lines 2, 4 and 6.
    name = "one_hundred_percent_utilization_with_commitment_discount_flexibility_with_1_resource.csv"
    out = focus.parse(public_data / SPEC / name)
    t = out.tables["billing_charges"].to_pylist()
    assert [r["_source_line"] for r in t] == [2, 4, 6]
    # `SkuPriceid` (lower-case id) is matched; x_ column kept in x_extra; literal null is NULL.
    assert t[0]["SkuPriceId"] == "VM_SMALL_COMMITTED_PURCHASE_NO_UPFRONT"
    assert json.loads(t[0]["x_extra"]) == {"x_CommitmentDiscountUnitPrice": "0.50"}
    assert t[0]["ConsumedQuantity"] is None and t[0]["CommitmentDiscountStatus"] is None
    assert t[0]["x_focus_version"] == "1.1"  # CommitmentDiscountQuantity is a FOCUS 1.1 column


HEADER = "BillingPeriodStart,BillingPeriodEnd,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,BillingCurrency\n"
GOOD = "2024-01-01,2024-02-01,2024-01-01T00:00:00Z,2024-01-01T01:00:00Z,Usage,1.50,USD\n"


def _write(tmp_path: Path, text: str, name: str = "f.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_text_in_numeric_column_is_rejected(tmp_path: Path) -> None:
    p = _write(tmp_path, HEADER + GOOD + GOOD.replace("1.50", "one fifty") + GOOD)
    out = focus.parse(p)
    assert out.row_count() == 2
    assert [(r.line, r.rule, r.column, r.value) for r in out.rejects] == [(3, "non_numeric", "BilledCost", "one fifty")]


def test_period_reversed_is_rejected(tmp_path: Path) -> None:
    bad = "2024-01-01,2024-02-01,2024-01-01T05:00:00Z,2024-01-01T01:00:00Z,Usage,2,USD\n"
    out = focus.parse(_write(tmp_path, HEADER + bad + GOOD))
    assert out.row_count() == 1
    assert [(r.line, r.rule) for r in out.rejects] == [(2, "period_reversed")]


def test_semicolon_file_is_unreadable_with_clear_message(tmp_path: Path) -> None:
    p = _write(tmp_path, HEADER.replace(",", ";") + GOOD.replace(",", ";"))
    assert focus.detect(p, read_head(p))
    with pytest.raises(UnreadableFile, match="wrong delimiter"):
        focus.parse(p)


def test_truncated_file_keeps_good_rows(tmp_path: Path) -> None:
    p = _write(tmp_path, HEADER + GOOD + GOOD + '2024-01-01,2024-02-01,"2024-01-01T0')
    out = focus.parse(p)
    assert out.row_count() == 2
    assert [(r.line, r.rule) for r in out.rejects] == [(4, "malformed_row")]
    assert [r["_source_line"] for r in out.tables["billing_charges"].to_pylist()] == [2, 3]


def test_missing_mandatory_columns_named(tmp_path: Path) -> None:
    p = _write(tmp_path, "BilledCost,ChargePeriodStart,ChargePeriodEnd\n1,2024-01-01,2024-01-02\n")
    with pytest.raises(UnreadableFile) as exc:
        focus.parse(p)
    for col in ("BillingPeriodStart", "BillingPeriodEnd", "ChargeCategory"):
        assert col in str(exc.value)


def test_quoted_newline_and_case_insensitive_header(tmp_path: Path) -> None:
    header = HEADER.lower().replace("billedcost", "BILLEDCOST").rstrip("\n") + ",ChargeDescription\n"
    rows = GOOD.rstrip("\n") + ',"two\nlines"\n' + GOOD.rstrip("\n") + ",x\n"
    out = focus.parse(_write(tmp_path, header + rows))
    t = out.tables["billing_charges"].to_pylist()
    assert [r["_source_line"] for r in t] == [2, 4]
    assert t[0]["ChargeDescription"] == "two\nlines" and t[0]["BilledCost"] == Decimal("1.5")


def test_gzip_and_parquet_match_csv(public_data: Path, tmp_path: Path) -> None:
    src = public_data / SAMPLE
    gz = tmp_path / "sample.csv.gz"
    with open(src, "rb") as fi, gzip.open(gz, "wb") as fo:
        shutil.copyfileobj(fi, fo)
    pq = tmp_path / "sample.parquet"
    duckdb.connect().execute(
        f"copy (select * from read_csv('{src}', nullstr='NULL')) to '{pq}' (format parquet)"
    )
    for p in (gz, pq):
        assert billing_format(p) == "focus"
        out = focus.parse(p)
        assert out.row_count() == 1000 and out.rejects == []
        assert _loaded_totals(out) == _plain_totals(src)
    lines = focus.parse(pq).tables["billing_charges"].column("_source_line").to_pylist()
    assert lines[:2] == [1, 2]  # Parquet: 1-based row index


def test_generated_export_parses_without_rejects(tmp_path: Path) -> None:
    from tools.generate.bulk_focus import generate_focus_csv

    p = generate_focus_csv(tmp_path / "g.csv", 2000, seed=1)
    out = focus.parse(p)
    assert out.row_count() == 2000 and out.rejects == []
    assert _loaded_totals(out) == _plain_totals(p)
