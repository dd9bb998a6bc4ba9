"""AWS CUR legacy, Azure cost exports (every header set) and OCI cost report -> FOCUS."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from sources.billing import aws_cur, azure_export, oci_cost
from tests.contract_helpers import load_in_memory
from tests.sources.billing_helpers import billing_format

F = "focus"


def _plain_sum(path: Path, cost: str, where: str = "true") -> Decimal:
    """Independent total: plain DuckDB read_csv, no header mapping of ours."""
    return duckdb.connect().execute(
        f"select sum(\"{cost}\"::decimal(38,12)) from read_csv('{path}', all_varchar=true, null_padding=true) where {where}"
    ).fetchone()[0]


def _db(out):  # type: ignore[no-untyped-def]
    return load_in_memory(out, "billing")


# ---------------------------------------------------------------- AWS CUR legacy
def test_cur_sample(public_data: Path) -> None:
    path = public_data / F / "aws_cur_legacy_sample_anonymized.csv"
    assert billing_format(path) == "aws_cur_legacy"
    out = aws_cur.parse(path)
    assert out.rejects == [] and out.row_count() == 1281
    con = _db(out)
    totals = dict(con.execute("select BillingCurrency, sum(BilledCost) from raw.billing_charges group by 1").fetchall())
    assert totals == {"USD": _plain_sum(path, "lineItem/UnblendedCost")}
    cats = dict(con.execute("select ChargeCategory, count(*) from raw.billing_charges group by 1").fetchall())
    assert cats == {"Usage": 1269, "Tax": 12}
    assert con.execute("select sum(ListCost) from raw.billing_charges").fetchone()[0] == _plain_sum(path, "pricing/publicOnDemandCost")
    # No SP/RI rows in the sample: EffectiveCost equals unblended cost on every row.
    assert con.execute("select count(*) from raw.billing_charges where EffectiveCost <> BilledCost").fetchone()[0] == 0
    row = con.execute(
        "select ChargePeriodStart, ChargePeriodEnd, ProviderName, SubAccountId, x_focus_version, x_extra "
        "from raw.billing_charges order by _source_line limit 1"
    ).fetchone()
    assert str(row[0]) == "2023-11-01 00:00:00" and str(row[1]) == "2023-12-01 00:00:00"
    assert row[2:5] == ("AWS", "123412340534", "legacy-aws-cur")
    extra = json.loads(row[5])
    assert extra["identity/TimeInterval"] == "2023-11-01T00:00:00Z/2023-11-02T00:00:00Z"
    assert "lineItem/UnblendedCost" not in extra  # mapped columns are not repeated


# Every CUR names its billing period (FOCUS requires it: a line without one is a missing_value reject).
CUR_HEADER = ("bill/BillingPeriodStartDate,bill/BillingPeriodEndDate,lineItem/LineItemType,lineItem/UsageStartDate,"
              "lineItem/UsageEndDate,lineItem/UnblendedCost,savingsPlan/SavingsPlanEffectiveCost,lineItem/CurrencyCode,"
              "resourceTags/user:team\n")


P = "2023-11-01T00:00:00Z,2023-12-01T00:00:00Z,"  # the billing period of every hand-built CUR line


def test_cur_refund_credit_sp_and_bad_rows(tmp_path: Path) -> None:
    p = tmp_path / "cur.csv"
    p.write_text(CUR_HEADER
                 + P + "Refund,2023-11-01T00:00:00Z,2023-11-02T00:00:00Z,-5.0,,USD,\n"
                 + P + "SavingsPlanCoveredUsage,2023-11-01T00:00:00Z,2023-11-01T01:00:00Z,3.0,1.2,USD, ml \n"
                 + P + "Usage,2023-11-01T00:00:00Z,2023-11-01T01:00:00Z,abc,,USD,\n"
                 + P + "Usage,2023-11-02T00:00:00Z,2023-11-01T01:00:00Z,1.0,,USD,\n")
    out = aws_cur.parse(p)
    rows = out.tables["billing_charges"].to_pylist()
    assert [(r["ChargeCategory"], r["EffectiveCost"]) for r in rows] == [("Credit", Decimal(-5)), ("Usage", Decimal("1.2"))]
    assert rows[1]["PricingCategory"] == "Committed"
    assert json.loads(rows[1]["Tags"]) == {"user:team": " ml "}
    # 'abc' feeds BilledCost and EffectiveCost, so the one bad row carries two rejects.
    assert [(r.line, r.rule, r.column) for r in out.rejects] == [
        (4, "non_numeric", "BilledCost"), (4, "non_numeric", "EffectiveCost"), (5, "period_reversed", "ChargePeriodEnd"),
    ]


def test_a_cur_without_its_billing_period_rejects_every_line(tmp_path: Path) -> None:
    """FOCUS requires BillingPeriodStart and BillingPeriodEnd; a CUR cut without `bill/` columns cannot
    place its lines in an invoice month: each line a missing_value reject, named, nothing loaded (before,
    they loaded with no period and failed the blocking checks downstream, withholding every source)."""
    p = tmp_path / "cur.csv"
    p.write_text(CUR_HEADER.split(",", 2)[2] + "Usage,2023-11-01T00:00:00Z,2023-11-01T01:00:00Z,1.0,,USD,\n")
    out = aws_cur.parse(p)
    assert out.row_count() == 0
    assert [(r.line, r.rule, r.column) for r in out.rejects] == [
        (2, "missing_value", "BillingPeriodEnd"), (2, "missing_value", "BillingPeriodStart")]


# ---------------------------------------------------------------- AWS CUR in snake case (CUR 2.0, Athena)
def test_snake_case_names_follow_aws_rule() -> None:
    assert aws_cur.snake_name("lineItem/UnblendedCost") == "line_item_unblended_cost"
    assert aws_cur.snake_name("savingsPlan/SavingsPlanARN") == "savings_plan_savings_plan_a_r_n"
    assert aws_cur.snake_name("product/regionCode") == "product_region_code"
    assert aws_cur.snake_name("pricing/publicOnDemandCost") == "pricing_public_on_demand_cost"
    assert aws_cur.snake_name("product/servicename") == "product_servicename"


def test_the_real_cur_sample_in_snake_case_gives_the_same_charges(public_data: Path, tmp_path: Path) -> None:
    """The 1,281-line CUR 1.0 sample with every one of its 94 column names in CUR 2.0's snake case: the same
    rows, and every FOCUS column equal, but the format's own labels and the names of the unmapped columns."""
    import csv

    src = public_data / F / "aws_cur_legacy_sample_anonymized.csv"
    rows = list(csv.reader(src.open(newline="")))
    snake = tmp_path / "cur2.csv"
    with snake.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow([aws_cur.snake_name(h) for h in rows[0]])
        writer.writerows(rows[1:])
    assert billing_format(snake) == "aws_cur_snake"
    legacy, cur2 = aws_cur.parse(src).tables["billing_charges"], aws_cur.parse_snake(snake).tables["billing_charges"]
    assert cur2.num_rows == legacy.num_rows == 1281
    differ = {c for c in legacy.column_names if legacy.column(c).to_pylist() != cur2.column(c).to_pylist()}
    assert differ == {"x_focus_version", "x_source_format", "x_extra"}
    assert set(cur2.column("x_focus_version").to_pylist()) == {"legacy-aws-cur-snake"}
    first = json.loads(cur2.column("x_extra")[0].as_py())
    assert first["identity_time_interval"] == "2023-11-01T00:00:00Z/2023-11-02T00:00:00Z"
    assert sum(cur2.column("BilledCost").to_pylist()) == _plain_sum(src, "lineItem/UnblendedCost")
    # As Athena's Parquet holds it, typed by DuckDB's CSV sniffer (DOUBLE costs, TIMESTAMP WITH TIME ZONE
    # times, BIGINT accounts): the same charges; only the line (a Parquet row's index) and x_extra's text differ.
    parquet = tmp_path / "cur2.parquet"
    duckdb.connect().execute(f"copy (select * from read_csv('{snake}')) to '{parquet}' (format parquet)")
    assert billing_format(parquet) == "aws_cur_snake"
    typed = aws_cur.parse_snake(parquet)
    assert typed.rejects == [] and typed.warnings == []
    typed_table = typed.tables["billing_charges"]
    assert {c for c in cur2.column_names if cur2.column(c).to_pylist() != typed_table.column(c).to_pylist()} == {
        "_source_line", "x_extra"}


