"""GPU Ledger dashboards: `streamlit run dashboards/app.py`.

Reads only the published copy (HOME/serving.duckdb, read-only, one short connection per query)
and HOME/last_refresh.json for the banner. HOME is GPU_LEDGER_HOME, else ./warehouse/home.
"""

from __future__ import annotations

import sys
from pathlib import Path

# `streamlit run` puts only this folder on sys.path; the pages import `dashboards.*` from the repo root.
REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import streamlit as st

from dashboards import ui

st.set_page_config(page_title="GPU Ledger", layout="wide")

# The pages live in views/, not pages/: a `pages/` folder beside the entrypoint switches Streamlit to
# its legacy multipage mode until st.navigation first runs, so a bookmarked /chargeback hit right
# after a server start would run that page alone, without this banner or navigation.

PAGES = [
    st.Page("views/overview.py", title="Overview", url_path="overview", default=True),
    st.Page("views/workloads.py", title="Workloads", url_path="workloads"),
    st.Page("views/gpu_decision.py", title="GPU decision", url_path="gpu_decision"),
    st.Page("views/prices.py", title="Prices", url_path="prices"),
    st.Page("views/chargeback.py", title="Chargeback", url_path="chargeback"),
    st.Page("views/anomalies.py", title="Anomalies & forecast", url_path="anomalies"),
    st.Page("views/data_quality.py", title="Data quality", url_path="data_quality"),
    st.Page("views/reports.py", title="Reports", url_path="reports"),
]

page = st.navigation(PAGES)
ui.banner()
page.run()
