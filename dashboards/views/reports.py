"""Reports: the per-team chargeback/showback reports that exist in HOME/reports/<month>/<team>.html, with a
preview and their HTML and CSV for download."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboards import filters, ui
from reporting.team_reports import safe_name
from warehouse import serving

path = ui.serving_db()
folder = ui.home() / "reports"
st.title("Reports")
st.caption(f"Every refresh writes one report per team and month with any chargeback or showback to the folder "
           f"{folder}, as <month>/<team>.html (printable, self-contained) and .csv (exact amounts); `gpu-ledger report` "
           "rewrites them. This page lists the ones on disk.")

sel = filters.shared(path, "overview", use=("team", "month"))


def _reports(root: Path) -> pd.DataFrame:
    """Every <YYYY-MM>/<name>.html under root with its CSV and when it was written (UTC)."""
    rows = []
    for html in sorted(root.glob("*/*.html")) if root.is_dir() else []:
        if not re.fullmatch(r"\d{4}-\d{2}", html.parent.name):
            continue
        csv = html.with_suffix(".csv")
        written = datetime.fromtimestamp(html.stat().st_mtime, tz=UTC).replace(tzinfo=None)
        rows.append({"month": html.parent.name, "team": html.stem, "html": str(html),
                     "csv": str(csv) if csv.exists() else "", "written_at": written})
    return pd.DataFrame(rows, columns=["month", "team", "html", "csv", "written_at"])


reports = _reports(folder)
if sel.team is not None:
    reports = reports[reports["team"] == safe_name(sel.team)]
if sel.month is not None:
    reports = reports[reports["month"] == ui.month(sel.month)]

if reports.empty:
    st.info(f"No reports for this selection in {folder}. Run `gpu-ledger report` (or a refresh) to write them.")
else:
    pub = ui.load(serving.publication, path) or {}
    published = pd.Timestamp(pub["published_at"]) if pub.get("published_at") is not None else None
    older = [published is not None and pd.Timestamp(w) < published for w in reports["written_at"]]
    st.metric("Reports", f"{len(reports):,}")
    if any(older):
        st.warning(f"{sum(older)} reports were written before the current publication: run `gpu-ledger report` "
                   "to bring them up to date.")
    keys = [f"{m}/{t}" for m, t in zip(reports["month"], reports["team"])]
    # A link per report to this page with ?report=<month>/<team>: it opens the report's preview and downloads
    # (a browser will not follow a file:// link from a served page).
    table = pd.DataFrame({"Report": [f"?report={k}" for k in keys], "Month": reports["month"],
                          "Team": reports["team"], "Written": reports["written_at"].map(ui.fmt_time),
                          "Up to date": ["no, older than the publication" if o else "yes" for o in older],
                          # Relative to the folder named above: full paths would overflow the table.
                          "HTML file": [str(Path(h).relative_to(folder)) for h in reports["html"]]})
    ui.table(table, "reports", raw=reports, column_config={
        "Report": st.column_config.LinkColumn("Report", display_text=r"\?report=(.*)",
                                              help="Opens the report's preview and downloads")})
    if (folder / "index.html").exists():
        st.caption(f"The index of every report: {folder / 'index.html'}")

    labels = [f"{m} · {t}" for m, t in zip(reports["month"], reports["team"])]
    linked = st.query_params.get("report")
    chosen = st.selectbox("Report to open", labels, index=keys.index(linked) if linked in keys else None,
                          placeholder="Choose a report to preview it here", key="rp_report")
    if chosen is not None:
        row = reports.iloc[labels.index(chosen)]
        html = Path(row["html"])
        c1, c2 = st.columns(2)
        c1.download_button("Download HTML", html.read_bytes(), file_name=f"{row['month']}_{html.name}",
                           mime="text/html", key="rp_html", on_click="ignore", icon=":material/download:")
        if row["csv"]:
            c2.download_button("Download CSV (exact amounts)", Path(row["csv"]).read_bytes(),
                               file_name=f"{row['month']}_{Path(row['csv']).name}", mime="text/csv", key="rp_csv",
                               on_click="ignore", icon=":material/download:")
        # The report is our own file (written by reporting.team_reports, team names escaped), not user input.
        st.iframe(html, height="content")  # the whole report, never cut after a section
