"""Billing gates at load: impossible bill lines quarantined with the bound they broke, a file naming no
currency named, credentials in tags kept only as their hash. Every figure below is worked out by
hand from the lines written here and warehouse/reference.py PLAUSIBILITY (USD: 1e9 per line,
1000 per instance-hour, unit price judged from 1 USD up; JPY bound x 400)."""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from sources.billing import azure_export, focus
from sources.secrets import is_secret, redact, scrub_output, scrub_text
from warehouse.reference import PLAUSIBILITY

HEADER = ("BillingPeriodStart,BillingPeriodEnd,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,"
          "EffectiveCost,BillingCurrency,PricingQuantity,PricingUnit,ProviderName,ChargeDescription,Tags\n")
P = "2025-04-01,2025-05-01,2025-04-02T00:00:00Z,2025-04-02T01:00:00Z"


def _line(category: str, billed: str, currency: str = "USD", qty: str = "1", unit: str = "Hours",
          tags: str = "", desc: str = "g6e.xlarge usage") -> str:
    return f"{P},{category},{billed},{billed},{currency},{qty},{unit},AWS,{desc},{tags}\n"


def _write(tmp_path: Path, *lines: str, header: str = HEADER, name: str = "bill.csv") -> Path:
    path = tmp_path / name
    path.write_text(header + "".join(lines))
    return path


def test_the_issue_quadrillion_line_is_quarantined_and_the_rest_loads(tmp_path: Path) -> None:
    path = _write(tmp_path,
                  _line("Usage", "1000000000000000.00"),  # line 2: the issue's line
                  _line("Usage", "700.00"),  # 700 USD/h < 1000: a big instance, plausible
                  _line("Usage", "26.00"))
    out = focus.parse(path)
    [rej] = out.rejects
    assert (rej.line, rej.rule, rej.column, rej.value) == (2, "implausible_amount", "BilledCost", "1000000000000000.0")
    assert "1,000,000,000.00 USD" in rej.message and "PLAUSIBILITY['max_line_amount']" in rej.message
    t = out.tables["billing_charges"]
    assert t["_source_line"].to_pylist() == [3, 4]
    assert sum(t["BilledCost"].to_pylist()) == Decimal("726.00")  # what the issue's run should have said


def test_unit_price_bound_hour_blocks_tiny_lines_credits_and_currency(tmp_path: Path) -> None:
    path = _write(tmp_path,
                  _line("Usage", "2500", qty="2"),  # 2: 1250 USD/h > 1000 -> implausible_unit_price
                  _line("Usage", "5000", qty="2", unit="10 Hours"),  # 3: 5000 / 20 h = 250 USD/h: loads
                  _line("Usage", "0.50", qty="0.0001"),  # 4: 5000 USD/h, but 0.50 < 1 USD: not judged
                  _line("Purchase", "2500", qty="2"),  # 5: not Usage: no unit price check; < 1e9: loads
                  _line("Credit", "-1500000000", qty=""),  # 6: |-1.5e9| > 1e9 -> implausible_amount
                  _line("Usage", "300000000000", currency="JPY", qty="", unit=""),  # 7: 3e11 < 1e9 x 400: loads
                  _line("Usage", "500000000000", currency="JPY", qty="", unit=""),  # 8: 5e11 > 4e11 -> quarantined
                  _line("Usage", "399999", currency="JPY", qty="1", unit="Hour"))  # 9: < 1000 x 400 JPY/h: loads
    out = focus.parse(path)
    assert [(r.line, r.rule, r.value) for r in out.rejects] == [
        (2, "implausible_unit_price", "1250.0"),
        (6, "implausible_amount", "-1500000000.0"),
        (8, "implausible_amount", "500000000000.0"),
    ]
    assert "1,000.00 USD" in out.rejects[0].message and "per hour" in out.rejects[0].message
    assert "400,000,000,000.00 JPY" in out.rejects[2].message
    assert out.tables["billing_charges"]["_source_line"].to_pylist() == [3, 4, 5, 7, 9]


