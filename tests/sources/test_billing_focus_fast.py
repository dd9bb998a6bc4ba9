"""FOCUS CSV one-pass reader (`focus_csv.py`) against the general all-VARCHAR path.

The general path (`focus._parse_general`: staging table + `engine.finish`) is the reference:
for every constructed file below the fast path must return the same rows, types, rejects
and warnings, including its rare branches (rescue of reader-rejected lines, re-read with
DECIMAL(38,12), hand-over of odd layouts).
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from sources.billing import focus, focus_csv

HEADER = ("BillingPeriodStart,BillingPeriodEnd,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,"
          "BillingCurrency,Tags,x_Foo,ChargeFrequency,ListCost\n")


def _row(i: int, cost: str = "1.50", start: str = "2024-01-01T00:00:00Z", end: str = "2024-01-01T01:00:00Z",
         cur: str = "USD", tags: str = '"{""a"":""1"", "" a"":""2""}"', cat: str = "Usage",
         freq: str = "usage-based", foo: str = "f", period: str = "2024-01-01") -> str:
    return f"{period},2024-02-01,{start},{end},{cat},{cost},{cur},{tags},{foo},{freq},{i}\n"


def _edge_rows() -> list[str]:
    rows = [_row(i) for i in range(40)]
    rows[3] = _row(3, cost="one fifty")                       # reader CAST reject -> rescue: non_numeric
    rows[5] = _row(5, cost="1234567.891")                     # beyond DECIMAL(18,12) -> rescue: kept exactly
    rows[7] = _row(7, start="2024-01-01T05:00:00+02:00")      # offset converted (03:00 > 01:00: reversed)
    rows[9] = _row(9, start="2024-01-01T00:00Z")              # no seconds: regex fallback
    rows[11] = _row(11, end="2023-02-01T30:00:00Z")           # invalid_timestamp
    rows[13] = _row(13, end="2023-12-01T00:00:00Z")           # period_reversed
    rows[15] = _row(15, cur=" usd ")                          # normalised to USD
    rows[17] = _row(17, cur="ZZZ")                            # unknown_currency
    rows[19] = "1,2,3\n"                                      # malformed_row
    rows[21] = _row(21, cost="")                              # missing_value
    rows[25] = _row(25, tags="notjson", cat="weird")          # tag + enum warnings
    rows[27] = _row(27, cost="1e-5", foo='"q""uote"')
    rows[31] = _row(31, cost="abc", end="bad")                # two rejects on one (rescued) line
    rows[33] = _row(33, cost="0.12345678901234567")           # rounded to 12 decimals
    rows[29] = _row(29, period="")                            # missing_value: FOCUS requires the billing period
    return rows


def _files(tmp: Path) -> dict[str, Path]:
    rows = _edge_rows()
    wide = [_row(i, cost=f"{1000000 + i}.25" if i % 3 == 0 else "2.5") for i in range(3000)]
    wide[10] = _row(10, cost="nope")
    multi = '2024-01-01,2024-02-01,2024-01-01T00:00:00Z,2024-01-01T01:00:00Z,Usage,1,USD,,"two\nlines",Usage-Based,3\n'
    texts = {
        "edge.csv": HEADER + "".join(rows),
        "truncated.csv": HEADER + "".join(rows) + '2024-01-01,2024-02-01,"2024-01-01T0',
        "wide.csv": HEADER + "".join(wide),                                        # re-read path
        "odd_with_reject.csv": HEADER + rows[0] + "\n" + _row(1, cost="x") + rows[2] + multi,  # general path
        "odd_no_reject.csv": HEADER + rows[0] + multi + rows[2] + "\n" + _row(4, start="2024-01-01T00:00:00+02:00"),
        "header_only.csv": HEADER,
        "duplicate_header.csv": HEADER.rstrip("\n") + ",x_Foo\n" + "".join(r.rstrip("\n") + ",dup\n" for r in rows[:3]),
    }
    out = {}
    for name, text in texts.items():
        (tmp / name).write_text(text)
        out[name] = tmp / name
    return out


@pytest.mark.parametrize("name", ["edge.csv", "truncated.csv", "wide.csv", "odd_with_reject.csv",
                                  "odd_no_reject.csv", "header_only.csv", "duplicate_header.csv"])
def test_fast_path_equals_general_path(tmp_path: Path, name: str) -> None:
    path = _files(tmp_path)[name]
    fast, general = focus.parse(path), focus._parse_general(path)
    assert fast.tables["billing_charges"].schema == general.tables["billing_charges"].schema
    assert fast.tables["billing_charges"].to_pylist() == general.tables["billing_charges"].to_pylist()
    assert fast.rejects == general.rejects
    assert fast.warnings == general.warnings


def test_edge_file_values(tmp_path: Path) -> None:
    out = focus.parse(_files(tmp_path)["edge.csv"])
    got = [(r.line, r.rule, r.column, r.value) for r in out.rejects]
    assert got == [
        (21, "malformed_row", None, "1,2,3"),
        (5, "non_numeric", "BilledCost", "one fifty"),
        (9, "period_reversed", "ChargePeriodEnd", "2024-01-01T01:00:00Z"),
        (13, "invalid_timestamp", "ChargePeriodEnd", "2023-02-01T30:00:00Z"),
        (15, "period_reversed", "ChargePeriodEnd", "2023-12-01T00:00:00Z"),
        (19, "unknown_currency", "BillingCurrency", "ZZZ"),
        (23, "missing_value", "BilledCost", None),
        (31, "missing_value", "BillingPeriodStart", None),
        (33, "invalid_timestamp", "ChargePeriodEnd", "bad"),
        (33, "non_numeric", "BilledCost", "abc"),
    ]
    rows = {r["_source_line"]: r for r in out.tables["billing_charges"].to_pylist()}
    assert len(rows) == 40 - 10 + 1  # 10 rejects (line 33 twice), nothing else dropped
    assert rows[7]["BilledCost"] == Decimal("1234567.891")  # rescued from the typed reader
    assert str(rows[11]["ChargePeriodStart"]) == "2024-01-01 00:00:00"  # `00:00Z` without seconds
    assert rows[17]["BillingCurrency"] == "USD"
    assert rows[35]["BilledCost"] == Decimal("0.123456789012")
    assert rows[2]["ChargeFrequency"] == "Usage-Based" and rows[2]["Tags"] == '{"a":"1"}'
    assert rows[29]["x_extra"] == '{"x_Foo":"q\\"uote"}'
    assert any("weird" in w for w in out.warnings) and any("near-duplicate" in w for w in out.warnings)


def test_many_large_amounts_read_again_wide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _files(tmp_path)["wide.csv"]
    attempts: list[set[str]] = []
    read = focus_csv._read
    monkeypatch.setattr(focus_csv, "_read", lambda *a: (attempts.append(set(a[-1])), read(*a))[1])
    out = focus.parse(path)
    assert attempts == [set(), {"BilledCost"}]  # 1,000 amounts >= 1e6: second read with DECIMAL(38,12)
    assert [(r.line, r.rule, r.value) for r in out.rejects] == [(12, "non_numeric", "nope")]
    con = duckdb.connect()
    con.register("t", out.tables["billing_charges"])
    plain = duckdb.connect().execute(
        f"select sum(BilledCost::decimal(38,12)) from read_csv('{path}', all_varchar=true) where BilledCost <> 'nope'"
    ).fetchone()[0]
    assert con.execute("select sum(BilledCost) from t").fetchone()[0] == plain


def test_odd_layout_with_reader_reject_uses_general_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Path] = []
    general = focus._parse_general
    monkeypatch.setattr(focus, "_parse_general", lambda p: (calls.append(p), general(p))[1])
    files = _files(tmp_path)
    out = focus.parse(files["odd_with_reject.csv"])  # blank line + bad amount: line numbers need the general path
    assert calls == [files["odd_with_reject.csv"]]
    assert [(r.line, r.rule) for r in out.rejects] == [(4, "non_numeric")]
    assert out.tables["billing_charges"].column("_source_line").to_pylist() == [2, 5, 6]
    calls.clear()
    out = focus.parse(files["odd_no_reject.csv"])  # odd layout alone stays on the fast path
    assert calls == []
    assert out.tables["billing_charges"].column("_source_line").to_pylist() == [2, 3, 5, 7]