def test_cur2_resource_tags_map_and_athena_tag_columns(tmp_path: Path) -> None:
    """CUR 2.0 keeps tags in one map column (JSON text in a CSV), Athena's CUR one column per tag; both
    give the tag keys without AWS's `user_` (AWS-generated `aws_` keys keep theirs); empty values dropped.
    The refund, covered-usage and bad rows of the CUR 1.0 case above, in snake case: the same results."""
    header = ("bill_billing_period_start_date,bill_billing_period_end_date,line_item_line_item_type,"
              "line_item_usage_start_date,line_item_usage_end_date,line_item_unblended_cost,"
              "savings_plan_savings_plan_effective_cost,line_item_currency_code,resource_tags\n")
    p = tmp_path / "cur2.csv"
    p.write_text(header
                 + P + "Refund,2023-11-01T00:00:00Z,2023-11-02T00:00:00Z,-5.0,,USD,\n"
                 + P + 'SavingsPlanCoveredUsage,2023-11-01T00:00:00Z,2023-11-01T01:00:00Z,3.0,1.2,USD,'
                 + '"{""user_team"": "" ml "", ""aws_created_by"": ""IAMUser:x"", ""user_env"": """"}"\n'
                 + P + "Usage,2023-11-01T00:00:00Z,2023-11-01T01:00:00Z,abc,,USD,\n"
                 + P + "Usage,2023-11-02T00:00:00Z,2023-11-01T01:00:00Z,1.0,,USD,\n")
    out = aws_cur.parse_snake(p)
    rows = out.tables["billing_charges"].to_pylist()
    assert [(r["ChargeCategory"], r["EffectiveCost"]) for r in rows] == [("Credit", Decimal(-5)), ("Usage", Decimal("1.2"))]
    assert rows[0]["Tags"] is None and json.loads(rows[1]["Tags"]) == {"team": " ml ", "aws_created_by": "IAMUser:x"}
    assert [(r.line, r.rule, r.column) for r in out.rejects] == [
        (4, "non_numeric", "BilledCost"), (4, "non_numeric", "EffectiveCost"), (5, "period_reversed", "ChargePeriodEnd"),
    ]
    athena = tmp_path / "athena.csv"
    athena.write_text(header.replace(",resource_tags\n", ",resource_tags_user_team,resource_tags_user_cost_center\n")
                      + P + "Usage,2023-11-01T00:00:00Z,2023-11-01T01:00:00Z,2.0,,USD,ml,CC-1\n")
    tags = aws_cur.parse_snake(athena).tables["billing_charges"].to_pylist()[0]["Tags"]
    assert json.loads(tags) == {"team": "ml", "cost_center": "CC-1"}


