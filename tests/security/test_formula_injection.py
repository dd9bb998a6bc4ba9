"""Hostile team and workload names: inert in report CSVs, dashboard CSV downloads and dashboard tables.

A spreadsheet runs a text cell that begins with =, +, -, @, tab or CR as a formula (OWASP CSV injection), and
Streamlit renders Markdown in st.table cells and text elements. The fixture publication (the hand-written
serving fixture) has its teams and workloads renamed to such payloads in every published text column.
"""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from reporting.safe_text import FORMULA_STARTS, csv_cell, csv_frame, md_frame, md_text
from reporting.team_reports import write_team_reports
from tests.dashboards.serving_fixture import build_serving

REPO = Path(__file__).resolve().parents[2]
# fixture name -> hostile name; one payload per dangerous first character, plus a Markdown link.
PAYLOADS = {
    "ml-research": '=HYPERLINK("http://x","y")',
    "search": "+SUM(1+1)",
    "research": "@SUM(1)",
    "wl-train": "-2+3",
    "wl-serve": "\t=1+1",
    "(unallocated)": "\r=1+1",
}
LINK_TEAM = "[y](http://x)"  # extra teams: Markdown and HTML, not formulas
HTML_TEAM = '<a href="http://x">z</a>'


def hostile_serving(home: Path) -> Path:
    """The serving fixture with every published text cell equal to a fixture team or workload renamed."""
    db = build_serving(home)
    con = duckdb.connect(str(db))
    try:
        columns = con.execute("select table_name, column_name from information_schema.columns "
                              "where data_type = 'VARCHAR' and table_schema = 'main'").fetchall()
        tables = {t for (t,) in con.execute("select table_name from information_schema.tables "
                                              "where table_type = 'BASE TABLE' and table_schema = 'main'").fetchall()}
        for table, column in columns:
            if table not in tables:
                continue
            for old, new in PAYLOADS.items():
                con.execute(f'update "{table}" set "{column}" = ? where "{column}" = ?', [new, old])
        # The hand-written fixture predates the candidates' currency, which the GPU decision page's filter reads.
        con.execute("alter table fct_candidate_comparison add column if not exists currency varchar default 'USD'")
        con.execute("alter table fct_candidate_comparison add column if not exists monthly_cost decimal(38,12)")
        con.execute("update fct_candidate_comparison set monthly_cost = gpu_cost + storage_network + platform_labor "
                    "+ failure_loss")
        con.execute("alter table fct_memory_fit add column if not exists fit_status varchar")
        con.execute("update fct_memory_fit set fit_status = case when fits then 'fits' else 'does not fit' end")
        con.execute("alter table fct_capacity_options add column if not exists candidate varchar")
        con.execute("update fct_capacity_options set candidate = 'coreweave-l40s'")
        # Teams named as a Markdown link and as HTML, each with a chargeback row and bill lines of its own.
        for extra in (LINK_TEAM, HTML_TEAM):
            con.execute("insert into fct_chargeback_monthly select * replace (?::varchar as team_id) "
                        "from fct_chargeback_monthly where team_id = ? limit 1", [extra, PAYLOADS["search"]])
            con.execute("insert into ledger_focus select * replace (?::varchar as x_team) "
                        "from ledger_focus where x_team = ?", [extra, PAYLOADS["search"]])
    finally:
        con.close()
    return db


@pytest.fixture(scope="module")
def hostile_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("hostile") / "home"
    hostile_serving(home)
    return home


def _unsafe_cells(text: str) -> list[str]:
    """Cells a spreadsheet would run: text starting with a formula character that is not a plain number."""
    return [c for row in csv.reader(io.StringIO(text, newline="")) for c in row if csv_cell(c) != c]


@pytest.mark.parametrize("payload", [*PAYLOADS.values(), "=1+1", "-cmd|' /C calc'!A0", "\rx"])
def test_text_starting_with_a_formula_character_is_quoted(payload: str) -> None:
    assert csv_cell(payload) == "'" + payload


@pytest.mark.parametrize("value", ["-12.50", "-1,234.57", "+3", "1e-05", Decimal("-100.00"), -2.5, -3, None, True,
                                   "ml-research", "USD -5.00", "(unallocated)"])
def test_numbers_and_plain_text_are_left_alone(value: object) -> None:
    assert csv_cell(value) is value


def test_a_negative_amount_column_stays_numeric() -> None:
    df = pd.DataFrame({"team_id": ["=1+1", "ok"], "amount": [Decimal("-100.00"), Decimal(5)],
                       "flt": [-1.5, 2.0], "n": [-1, 2]})
    out = csv_frame(df)
    assert out["team_id"].tolist() == ["'=1+1", "ok"]
    assert out["amount"].tolist() == [Decimal("-100.00"), Decimal(5)]
    assert out["flt"].dtype == "float64" and out["n"].dtype == "int64"
    assert pd.read_csv(io.StringIO(out.to_csv(index=False)))["amount"].dtype == "float64"


def test_markdown_text_has_no_link_html_or_emphasis() -> None:
    assert md_text('=HYPERLINK("http://x","y")') == r'\=HYPERLINK\(\"http\://x\",\"y\"\)'
    assert md_text("[y](http://x)") == "\\[y\\]\\(http\\://x\\)"
    assert md_text("<a href=x>") == "\\<a href\\=x\\>"
    assert md_text("www.x.com") == "www\\.x\\.com"
    assert md_text("- item\nnext") == "\\- item next"
    assert md_text("-1,234.57") == "-1,234.57"
    frame = md_frame(pd.DataFrame({"Team (x)": ["*b*"], "n": [1]}))
    assert list(frame.columns) == ["Team \\(x\\)", "n"] and frame.iloc[0].tolist() == ["\\*b\\*", 1]


