"""Per-team reports: files per month and team, totals formatted, names sanitised, CSV exact."""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from reporting.team_reports import safe_name, write_team_reports


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_every_team_month_with_cost_gets_a_report_and_the_index_lists_them(serving_db: Path, tmp_path: Path) -> None:
    paths = write_team_reports(serving_db, tmp_path / "out")
    names = sorted(str(p.relative_to(tmp_path / "out")) for p in paths)
    # Chargeback rows: 2025-01 and 2025-02 x ml-research, search, (unallocated); showback adds research in
    # 2025-01 (750.00 of owned-hardware training, no invoice line at all): 7 team-months, 14 files + the index.
    expected = [("2025-01", t) for t in ("ml-research", "research", "search", "unallocated")] + [
        ("2025-02", t) for t in ("ml-research", "search", "unallocated")]
    assert names == sorted([f"{m}/{t}.{ext}" for m, t in expected for ext in ("html", "csv")] + ["index.html"])
    index = (tmp_path / "out" / "index.html").read_text()
    for m, t in expected:
        assert f'href="{m}/{t}.html"' in index and f'href="{m}/{t}.csv"' in index
    assert "7 reports" in index and "<script" not in index
    research = (tmp_path / "out" / "2025-01" / "research.html").read_text()
    # Invoice share 0, chargeback 0, all-in showback 750.00; the bridge line names the owned-hardware work.
    assert "Invoice (team&#x27;s share): USD 0.00" in research and "All-in showback: USD 750.00" in research
    assert "+ Run-priced work not on a bill" in research


def test_report_shows_three_figures_and_the_team_bridge(serving_db: Path, tmp_path: Path) -> None:
    write_team_reports(serving_db, tmp_path, team="ml-research", month="2025-02")
    html = (tmp_path / "2025-02" / "ml-research.html").read_text()
    # Invoice share 1200.00 (aws usage covered by the plan bills 0) + amortisation 300.00 = chargeback 1500.00
    assert "Invoice (team&#x27;s share): USD 1,200.00" in html and "Chargeback: USD 1,500.00" in html
    assert "+ Amortisation adjustments" in html and "USD 300.00" in html and "amortised (FOCUS EffectiveCost" in html
    rows = _csv(tmp_path / "2025-02" / "ml-research.csv")
    figs = {r["item"]: Decimal(r["value"]) for r in rows if r["section"] == "figures"}
    assert figs == {"Invoice": Decimal(1200), "Chargeback": Decimal(1500), "All-in showback": Decimal(1500)}
    write_team_reports(serving_db, tmp_path, team="search", month="2025-02")
    rows = _csv(tmp_path / "2025-02" / "search.csv")
    bridge = {(r["currency"], r["item"]): Decimal(r["value"]) for r in rows if r["section"] == "bridge"
              and r["metric"] == "running_total"}
    # USD: 600.50 share + 0 amortisation + 1.25 API = 601.75 chargeback; + 0 run-priced + 0 owned hardware
    # + 30 estimates + 0 labour + 25 idle not on a bill = 656.75 all-in showback.
    assert bridge[("USD", "04 Chargeback")] == Decimal("601.75")
    assert bridge[("USD", "05 Run-priced work not on a bill")] == Decimal("601.75")
    assert bridge[("USD", "06 Owned hardware")] == Decimal("601.75")
    assert bridge[("USD", "10 All-in showback")] == Decimal("656.75")
    assert bridge[("EUR", "10 All-in showback")] == Decimal("99.99")


def test_html_shows_total_publication_and_is_self_contained(serving_db: Path, tmp_path: Path) -> None:
    write_team_reports(serving_db, tmp_path, team="ml-research", month="2025-01")
    html = (tmp_path / "2025-01" / "ml-research.html").read_text()
    assert "Chargeback: USD 980.11" in html  # 980.105 rounds half-up on the exact Decimal
    assert "USD -100.00" in html and "USD 1,500.00" in html  # credit and budget
    assert "run-fixture-0042" in html and "2025-02-28 06:00:00" in html
    assert "wl-train" in html and "<svg" in html and "USD 400.00" in html  # 1200 / 3 accepted checkpoints
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")


def test_csv_rows_match_the_chargeback(serving_db: Path, tmp_path: Path) -> None:
    write_team_reports(serving_db, tmp_path, month="2025-02")
    rows = _csv(tmp_path / "2025-02" / "search.csv")
    totals = {r["currency"]: Decimal(r["value"]) for r in rows if r["section"] == "chargeback"
              and r["metric"] == "total_cost"}
    assert totals == {"USD": Decimal("601.75"), "EUR": Decimal("99.99")}  # USD 600.50 + 1.25 API spend
    budget = {(r["currency"], r["metric"]): Decimal(r["value"]) for r in rows if r["section"] == "budget"}
    assert budget[("USD", "forecast_month_end")] == Decimal(650)
    unit = {(r["item"], r["metric"]): r["value"] for r in rows if r["section"] == "unit_cost"}
    assert Decimal(unit[("wl-serve", "all_in_cost")]) == Decimal(650)
    assert {r["run_id"] for r in rows} == {"run-fixture-0042"}
    assert all("E-" not in r["value"] for r in rows)  # exact fixed-point text, never 0E-12


