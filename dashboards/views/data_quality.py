"""Data quality: the published run's checks, quarantined rows per source, and stale prices."""

from __future__ import annotations

import streamlit as st

from dashboards import ui
from warehouse import serving

path = ui.serving_db()
st.title("Data quality")

pub = ui.load(serving.publication, path)
if pub is not None:
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Checks passed", f"{pub.get('checks_passed')}/{pub.get('checks_run')}")
    c2.metric("Warnings", f"{pub.get('checks_warned', 0)}")
    c3.metric("Run", str(pub["run_id"]))
    c4.metric("Published", ui.fmt_time(pub["published_at"]))
    st.caption(f"Tables published: {pub.get('tables_published') or 'n/a'}")

st.subheader("Check results")
checks = ui.guard(serving.check_results, path)
if checks is not None:
    not_passed = checks[checks["status"] != "pass"]
    if not_passed.empty:
        st.success(f"All {len(checks)} checks passed.")
    else:
        warned = int((not_passed["status"] == "warn").sum())
        st.warning(f"{warned} warnings and {len(not_passed) - warned} failed non-blocking checks of {len(checks)} "
                   "(a blocking failure would have withheld this publication). Each is listed below with what it found.")
        for row in not_passed.itertuples(index=False):
            with st.expander(f"{row.status.upper()} · {row.check_name} ({row.target})"):
                st.write(row.detail)
                found = ui.guard(serving.check_failures, path, row.check_name)
                if found is not None and not found.empty:
                    st.dataframe(found, hide_index=True)
    with st.expander(f"All {len(checks)} check results"):
        st.dataframe(checks, hide_index=True)

st.subheader("Quarantined rows per source")
rejects = ui.guard(serving.rejects_by_source, path)
if rejects is not None:
    if rejects.empty:
        st.success("No rejected rows.")
    else:
        st.metric("Rejected rows", f"{int(rejects['rejected_rows'].sum()):,}")
        st.table(rejects, hide_index=True)

st.subheader("Stale prices")
max_age = st.sidebar.number_input("Stale after (days)", min_value=1, max_value=365, value=7, key="dq_age")
stale = ui.guard(serving.stale_prices, path, int(max_age))
if stale is not None:
    if stale.empty:
        st.success(f"Every current price was observed within {max_age} days of the publication.")
    else:
        st.warning(f"{len(stale)} current prices were last observed more than {max_age} days before the publication.")
        st.table(ui.to_float(stale), hide_index=True)