def test_report_csvs_quote_every_hostile_name(hostile_home: Path, tmp_path: Path) -> None:
    written = write_team_reports(hostile_home / "serving.duckdb", tmp_path / "reports")
    csvs = [p for p in written if p.suffix == ".csv"]
    assert csvs
    cells: set[str] = set()
    for path in csvs:
        text = path.read_bytes().decode("utf-8")  # read_text would turn a CR in a name into LF
        assert _unsafe_cells(text) == [], path
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        cells |= {r["team_id"] for r in rows} | {r["item"] for r in rows}
        # Amounts (credits are negative) stay plain numbers: finance loads them as they are.
        assert all(not r["value"].startswith("'") for r in rows), path
    for payload in PAYLOADS.values():
        assert "'" + payload in cells, payload
    assert LINK_TEAM in cells  # not a formula: left as it is in the CSV (the HTML escapes it)
    html = "".join(p.read_text(encoding="utf-8") for p in written if p.suffix == ".html")
    assert '<a href="http://x' not in html and "HYPERLINK(&quot;http://x" in html


PAGES = ["overview", "workloads", "gpu_decision", "prices", "chargeback", "anomalies", "data_quality", "reports"]


@pytest.fixture(scope="module")
def downloads(hostile_home: Path) -> dict[str, dict[str, bytes]]:
    """Every CSV download each page offers (AppTest, no browser), by page and file name."""
    from streamlit.testing.v1 import AppTest

    write_team_reports(hostile_home / "serving.duckdb", hostile_home / "reports")
    found: dict[str, dict[str, bytes]] = {}
    mp = pytest.MonkeyPatch()
    mp.setenv("GPU_LEDGER_HOME", str(hostile_home))
    try:
        import streamlit as st

        real = st.download_button

        for name in PAGES:
            seen: dict[str, bytes] = found.setdefault(name, {})

            def capture(label: str, data: bytes, *args: object, _seen: dict = seen, **kwargs: object) -> object:
                _seen[str(kwargs.get("file_name"))] = data if isinstance(data, bytes) else str(data).encode()
                return real(label, data, *args, **kwargs)

            mp.setattr(st, "download_button", capture)
            at = AppTest.from_file(str(REPO / "dashboards" / "views" / f"{name}.py"), default_timeout=120)
            at.run()
            errors = [e.value for e in at.exception]
            assert errors == [], (name, [str(e)[:300] for e in errors])
    finally:
        mp.undo()
    return found


def test_dashboard_csv_downloads_quote_every_hostile_name(downloads: dict[str, dict[str, bytes]]) -> None:
    every = {f"{page}/{file}": data.decode("utf-8") for page, files in downloads.items() for file, data in files.items()}
    assert len(every) >= 8, sorted(every)
    for name, text in every.items():
        assert _unsafe_cells(text) == [], name
    cells = {c for text in every.values() for row in csv.reader(io.StringIO(text, newline="")) for c in row}
    for payload in PAYLOADS.values():
        assert "'" + payload in cells, payload
        assert payload not in cells, payload


def test_dashboard_csv_keeps_negative_amounts_numeric(downloads: dict[str, dict[str, bytes]]) -> None:
    chargeback = next(t for f, t in downloads["chargeback"].items() if f.startswith("chargeback_"))
    df = pd.read_csv(io.BytesIO(chargeback))
    assert pd.api.types.is_numeric_dtype(df["credits"]) and df["credits"].min() < 0
    teams = {r["team_id"] for r in csv.DictReader(io.StringIO(chargeback.decode("utf-8"), newline=""))}
    assert teams >= {"'" + PAYLOADS["ml-research"], "'" + PAYLOADS["(unallocated)"]}


def test_dashboard_tables_show_names_literally(hostile_home: Path) -> None:
    """Printed tables (st.table renders Markdown) get escaped cells; shown, they read as the name itself."""
    from streamlit.testing.v1 import AppTest

    mp = pytest.MonkeyPatch()
    mp.setenv("GPU_LEDGER_HOME", str(hostile_home))
    try:
        at = AppTest.from_file(str(REPO / "dashboards" / "views" / "chargeback.py"), default_timeout=120)
        at.run()
    finally:
        mp.undo()
    teams = {v for t in at.table for v in t.value.iloc[:, 0].tolist()}
    assert md_text(LINK_TEAM) in teams and LINK_TEAM not in teams
    assert md_text(PAYLOADS["ml-research"]) in teams


def test_formula_characters_are_the_owasp_set() -> None:
    assert set(FORMULA_STARTS) == {"=", "+", "-", "@", "\t", "\r"}


def test_plotly_draws_names_as_text() -> None:
    """Plotly reads <a href> in legends, ticks and hover text: names reach it with '<' and '&' as entities."""
    import plotly.express as px

    from dashboards.ui import _inert_names

    df = pd.DataFrame({"month": ["2025-01", "2025-01"], "cost": [1.0, 2.0], "team": [HTML_TEAM, "R&D"]})
    fig = px.bar(df, x="month", y="cost", color="team")
    _inert_names(fig)
    assert [t.name for t in fig.data] == ['&lt;a href="http://x"&gt;z&lt;/a&gt;', "R&amp;D"]
    assert "<a " not in fig.data[0].hovertemplate and fig.data[0].hovertemplate.count("<br>") == 2
    fig = px.bar(df, x="cost", y="team", orientation="h")
    _inert_names(fig)
    assert list(fig.data[0].y) == ['&lt;a href="http://x"&gt;z&lt;/a&gt;', "R&amp;D"]