def test_unallocated_name_is_sanitised(serving_db: Path, tmp_path: Path) -> None:
    paths = write_team_reports(serving_db, tmp_path, team="(unallocated)", month="2025-01")
    assert [p.name for p in paths] == ["unallocated.html", "unallocated.csv", "index.html"]
    assert "Chargeback: USD 33.33" in paths[0].read_text()


def test_hostile_team_names_stay_inside_out_dir_and_are_escaped(serving_db: Path, tmp_path: Path) -> None:
    con = duckdb.connect(str(serving_db))
    for name in ("../../etc/<script>alert(1)</script>", "..-etc-script-alert-1-script"):
        con.execute("insert into fct_chargeback_monthly (team_id, billing_period_start, currency, total_cost, "
                    "charge_lines) values (?, '2025-01-01', 'USD', 1, 1)", [name])
    con.close()
    out = tmp_path / "out"
    paths = write_team_reports(serving_db, out, month="2025-01")
    assert paths[-1] == out / "index.html"
    paths = paths[:-1]
    assert all(p.resolve().parent == (out / "2025-01").resolve() for p in paths)
    hostile = [p for p in paths if p.suffix == ".html" and p.stem.startswith("etc-script")]
    assert len(hostile) == 2 and hostile[0].stem != hostile[1].stem  # collision resolved with a hash
    assert all("<script>" not in p.read_text() for p in [*hostile, out / "index.html"])


def test_minimal_publication_still_reports(minimal_serving: Path, tmp_path: Path) -> None:
    paths = write_team_reports(minimal_serving, tmp_path, team="ml-research", month="2025-01")
    html = paths[0].read_text()
    assert "Chargeback: USD 980.11" in html
    assert "Budgets are not published yet" in html and "Not published yet" in html


def test_bad_month_is_rejected(serving_db: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="YYYY-MM"):
        write_team_reports(serving_db, tmp_path, month="2025-1' or 1=1")


@pytest.mark.parametrize(("name", "safe"), [
    ("(unallocated)", "unallocated"), ("(idle)", "idle"), ("ml-research", "ml-research"),
    ("../../x", "x"), ("a b/c", "a-b-c"), ("...", "unnamed"),
])
def test_safe_name(name: str, safe: str) -> None:
    assert safe_name(name) == safe


def test_a_reading_block_shares_one_connection_and_one_publication(tmp_path: Path, monkeypatch) -> None:
    """`serving.reading`: the ~140 queries of a report run share one connection (opening the
    publication was most of a report's time), and a publication renamed in meanwhile is not mixed in."""
    from tests.dashboards.serving_fixture import build_serving
    from warehouse import serving, serving_conn

    path = build_serving(tmp_path / "home")
    opened = []
    real_connect = duckdb.connect
    monkeypatch.setattr(serving_conn.duckdb, "connect", lambda *a, **k: opened.append(a[0]) or real_connect(*a, **k))
    count = "select count(*) as n from ledger_focus"
    before = int(serving.query(path, count)["n"][0])
    assert len(opened) == 1
    with serving.reading(path):
        assert int(serving.query(path, count)["n"][0]) == before
        # a refresh renames a new publication into place: one row fewer
        other = tmp_path / "next.duckdb"
        con = real_connect(str(other))
        con.execute(f"attach '{path}' as old (read_only)")
        con.execute("create table ledger_focus as select * from old.ledger_focus limit 0")
        con.execute(f"insert into ledger_focus select * from old.ledger_focus limit {before - 1}")
        con.close()
        other.replace(path)
        assert int(serving.query(path, count)["n"][0]) == before  # the block's publication
        assert int(serving.query(path, count)["n"][0]) == before
    assert len(opened) == 2  # the block opened one connection for its three queries
    assert int(serving.query(path, count)["n"][0]) == before - 1  # after the block: the new publication


