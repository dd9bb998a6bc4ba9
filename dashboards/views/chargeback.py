"""Chargeback: the three figures, per team and month on both bases, reconciled to the invoice both ways,
budget consumed by chargeback and by all-in showback, CSV export."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import streamlit as st

from dashboards import currency as money_view
from dashboards import filters, money, ui
from reporting.formatting import basis_label, column_label, fmt_money
from reporting.safe_text import md_text
from warehouse import serving, serving_screens

MONEY = ["total_cost", "billed_cost", "amortised_cost", "unused_commitment", "direct_cost", "shared_cost",
         "idle_cost", "api_cost", "credits", "tax", "budget_monthly", "budget_remaining", "forecast_month_end"]
PRINTED = ["total_cost", "billed_cost", "direct_cost", "shared_cost", "idle_cost", "api_cost", "credits", "tax",
           "unused_commitment"]
PARTS = {"direct_cost": "direct", "shared_cost": "shared", "idle_cost": "idle", "api_cost": "API spend",
         "credits": "credits", "tax": "tax", "unused_commitment": "unused commitment"}

path = ui.serving_db()
st.title("Chargeback")
st.caption("One row per team, billing period and currency. '(unallocated)' and '(idle)' rows carry cost no team "
           "owns yet, so a period's rows add up to the invoice; they are not counted as teams.")

sel = filters.shared(path, "chargeback", use=("team", "month", "currency"))
team, month, currency = sel.team, sel.month, sel.currency
cur = currency or ""
money_view.rates_caption(path, money_view.REPORTING if sel.converted else money_view.NATIVE)

figures = ui.guard(serving.figures, path, team=team, start=month, end=month, currency=sel.fetch_currency)
if sel.converted:
    figures = money_view.convert(figures, path, ["invoice", "chargeback", "showback"])
    money_view.not_converted(figures, cur)
money.three_figures(figures, currency, team)
if not sel.converted:
    money.bridge(path, month, currency, team)

rows = ui.guard(serving.chargeback, path, team=team, month=month, currency=sel.fetch_currency)
if sel.converted:
    rows = money_view.convert(rows, path, MONEY, period="billing_period_start")
    rows = rows[rows["currency"] == currency] if rows is not None and not rows.empty else rows
if rows is not None:
    c1, c2 = st.columns(2)
    c1.metric("Teams", int(rows.loc[~rows["team_id"].str.startswith("("), "team_id"].nunique()),
              help="Named teams only: '(unallocated)' and '(idle)' are not teams.")
    c2.metric("Charge lines", f"{int(rows['charge_lines'].sum()):,}" if "charge_lines" in rows else "n/a")
    for basis in sorted(set(rows["basis"].dropna())) if "basis" in rows else []:
        st.caption(f"Chargeback (total) = {basis_label(basis)} + API spend. Invoice share (billed) is the same "
                   "allocation on BilledCost; both are kept.")
    notes = []
    for r in rows[rows["team_id"].str.startswith("(") & (rows["total_cost"] < 0)].itertuples(index=False):
        # A negative row no team owns puzzles every reader: name what makes it up.
        parts = [f"{label} {fmt_money(getattr(r, c), r.currency)}" for c, label in PARTS.items()
                 if c in rows and pd.notna(getattr(r, c)) and getattr(r, c) != 0]
        notes.append(f"- {md_text(r.team_id)} {ui.month(r.billing_period_start)}: {fmt_money(r.total_cost, r.currency)} = "
                     f"{' + '.join(parts) or 'no component'}")
    if notes:
        st.info("Negative rows no team owns: credits (and the tax on them) on bill lines that no team's usage "
                "carries.\n" + "\n".join(notes))
    # The header names the currency, so cells are plain amounts; budget columns are in the section below and
    # every published column is in the CSV.
    shown = ui.money_table(rows, MONEY, with_currency=False)
    shown["billing_period_start"] = shown["billing_period_start"].map(ui.month)
    order = ["team_id", "billing_period_start", *[c for c in PRINTED if c in shown], "charge_lines"]
    shown = shown[[c for c in order if c in shown]]
    shown.columns = [column_label(c, currency) for c in shown.columns]

    st.subheader(f"Chargeback per team and month ({cur})")
    ui.table(shown, f"chargeback_{ui.month(month) if month else 'all'}_{cur}", raw=rows)
    if sel.converted:
        # native kept: which rows came in another billing currency and the month rate each converted at (the CSV
        # has native_currency and fx_rate on every row)
        foreign = rows[rows["native_currency"] != cur]
        if not foreign.empty:
            st.caption("Converted rows: " + "; ".join(
                f"{md_text(r.team_id)} {ui.month(r.billing_period_start)} billed in {r.native_currency}, "
                f"at {float(r.fx_rate):.6f}" for r in foreign.itertuples(index=False)) + ".")

st.subheader(f"Budget consumed ({cur})")
if sel.converted and "fct_team_budget_converted" in serving.schema(path):
    # every currency's spend against the budget, both in the reporting currency (fct_team_budget_converted)
    budgets = ui.guard(serving_screens.team_budgets_converted, path, team=team, month=month)
else:
    budgets = ui.guard(serving.team_budgets, path, team=team, month=month, currency=currency)
if budgets is not None:
    budgets = budgets[budgets["budget_monthly"].notna() & (budgets["budget_monthly"] != 0)]
if budgets is not None and not budgets.empty:
    flat = ui.to_float(budgets)
    flat["month"] = flat["period"].map(ui.month)
    long = pd.concat([
        pd.DataFrame({"team": flat["team_id"] + " " + flat["month"], "measure": label,
                      "consumed": flat[col] / flat["budget_monthly"],
                      "text": [f"{fmt_money(a, cur)} of {fmt_money(b, cur)} ({float(a / b):.1%})"
                               for a, b in zip(budgets[col], budgets["budget_monthly"])]})
        for col, label in (("chargeback_total", "Chargeback"), ("showback_total", "All-in showback"))])
    # % of budget, not amounts: a USD 250,000 budget would flatten a USD 0.11 actual to nothing.
    ui.plot(px.bar(long, x="consumed", y="team", color="measure", barmode="group", orientation="h", text="text",
                   title=f"Budget consumed by chargeback and by all-in showback ({cur})",
                   labels={"consumed": "Share of the monthly budget", "team": "Team and month", "measure": ""})
            .update_xaxes(tickformat=".0%", range=[0, max(1.0, float(long["consumed"].max())) * 1.45]).update_traces(textposition="outside", cliponaxis=False)
            .update_layout(height=140 + 46 * len(flat)))
    table = pd.DataFrame({
        "Team": budgets["team_id"], "Month": budgets["period"].map(ui.month),
        f"Budget ({cur})": [fmt_money(v, cur) for v in budgets["budget_monthly"]],
        f"Chargeback ({cur})": [fmt_money(v, cur) for v in budgets["chargeback_total"]],
        "Chargeback, % of budget": [f"{float(a / b):.1%}" for a, b in zip(budgets["chargeback_total"],
                                                                          budgets["budget_monthly"])],
        f"All-in showback ({cur})": [fmt_money(v, cur) for v in budgets["showback_total"]],
        "All-in showback, % of budget": [f"{float(a / b):.1%}" for a, b in zip(budgets["showback_total"],
                                                                              budgets["budget_monthly"])],
        f"Budget left after all-in showback ({cur})": [fmt_money(v, cur) for v in budgets["budget_remaining_showback"]],
    })
    ui.table(table, f"budgets_{cur}", raw=budgets)
    st.caption("A team can be within its chargeback budget while its work (all-in showback) costs more: run-priced "
               "work, estimates and labour are on no invoice.")
elif budgets is not None:
    st.caption("No team budget in this currency for this selection.")

st.subheader("Reconciliation to the invoice")
st.caption("Per billing period and currency, exact to the cent: (1) Σ the teams' invoice shares (billed) vs "
           "Σ FOCUS BilledCost; (2) Σ chargeback vs the invoice on the chargeback basis (BilledCost or "
           "EffectiveCost) + API spend (its own invoice).")
recon = ui.guard(serving.reconciliation, path)
# The invoice reconciles in its billing currency, to the cent: this section is never converted.
recon_cur = "" if sel.converted else cur
if recon is not None:
    if currency and not sel.converted:
        recon = recon[recon["currency"] == currency]
    if month:
        recon = recon[recon["period"] == month]
    broken = recon[~(recon["billed_reconciled"].astype(bool) & recon["total_reconciled"].astype(bool))]
    if broken.empty:
        st.success(f"All {len(recon)} period/currency totals reconcile to the invoice, on both the billed and the "
                   "chargeback basis.")
    else:
        st.error(f"{len(broken)} period/currency totals do not reconcile to the invoice: "
                 + ", ".join(f"{ui.month(p)} {c}" for p, c in zip(broken["period"], broken["currency"])) + ".")
    money_cols = ["invoice_billed", "chargeback_billed", "billed_difference", "invoice_total", "chargeback_total",
                  "total_difference"]
    shown = ui.money_table(recon, money_cols, with_currency=sel.converted)
    shown["period"] = shown["period"].map(ui.month)
    for flag in ("billed_reconciled", "total_reconciled"):
        shown[flag] = shown[flag].map({True: "yes", False: "NO"})
    # Nine columns fit at 1280 px; the basis, the invoice on it and the API spend are in the CSV.
    names = {"period": "Month", "invoice_billed": f"Invoice, Σ BilledCost ({recon_cur})",
             "chargeback_billed": f"Σ invoice share ({recon_cur})", "billed_difference": f"Difference ({recon_cur})",
             "billed_reconciled": "Reconciles", "invoice_total": f"Invoice on basis + API spend ({recon_cur})",
             "chargeback_total": f"Σ Chargeback ({recon_cur})", "total_difference": f"Difference ({recon_cur}) ",
             "total_reconciled": "Reconciles "}
    if sel.converted:
        names = {k: v.replace(" ()", "") for k, v in names.items()}
    ui.table(shown[list(names)].rename(columns=names), f"reconciliation_{cur}", raw=recon)

st.subheader("All currencies in one")
st.caption("Each figure stays in its billing currency above (the invoice reconciles there, to the cent). Here "
           "every currency is also converted into the reporting currency: invoice lines at the rate of their own "
           "charge day, chargeback and all-in showback at that month's effective invoice rate (ECB reference "
           "rates, the last business day within the lookback window; docs/cost_model.md).")
conv = ui.guard(serving_screens.money_converted, path)
if conv is not None and not conv.empty:
    rc = str(conv["reporting_currency"].dropna().iloc[0]) if conv["reporting_currency"].notna().any() else "USD"
    gaps = conv[conv["fx_gap_reason"].notna()]
    c1, c2, c3 = st.columns(3)
    for col, (label, field) in zip((c1, c2, c3), (("Invoice", "invoice_reporting"), ("Chargeback", "chargeback_reporting"),
                                                   ("All-in showback", "showback_reporting"))):
        col.metric(f"{label}, all currencies ({rc})",
                   "n/a (a rate is missing)" if len(gaps) else fmt_money(conv[field].dropna().sum(), rc))
    shown = pd.DataFrame({
        "Month": conv["period"].map(ui.month), "Currency": conv["currency"],
        "Invoice": [fmt_money(v, c) for v, c in zip(conv["invoice"], conv["currency"])],
        f"Invoice ({rc})": [fmt_money(v, rc) for v in conv["invoice_reporting"]],
        f"Chargeback ({rc})": [fmt_money(v, rc) for v in conv["chargeback_reporting"]],
        f"All-in showback ({rc})": [fmt_money(v, rc) for v in conv["showback_reporting"]],
        "Rate": [f"{float(v):.6f}" if pd.notna(v) else "no rate" for v in conv["effective_rate"]],
        "Rates used": [r if isinstance(r, str) else "" for r in conv["fx_basis"]],
    })
    ui.table(shown, f"money_in_{rc}", raw=conv)
    for r in gaps.itertuples(index=False):
        st.warning(f"Not converted: {md_text(r.fx_gap_reason)}")

st.subheader("Commitments: committed vs used")
commits = ui.guard(serving_screens.commitments, path)
if commits is None or commits.empty:
    st.caption("No FOCUS Contract Commitment dataset in the published data: nothing to compare.")
else:
    used = pd.DataFrame({
        "Commitment": commits["ContractCommitmentId"], "Contract": commits["ContractId"],
        "Category": commits["ContractCommitmentCategory"],
        "Committed": [fmt_money(v, c) if pd.notna(v) else f"{q:,.0f} {u}" for v, q, u, c in
                      zip(commits["x_committed_cost"], commits["x_committed_quantity"], commits["x_unit"],
                          commits["BillingCurrency"])],
        "Used": [fmt_money(v, c) if pd.notna(k) else f"{q:,.0f} {u}" for v, k, q, u, c in
                 zip(commits["x_applied_cost"], commits["x_committed_cost"], commits["x_applied_quantity"],
                     commits["x_unit"], commits["BillingCurrency"])],
        "Used, %": [f"{float(v):.1f} %" if pd.notna(v) else "n/a" for v in commits["x_used_pct"]],
        "Lines applied": commits["x_applied_lines"],
        "In the dataset": commits["x_in_dataset"].map({True: "yes", False: "only on the bill"}),
    })
    ui.table(used, "commitments", raw=commits)
    st.caption("Used = the cost (Spend commitments) or quantity (Usage commitments) the bill's ContractApplied "
               "entries applied to each commitment; a commitment is never counted as cost.")
