"""Exchange-rate files: the ECB reference-rate history and plain rate CSVs, good and broken."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from sources.catalog import recognise
from sources.fx import ecb, plain_csv

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "inputs" / "fx"


def test_bundled_ecb_history_loads_every_quoted_cell() -> None:
    path = SAMPLES / "eurofxref-hist.csv"
    assert recognise(path, "fx").name == "ecb_reference_rates"
    out = ecb.parse(path)
    assert out.rejects == []
    rows = out.tables["fx_rates"].to_pylist()
    # 836 business days x the currencies quoted that day (N/A cells are no observation, not rejects)
    assert len(rows) == 25010 and any("N/A cells" in w for w in out.warnings)
    monday = {r["quote"]: Decimal(r["rate"]) for r in rows if str(r["rate_date"]) == "2025-04-14"}
    assert monday["USD"] == Decimal("1.1377") and monday["CAD"] == Decimal("1.5786")
    assert all(r["base"] == "EUR" for r in rows)


def test_ecb_bad_cells_are_rejected_one_by_one(tmp_path: Path) -> None:
    p = tmp_path / "eurofxref-hist.csv"
    p.write_text("Date,USD,CAD,\n"
                 "2025-04-15,1.1300,1.5700,\n"
                 "2025-04-14,1.1377,-1,\n"          # line 3: CAD <= 0
                 "2025-04-11,abc,1.5500,\n"         # line 4: USD not a number
                 "2025-04-10,2.2000,1.5400,\n"      # line 5: USD 2.20 after... (sorted by date) jump
                 "not-a-date,1.1,1.5,\n")           # line 6
    out = ecb.parse(p)
    rules = sorted((r.line, r.rule) for r in out.rejects)
    # Sorted by date the USD series is 2.2000 (04-10), 1.1377 (04-14), 1.1300 (04-15): the first kept
    # rate is 2.2000 and 1.1377 moves 48 % from it (> 35 %), so 1.1377 and then 1.1300 (49 %) are
    # rejected as jumps. (A wrong first value poisons the pair: the jump check names every later day.)
    assert rules == [(2, "rate_jump"), (3, "rate_jump"), (3, "rate_not_positive"), (4, "not_a_number"), (6, "bad_date")]
    kept = {(str(r["rate_date"]), r["quote"]) for r in out.tables["fx_rates"].to_pylist()}
    assert kept == {("2025-04-10", "USD"), ("2025-04-10", "CAD"), ("2025-04-11", "CAD"), ("2025-04-15", "CAD")}


def test_plain_rates_csv(tmp_path: Path) -> None:
    p = tmp_path / "treasury_rates.csv"
    p.write_text("date,base,quote,rate,source\n"
                 "2025-04-14,USD,JPY,150.0,treasury\n"
                 "2025-04-14,usd,cad,1.3868,\n"
                 "2025-04-14,USD,US,1.0,\n"      # line 4: not a currency pair
                 "2025-04-14,USD,EUR,0,\n")      # line 5: rate 0
    assert recognise(p, "fx").name == "fx_rates_csv"
    out = plain_csv.parse(p)
    assert sorted((r.line, r.rule) for r in out.rejects) == [(4, "bad_currency"), (5, "rate_not_positive")]
    rows = out.tables["fx_rates"].to_pylist()
    assert [(r["base"], r["quote"], r["rate"], r["source"]) for r in rows] == [
        ("USD", "JPY", "150.0", "treasury"), ("USD", "CAD", "1.3868", "treasury_rates.csv")]