# ---------------------------------------------------------------- Azure
AZ = F + "/azure_export_headersets"
AZURE_FILES = {
    # file: (rows, rejects, cost column for the independent total, currency). The two files with no
    # currency column carry one file-level `missing_currency_column` entry (line None, no row dropped).
    F + "/azure_ea_cost_export_sample_anonymized.csv": (27, 0, "CostInBillingCurrency", "CAD"),
    AZ + "/BOM.csv": (0, 1, None, None),
    AZ + "/Enterprise.csv": (1, 0, "CostInBillingCurrency", "CAD"),
    AZ + "/EnterpriseCamel.csv": (1, 0, "costInBillingCurrency", "USD"),
    AZ + "/German.csv": (1, 0, "PreTaxCost (PreTaxCost)", "USD"),
    AZ + "/MissingBrackets_values.csv": (1, 1, "costinbillingcurrency", None),
    AZ + "/PayAsYouGo.csv": (1, 0, "PreTaxCost", "USD"),
    AZ + "/Template_values.csv": (87, 1, "costinbillingcurrency", None),
    AZ + "/YA.csv": (1, 0, "costInBillingCurrency", "USD"),
}


@pytest.mark.parametrize("rel", sorted(AZURE_FILES))
def test_azure_every_header_set(public_data: Path, rel: str) -> None:
    path = public_data / rel
    assert billing_format(path) == "azure_cost_export"
    rows, rejects, cost, currency = AZURE_FILES[rel]
    out = azure_export.parse(path)
    assert out.row_count() == rows and len(out.rejects) == rejects
    if currency is None and rows:
        assert [(r.line, r.rule) for r in out.rejects] == [(None, "missing_currency_column")]
    if rows:
        con = _db(out)
        totals = dict(con.execute("select BillingCurrency, sum(BilledCost) from raw.billing_charges group by 1").fetchall())
        assert totals == {currency: _plain_sum(path, cost)}
        assert {r[0] for r in con.execute("select distinct ProviderName from raw.billing_charges").fetchall()} == {"Microsoft"}


def test_azure_bom_row_without_cost_is_rejected(public_data: Path) -> None:
    out = azure_export.parse(public_data / AZ / "BOM.csv")
    assert [(r.line, r.rule, r.column) for r in out.rejects] == [(2, "missing_value", "BilledCost")]