def test_a_reading_block_answers_a_repeated_query_once_with_a_copy(tmp_path: Path, monkeypatch) -> None:
    """Within a `reading` block the publication cannot change: the same query with the same parameters
    is run once (a team's series and workloads, asked by each of its monthly reports), and each caller
    gets its own frame; other parameters are another query."""
    from tests.dashboards.serving_fixture import build_serving
    from warehouse import serving, serving_conn

    path = build_serving(tmp_path / "home")
    ran = []
    real_frame = serving_conn._frame
    monkeypatch.setattr(serving_conn, "_frame", lambda con, sql, params: ran.append(params) or real_frame(con, sql, params))
    sql = "select count(*) as n from ledger_focus where x_team = ?"
    with serving.reading(path):
        first = serving.query(path, sql, ["search"])
        first["n"] = -1  # a caller changing its frame does not change the next caller's
        again = serving.query(path, sql, ["search"])
        other = serving.query(path, sql, ["ml-research"])
    assert ran == [["search"], ["ml-research"]]
    assert int(again["n"][0]) > 0 and int(again["n"][0]) == int(serving.query(path, sql, ["search"])["n"][0])
    assert int(other["n"][0]) != -1


def test_report_says_how_far_charges_go_and_counts_idle_as_waste(serving_db: Path, tmp_path: Path) -> None:
    write_team_reports(serving_db, tmp_path, team="search", month="2025-02")
    html = (tmp_path / "2025-02" / "search.html").read_text()
    # The fixture's charges run through 2025-02-03 (its API spend day; bill lines carry period starts only).
    assert "Charges through 2025-02-03" in html
    # search, February, USD: all-in = 600.50 + 1.25 (chargeback) + 30.00 (serving stack) + 25.00 (idle capacity)
    # = 656.75; waste = the idle 25.00 -> 25 / 656.75 = 3.8 %.
    assert "Idle cost: USD 25.00 · waste share (idle + retries + failures) of the all-in showback: 3.8%" in html
    assert "platform_labor" not in html and "idle_capacity" not in html  # components named in words
    assert "@media print" in html and "break-inside:avoid" in html
    # Links, not paths: its own CSV beside it and the index one folder up, both relative.
    assert '<a href="search.csv">' in html and '<a href="../index.html">' in html
    assert (tmp_path / "2025-02" / "search.csv").exists()


# A currency no team is charged in: ISO 4217 "XTS", the code reserved for testing, which no sample or
# provider export uses (asserted below before it is relied on).
NO_ROWS_CURRENCY = "XTS"


def _assert_slices_equal_own_queries(db: Path) -> int:
    """Every team-month slice of reporting.team_month_frames equals the per-team, per-month query's frame
    (rows, columns, dtypes, order); returns how many team-months were compared."""
    import pandas as pd

    from reporting.team_month_frames import CONVERTED, TeamMonthFrames, idle_and_waste
    from warehouse import serving, serving_overview, serving_screens

    frames = TeamMonthFrames(db)
    assert frames.charges_through == serving_screens.charges_through(db)
    keys = serving.report_keys(db)
    for team, period in zip(keys["team_id"], keys["period"]):
        end = (pd.Timestamp(period) + pd.offsets.MonthEnd(0)).date()
        own = {"charges": serving.chargeback(db, team=team, month=period),
               "units": serving.unit_costs(db, team=team, start=period, end=period),
               "util": serving.utilisation(db, team=team, start=period, end=end),
               "showback": serving.showback(db, team=team, month=period),
               "budgets": serving.team_budgets(db, team=team, month=period)}
        parts = frames.parts(team, period)
        for name, expected in own.items():
            pd.testing.assert_frame_equal(parts[name], expected, obj=f"{name} of {team} {period}")
        # idle cost, waste and all-in from the slice, as the query per report summed them; also in a
        # currency the team has no row in, where both give zeros
        held = sorted(set(parts["showback"]["currency"]))
        assert NO_ROWS_CURRENCY not in held
        assert idle_and_waste(parts["showback"], NO_ROWS_CURRENCY) == dict.fromkeys(("idle", "waste", "all_in"), 0)
        for currency in [*held, NO_ROWS_CURRENCY]:
            assert idle_and_waste(parts["showback"], currency) == serving_overview.idle_and_waste(
                db, team, period, currency), (team, period, currency)
        if CONVERTED in serving.schema(db):
            converted = serving.query(db, f"select * from {CONVERTED} where team_id = ? and period = ?::date",
                                      [team, period])
            pd.testing.assert_frame_equal(frames.converted_row(team, period), converted)
        else:
            assert frames.converted_row(team, period) is None
    return len(keys)


def test_read_once_slices_equal_each_team_months_own_queries(serving_db: Path) -> None:
    """The reports read each source whole once instead of ~8 queries per report (a year of history asked
    ~430 before): what each report gets must not change."""
    assert _assert_slices_equal_own_queries(serving_db) == 7  # the 7 team-months of the first test


def test_read_once_slices_equal_own_queries_on_the_sample_publication(sample_run: dict) -> None:
    """The same on the bundled samples' real publication (read only): several teams, months, bases and the
    reporting-currency conversion."""
    assert sample_run["ok"], sample_run["reason"]
    assert _assert_slices_equal_own_queries(Path(sample_run["home"]) / "serving.duckdb") >= 8