def test_general_path_applies_the_same_gates(tmp_path: Path) -> None:
    """Parquet takes the general path: same quarantine."""
    csv_path = _write(tmp_path, _line("Usage", "1000000000000000.00"), _line("Usage", "1.00"))
    pq = tmp_path / "bill.parquet"
    duckdb.execute(f"copy (select * from read_csv('{csv_path}', all_varchar=true)) to '{pq}' (format parquet)")
    out = focus.parse(pq)
    assert [(r.line, r.rule) for r in out.rejects] == [(1, "implausible_amount")]  # Parquet: 1-based row
    assert out.row_count() == 1


def test_bounds_live_in_one_place() -> None:
    assert Decimal(PLAUSIBILITY["max_line_amount"]) == Decimal(1000000000)
    assert Decimal(PLAUSIBILITY["max_per_hour"]) == Decimal(1000)
    macro = (Path(__file__).resolve().parents[2] / "dbt" / "macros" / "billing_defaults.sql").read_text()
    assert "'max_per_gpu_hour': 100" in macro and "'bill_rate_tolerance': 0.10" in macro


def test_file_without_currency_is_named_once_and_loads(tmp_path: Path) -> None:
    header = HEADER.replace("BillingCurrency,", "")
    path = _write(tmp_path, "2025-04-01,2025-05-01,2025-04-02,2025-04-03,Usage,5,5,1,Hours,AWS,x,\n",
                  "2025-04-01,2025-05-01,2025-04-02,2025-04-03,Usage,7,7,1,Hours,AWS,x,\n", header=header)
    out = focus.parse(path)
    assert out.row_count() == 2
    [rej] = out.rejects
    assert (rej.line, rej.rule, rej.column) == (None, "missing_currency_column", "BillingCurrency")
    assert "its 2 rows are held out of the ledger (fct_billing_held_out)" in rej.message
    assert "policies.default_currency_by_account" in rej.message  # the fix is named


def test_rows_with_an_empty_currency_are_named_by_line(tmp_path: Path) -> None:
    # lines 2 and 4 name no currency (empty cells); line 3 names USD. (A blank " " is a row reject,
    # unknown_currency, before this gate.)
    out = focus.parse(_write(tmp_path, _line("Usage", "5", currency=""), _line("Usage", "6"),
                             _line("Usage", "7", currency="")))
    assert out.row_count() == 3
    [rej] = out.rejects
    assert (rej.line, rej.rule, rej.column) == (None, "missing_currency", "BillingCurrency")
    assert rej.message.startswith("2 of 3 rows have no BillingCurrency (lines 2, 4)")


def test_file_with_currency_has_no_currency_entry(tmp_path: Path) -> None:
    out = focus.parse(_write(tmp_path, _line("Usage", "5")))
    assert out.rejects == []


def test_azure_export_without_currency_column_is_named(public_data: Path) -> None:
    out = azure_export.parse(public_data / "focus/azure_export_headersets/MissingBrackets_values.csv")
    assert [(r.line, r.rule) for r in out.rejects] == [(None, "missing_currency_column")]


# ---- credentials in tags ---------------------------------------------------------------------

ANT = "sk-ant-api03-UNITTEST-0123456789abcdef"
AWS = "AKIAUNITTEST01234567"
GH = "ghp_UNITTEST0123456789abcdefXYZ"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1bml0dGVzdCJ9.c2lnbmF0dXJl"


def _tags(**kv: str) -> str:
    return '"' + json.dumps(kv).replace('"', '""') + '"'


