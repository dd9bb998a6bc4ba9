"""What `gpu-ledger run` and `status` print: sources, checks and the three money figures."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import duckdb
from rich.console import Console
from rich.table import Table

from sources.billing.contract_commitments import FORMATS as NOT_BILL_FORMATS
from warehouse import serving
from warehouse.home import Home
from warehouse.publish import check_counts


def wide_console() -> Console:
    """A console as wide as the terminal; piped or captured output (no terminal) gets COLUMNS or 200 columns,
    never rich's 80, so tables and file names are not wrapped or cut for want of a terminal."""
    return Console(width=None if sys.stdout.isatty() else shutil.get_terminal_size((200, 24)).columns)


console = wide_console()


def checks_line(c: dict[str, int]) -> str:
    """'checks: 379 passed, 7 warnings, 0 failed (of 386)': a warning is never counted as passed."""
    failed = c["fail"] + c["error"]
    colour = "red" if failed else ("yellow" if c["warn"] else "green")
    return (f"checks: [{colour}]{c['pass']} passed, {c['warn']} warnings, {failed} failed[/{colour}] "
            f"(of {c['run']})")


def _converted_total(serving_db: Path) -> tuple[str, str, str, str] | None:
    """One row: every currency converted into the reporting currency (fct_money_reporting), or None
    when that table is not published; a figure with an unconverted part prints 'n/a (no rate)'."""
    if "fct_money_reporting" not in serving.schema(serving_db):
        return None
    df = serving.query(serving_db, "select max(reporting_currency) as rc, count(*) filter (where fx_gap_reason is not null) as gaps, "
                                   "sum(invoice_reporting) as i, sum(chargeback_reporting) as c, sum(showback_reporting) as s, "
                                   "count(*) filter (where invoice is not null and invoice_reporting is null) as i_gap "
                                   "from fct_money_reporting")
    r = df.iloc[0]
    if r["rc"] is None:
        return None
    fmt = lambda v, gap: "n/a (no rate)" if gap or v is None else f"{v:,.2f}"  # noqa: E731 - local formatter
    return (f"all, in {r['rc']}", fmt(r["i"], r["i_gap"]), fmt(r["c"], r["gaps"]), fmt(r["s"], r["gaps"]))


def print_money_story(serving_db: Path) -> None:
    """The three figures, named as on every page (Invoice -> Chargeback -> All-in showback), per
    currency, then the GPU-hours nobody could price: a gap is printed, never folded into $0."""
    table = Table(title="Money (whole publication, per currency)")
    for col in ("currency", "Invoice", "Chargeback", "All-in showback"):
        table.add_column(col, justify="left" if col == "currency" else "right")
    try:
        story = serving.money_story(serving_db)
    except serving.NotPublished as exc:
        console.print(f"[yellow]money figures not published: {exc}[/yellow]")
        return
    for r in story.itertuples(index=False):
        table.add_row(r.currency, *(f"{v:,.2f}" if v is not None else "n/a"
                                    for v in (r.invoice, r.chargeback, r.showback)))
    converted = _converted_total(serving_db)
    if converted is not None:
        table.add_row(*converted)
    console.print(table)
    basis = ", ".join(sorted(set(story["basis"].dropna()))) or "n/a"
    console.print(f"Invoice = provider BilledCost; Chargeback = invoice allocated to teams on the {basis} basis "
                  "+ API invoices; All-in showback adds run-priced work, estimates and labour (bridge: Chargeback page)")
    try:
        gaps = serving.unpriced_gpu_hours(serving_db)
    except serving.NotPublished:
        return
    for r in gaps.itertuples(index=False):
        console.print(f"[yellow]unpriced GPU-hours[/yellow] {r.gpu_hours:,.1f}: {r.reason}")


def print_summary(home: Path, run_id: str) -> None:
    """Rows per source, rejects, checks, total cost and where to look."""
    paths = Home(home)
    con = duckdb.connect(str(paths.ledger_db), read_only=True)
    try:
        per_family = con.execute(
            "select family, count(*) filter (where status = 'loaded'), sum(rows_loaded), sum(rejects), "
            "count(*) filter (where status <> 'loaded') from audit.file_loads group by family order by family"
        ).fetchall()
        checks = check_counts(con, run_id, catalog="ledger")
        problems = con.execute(
            "select source_file, message from audit.file_loads where status <> 'loaded' order by source_file"
        ).fetchall()
        # Datasets of a family that are not its charges (a FOCUS 1.3 Contract Commitment file in billing/):
        # their rows are in the family's count, so the summary names them.
        datasets = con.execute(
            "select format, count(*), sum(rows_loaded) from audit.file_loads where status = 'loaded' "
            "and format in (select unnest(?)) group by format order by format",
            [[f.name for f in NOT_BILL_FORMATS]]).fetchall()
    finally:
        con.close()
    table = Table(title="Sources")
    for col in ("family", "files", "rows", "rejected rows", "unreadable files"):
        table.add_column(col, justify="right" if col != "family" else "left")
    for fam, files, rows, rej, bad in per_family:
        table.add_row(fam, str(files), f"{int(rows or 0):,}", f"{int(rej or 0):,}", str(bad))
    console.print(table)
    described = {f.name: f.description for f in NOT_BILL_FORMATS}
    for fmt, files, rows in datasets:
        console.print(f"dataset, not charges: {described[fmt]}: {int(rows or 0):,} rows in {files} file(s) "
                      "(fct_contract_commitments, committed vs used in fct_contract_commitment_usage; never cost)")
    for name, msg in problems:
        console.print(f"[yellow]quarantined file[/yellow] {name}: {msg}")
    console.print(checks_line(checks))
    pub = serving.publication(paths.serving_db)
    if pub is not None:
        print_money_story(paths.serving_db)
        console.print(f"published at {pub['published_at']:%Y-%m-%d %H:%M:%S} UTC -> {paths.serving_db}")
    console.print(f"reports:   {paths.reports}")
    console.print(f"run log:   {paths.run_log}")
    console.print(f"dashboard: gpu-ledger dashboard --home {home}   (or: make dashboard)")