def test_azure_ea_sample_values(public_data: Path) -> None:
    out = azure_export.parse(public_data / F / "azure_ea_cost_export_sample_anonymized.csv")
    rows = out.tables["billing_charges"].to_pylist()
    r0, r1 = rows[0], rows[1]
    assert str(r0["ChargePeriodStart"]) == "2023-09-02 00:00:00" and str(r0["ChargePeriodEnd"]) == "2023-09-03 00:00:00"
    assert str(r0["BillingPeriodStart"]) == "2023-09-01 00:00:00" and str(r0["BillingPeriodEnd"]) == "2023-10-01 00:00:00"
    assert json.loads(r0["Tags"]) == {"tagA": "valueA", "tagB": "valueB", "tagC": "valueC"}  # braces added
    assert r0["ChargeFrequency"] == "Usage-Based" and r0["PricingCategory"] == "Standard"
    # '10K' unit: price is per 10,000; consumed = 0.0129 * 10000.
    assert (r1["PricingUnit"], r1["PricingQuantity"], r1["ConsumedQuantity"]) == ("10K", Decimal("0.0129"), Decimal(129))
    assert r1["BilledCost"] == Decimal("0.0000564902")  # 5.64902E-05 read exactly
    assert json.loads(r0["x_extra"])["AdditionalInfo"].startswith("{")
    assert sum(1 for r in rows if r["PricingCategory"] == "Dynamic") == 3  # Spot rows


def test_azure_german_and_multiplier(public_data: Path) -> None:
    r = azure_export.parse(public_data / AZ / "German.csv").tables["billing_charges"].to_pylist()[0]
    assert r["SubAccountId"] == "11111111-12ab-34dc-56ef-123456abcdef"  # Abonnement-GUID (SubscriptionGuid)
    assert (r["PricingUnit"], r["ConsumedUnit"], r["ConsumedQuantity"]) == ("100 Hours", "Hours", Decimal(300))
    assert r["x_focus_version"] == "legacy-azure-payg"
    e = azure_export.parse(public_data / AZ / "Enterprise.csv").tables["billing_charges"].to_pylist()[0]
    assert (e["ConsumedUnit"], e["ConsumedQuantity"]) == ("Hours", Decimal(100))
    assert str(e["BillingPeriodEnd"]) == "2021-06-01 00:00:00"  # 05/31/2021 inclusive -> exclusive
    mb = azure_export.parse(public_data / AZ / "MissingBrackets_values.csv").tables["billing_charges"].to_pylist()[0]
    assert json.loads(mb["Tags"])["resourceNameSuffix"] == "12345678"


# ---------------------------------------------------------------- OCI
def test_oci_sample(public_data: Path) -> None:
    path = public_data / F / "oci_cost_report_sample.csv"
    assert billing_format(path) == "oci_cost_report"
    out = oci_cost.parse(path)
    assert out.rejects == [] and out.row_count() == 506
    con = _db(out)
    totals = dict(con.execute("select BillingCurrency, sum(BilledCost) from raw.billing_charges group by 1").fetchall())
    assert totals == {"USD": _plain_sum(path, "cost/myCost")}
    r = out.tables["billing_charges"].to_pylist()[0]
    assert str(r["ChargePeriodStart"]) == "2023-11-13 10:00:00"  # '2023-11-13T10:00Z' (no seconds)
    assert str(r["ChargePeriodEnd"]) == "2023-11-13 11:00:00"
    assert str(r["BillingPeriodStart"]) == "2023-11-01 00:00:00"
    tags = json.loads(r["Tags"])
    assert tags["Oracle-Tags.CreatedBy"] == "default/phil.newman@oracle.com" and tags["Valtest.Cat"] == "boots"
    assert json.loads(r["x_extra"])["lineItem/backreferenceNo"] == "17053"
    assert r["ChargeClass"] is None and r["ConsumedQuantity"] == Decimal("0.083333333333")


def test_oci_correction_row(tmp_path: Path) -> None:
    p = tmp_path / "oci.csv"
    p.write_text("lineItem/referenceNo,lineItem/intervalUsageStart,lineItem/intervalUsageEnd,cost/myCost,"
                 "cost/currencyCode,lineItem/isCorrection,lineItem/backreferenceNo,tags/ns.k\n"
                 "a1,2023-11-13T10:00Z,2023-11-13T11:00:00Z,-0.5,USD,true,a0,v\n"
                 "a2,2023-11-13T10:00Z,2023-11-13T11:00:00Z,0.5,USD,false,,\n")
    rows = oci_cost.parse(p).tables["billing_charges"].to_pylist()
    assert [r["ChargeClass"] for r in rows] == ["Correction", None]
    assert json.loads(rows[0]["x_extra"])["lineItem/backreferenceNo"] == "a0"
    assert json.loads(rows[0]["Tags"]) == {"ns.k": "v"} and rows[1]["Tags"] is None