def test_secret_tag_values_are_stored_as_their_sha256(tmp_path: Path) -> None:
    path = _write(tmp_path,
                  _line("Usage", "1", tags=_tags(**{"deploy-token": ANT, "team": "research"})),
                  _line("Usage", "1", tags=_tags(aws=AWS, DB_Password="hunter2", note="Bearer UNITTEST0123456789abc")),
                  _line("Usage", "1", tags=_tags(ci=GH, session=JWT, token_budget="unlimited", max_tokens="4096")))
    out, counts = scrub_output(focus.parse(path))  # what warehouse/ingest.py does before the raw load
    tags = [json.loads(t) for t in out.tables["billing_charges"]["Tags"].to_pylist()]
    # the digest is sha256 of the trimmed value, hex: what LiteLLM's parser keeps for an sk- key
    assert tags[0] == {"deploy-token": "sha256:" + hashlib.sha256(ANT.encode()).hexdigest(), "team": "research"}
    assert tags[1]["aws"] == redact(AWS) and tags[1]["DB_Password"] == redact("hunter2")
    assert tags[1]["note"] == redact("Bearer UNITTEST0123456789abc")
    assert tags[2] == {"ci": redact(GH), "session": redact(JWT), "token_budget": "unlimited", "max_tokens": "4096"}
    assert "UNITTEST" not in json.dumps(out.tables["billing_charges"].to_pylist(), default=str)
    assert counts == {"billing_charges.Tags": 3}  # cells: each of the three lines' Tags held one or more
    assert not any("UNITTEST" in w for w in out.warnings)


def test_same_digest_as_duckdb_sha256_used_by_litellm() -> None:
    assert redact(f"  {ANT} ") == "sha256:" + duckdb.execute("select sha256(?)", [ANT]).fetchone()[0]


def test_a_malformed_line_keeps_no_credential_in_its_reject(tmp_path: Path) -> None:
    bad = _line("Usage", "1", tags=_tags(**{"deploy-token": ANT, "password": "UNITTEST-pw"})).rstrip("\n") + ",surplus\n"
    out = focus.parse(_write(tmp_path, _line("Usage", "1"), bad))
    [rej] = out.rejects
    assert rej.rule == "malformed_row" and rej.line == 3
    assert "UNITTEST" not in (rej.value or "") + rej.message
    assert redact(ANT) in rej.value  # redacted before the 200-character cut


@pytest.mark.parametrize(("key", "value", "secret"), [
    ("x", "sk-proj-abcdefghijklmnop1234", True),
    ("x", "task-abcdefghijklmnopqrstu", False),  # 'sk-' inside a word is no key
    ("x", "risk-assessment-team-q3-2025", False),
    ("password", "hunter2", True),
    ("Client Secret", "x", True),
    ("secret_level", "12", False),  # numbers and booleans are not credentials
    ("api_token", "abcd1234efgh", True),
    ("token_budget", "unlimited", False),  # no digit: a word
    ("team", "research", False),
    ("bearer_note", "the bearer of bad news", False),
])
def test_is_secret(key: str, value: str, secret: bool) -> None:
    assert is_secret(key, value) is secret


def test_scrub_text_keeps_the_rest() -> None:
    assert scrub_text("MISSING COLUMNS: Expected 11 Found 3") == "MISSING COLUMNS: Expected 11 Found 3"
    assert scrub_text(f"a,{AWS},b") == f"a,{redact(AWS)},b"


def test_credentials_in_extra_columns_are_redacted(tmp_path: Path) -> None:
    header = HEADER.rstrip("\n") + ",x_DeployToken,x_Note,x_CostCenter\n"
    path = _write(tmp_path, _line("Usage", "1").rstrip("\n") + ",abc123def456ghi,Bearer UNITTEST0123456789abc,cc-1\n",
                  _line("Usage", "2").rstrip("\n") + ",,,cc-2\n", header=header)
    out, counts = scrub_output(focus.parse(path))  # what warehouse/ingest.py does before the raw load
    extra = [json.loads(x) for x in out.tables["billing_charges"]["x_extra"].to_pylist()]
    assert extra == [{"x_DeployToken": redact("abc123def456ghi"), "x_Note": redact("Bearer UNITTEST0123456789abc"),
                      "x_CostCenter": "cc-1"}, {"x_CostCenter": "cc-2"}]
    assert counts == {"billing_charges.x_extra": 1}  # cells changed: the first line's (two credentials in it)
