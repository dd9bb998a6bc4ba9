"""A small hand-written serving.duckdb: every published table with a few rows and exact money.

The numbers are chosen so that tests can be checked by hand:
- ml-research, 2025-01, USD: 1000.105 usage + 80.00 tax - 100.00 credit = 980.105 -> 'USD 980.11'
  (half-up on the exact Decimal; a float would give 980.10);
- 2025-02 USD has a savings plan: ml-research's aws usage is covered (BilledCost 0, EffectiveCost 300),
  the plan fee lands untagged on '(unallocated)' (BilledCost 400, EffectiveCost 0) and its unused part is
  its own line (BilledCost 0, EffectiveCost 60); search has 1.25 of API spend (fct_api_spend_daily);
- the chargeback is on the amortised basis: per period and currency Σ billed_cost = Σ BilledCost and
  Σ total_cost = Σ EffectiveCost + API spend (2025-02 USD: 2170.50 + 1.25 = 2171.75, while the invoice is 2210.50);
- the all-in showback adds work on no bill: research (no chargeback at all) has 750 of owned-hardware
  training in 2025-01; the bridge (fct_cost_bridge) is derived from these rows as the dbt model does;
- wl-serve's cheapest candidate (api-route, rank 1) misses the SLO, so the choice is coreweave-l40s.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

RUN_ID = "run-fixture-0042"
PUBLISHED_AT = "2025-02-28 06:00:00"
M = "decimal(38,12)"

LEDGER = [  # provider, team, workload, gpu, category, billed, effective, period, currency, commitment status
    ("aws", "ml-research", "wl-train", "H100", "Usage", "1000.105", "1000.105", "2025-01-01", "USD", None),
    ("aws", "ml-research", "wl-train", "H100", "Tax", "80.00", "80.00", "2025-01-01", "USD", None),
    ("aws", "ml-research", None, None, "Credit", "-100.00", "-100.00", "2025-01-01", "USD", None),
    ("coreweave", "search", "wl-serve", "L40S", "Usage", "500.25", "500.25", "2025-01-01", "USD", None),
    ("aws", "(unallocated)", None, None, "Usage", "33.333333333333", "33.333333333333", "2025-01-01", "USD", None),
    ("coreweave", "ml-research", "wl-train", "H100", "Usage", "1200.00", "1200.00", "2025-02-01", "USD", None),
    ("coreweave", "search", "wl-serve", "L40S", "Usage", "600.50", "600.50", "2025-02-01", "USD", None),
    ("aws", "(unallocated)", None, None, "Usage", "10.00", "10.00", "2025-02-01", "USD", None),
    ("aws", "ml-research", "wl-train", "H100", "Usage", "0", "300.00", "2025-02-01", "USD", "Used"),
    ("aws", "(unallocated)", None, None, "Purchase", "400.00", "0", "2025-02-01", "USD", None),
    ("aws", "(unallocated)", None, None, "Usage", "0", "60.00", "2025-02-01", "USD", "Unused"),
    ("ovh", "search", "wl-serve", "L40S", "Usage", "99.99", "99.99", "2025-02-01", "EUR", None),
]
# team, period, currency, billed_cost, amortised_cost, unused_commitment, direct, credits, tax, api, total (amortised
# + api), lines, budget, forecast
CHARGEBACK = [
    ("ml-research", "2025-01-01", "USD", "980.105", "980.105", "0", "1000.105", "-100.00", "80.00", "0", "980.105", 3,
     "1500", "980.105"),
    ("search", "2025-01-01", "USD", "500.25", "500.25", "0", "500.25", "0", "0", "0", "500.25", 1, "400", "500.25"),
    ("(unallocated)", "2025-01-01", "USD", "33.333333333333", "33.333333333333", "0", "33.333333333333", "0", "0", "0",
     "33.333333333333", 1, None, None),
    # billed 1200 + 0 (covered by the plan); amortised 1200 + 300
    ("ml-research", "2025-02-01", "USD", "1200.00", "1500.00", "0", "1500.00", "0", "0", "0", "1500.00", 2, "1500",
     "1600"),
    ("search", "2025-02-01", "USD", "600.50", "600.50", "0", "600.50", "0", "0", "1.25", "601.75", 2, "400", "650"),
    # billed 10 + 400 fee + 0 unused = 410; amortised 10 + 0 fee + 60 unused = 70
    ("(unallocated)", "2025-02-01", "USD", "410.00", "70.00", "60.00", "10.00", "0", "0", "0", "70.00", 3, None, None),
    ("search", "2025-02-01", "EUR", "99.99", "99.99", "0", "99.99", "0", "0", "0", "99.99", 1, None, "99.99"),
]
# team, period, currency, component, cost_basis, source, bridge_step, amount
SHOWBACK = [
    ("ml-research", "2025-01-01", "USD", "direct_cost", "amortised", "chargeback", "Chargeback", "1000.105"),
    ("ml-research", "2025-01-01", "USD", "credits", "amortised", "chargeback", "Chargeback", "-100.00"),
    ("ml-research", "2025-01-01", "USD", "tax", "amortised", "chargeback", "Chargeback", "80.00"),
    ("search", "2025-01-01", "USD", "direct_cost", "amortised", "chargeback", "Chargeback", "500.25"),
    ("(unallocated)", "2025-01-01", "USD", "direct_cost", "amortised", "chargeback", "Chargeback", "33.333333333333"),
    ("ml-research", "2025-01-01", "USD", "gpu_compute", "list-priced", "cost model", "Run-priced work not on a bill",
     "2000.00"),
    ("ml-research", "2025-01-01", "USD", "storage", "estimate", "cost model", "Estimates", "50.00"),
    ("ml-research", "2025-01-01", "USD", "platform_labor", "estimate", "cost model", "Platform labour", "100.00"),
    ("research", "2025-01-01", "USD", "gpu_compute", "owned-hardware", "cost model", "Run-priced work not on a bill",
     "750.00"),
    ("ml-research", "2025-02-01", "USD", "direct_cost", "amortised", "chargeback", "Chargeback", "1500.00"),
    ("search", "2025-02-01", "USD", "direct_cost", "amortised", "chargeback", "Chargeback", "600.50"),
    ("search", "2025-02-01", "USD", "api_cost", "billed", "chargeback", "Chargeback", "1.25"),
    ("(unallocated)", "2025-02-01", "USD", "direct_cost", "amortised", "chargeback", "Chargeback", "10.00"),
    ("(unallocated)", "2025-02-01", "USD", "unused_commitment", "amortised", "chargeback", "Chargeback", "60.00"),
    ("search", "2025-02-01", "USD", "serving_stack", "estimate", "cost model", "Estimates", "30.00"),
    ("search", "2025-02-01", "USD", "idle_capacity", "list-priced", "cost model", "Idle not on a bill", "25.00"),
    ("search", "2025-02-01", "EUR", "direct_cost", "amortised", "chargeback", "Chargeback", "99.99"),
]
BUDGETS = [("ml-research", "1500", "USD"), ("search", "400", "USD"), ("research", "500", "USD")]
# day, source, team, workload, gpu, provider, site, status, reason, gpu_hours, rate, currency, amount
UNPRICED = [
    ("2025-01-05", "training_run", "ml-research", "wl-train", "H100", "aws", "aws", "list-priced", None, 250.0,
     "8.00", "USD", "2000.00"),
    ("2025-01-20", "training_run", "research", None, "H100", None, "onprem-a", "owned-hardware", None, 375.0,
     "2.00", "USD", "750.00"),
    ("2025-01-10", "slurm_job", "ml-research", "wl-train", "H100", None, "slurm:hpc1", "unpriced",
     "no provider: slurm:hpc1 is on no bill line", 120.0, None, None, None),
    ("2025-01-12", "gpu_telemetry", "(unallocated)", None, "(unknown)", None, "telemetry:node7", "unpriced",
     "unknown GPU model", 36.5, None, None, None),
    ("2025-02-03", "kubernetes_job", "search", "wl-serve", "L40S", None, "k8s:prod", "unpriced",
     "no observed USD price for L40S", 10.0, None, None, None),
]
BRIDGE_STEPS = [(1, "Invoice", "start"), (2, "Amortisation adjustments", "add"), (3, "API spend", "add"),
                (4, "Chargeback", "subtotal"), (5, "Run-priced work not on a bill", "add"), (6, "Owned hardware", "add"),
                (7, "Estimates", "add"), (8, "Platform labour", "add"), (9, "Idle not on a bill", "add"),
                (10, "All-in showback", "total")]
# workload, team, type, period, gpu, storage, network, ckpt, serving, obs, labor, idle, retry, fail,
# all_in, produced, accepted, unit, effective, naive
UNIT_COSTS = [
    ("wl-train", "ml-research", "full fine-tune", "2025-01-01", 800, 50, 20, 30, 0, 0, 100, 60, 0, 140,
     "1200", 4, 3, "accepted checkpoint", "400", "200"),
    ("wl-train", "ml-research", "full fine-tune", "2025-02-01", 1000, 60, 20, 40, 0, 0, 100, 30, 0, 50,
     "1300", 5, 5, "accepted checkpoint", "260", "200"),
    ("wl-serve", "search", "real-time inference", "2025-01-01", 400, 10, 10, 0, 30, 10, 40, 80, 20, 0,
     "600", 100000, 96000, "accepted response", "0.00625", "0.004"),
    ("wl-serve", "search", "real-time inference", "2025-02-01", 500, 10, 10, 0, 30, 10, 40, 40, 10, 0,
     "650", 120000, 118000, "accepted response", "0.005508474576", "0.004166666667"),
]


def _money(v: object) -> str:
    return "null" if v is None else f"'{v}'::{M}"


def _lit(v: object) -> str:
    return "null" if v is None else (f"'{v}'" if isinstance(v, str) else str(v))


def _values(rows: list[tuple], kinds: str) -> str:
    """VALUES text for rows; kinds says per column: m = money, d = date, t = timestamp, else a literal."""
    out = []
    for row in rows:
        cells = []
        for v, k in zip(row, kinds):
            cells.append(_money(v) if k == "m" else f"{_lit(v)}::date" if k == "d" and v
                         else f"{_lit(v)}::timestamp" if k == "t" and v else _lit(v))
        out.append("(" + ", ".join(cells) + ")")
    return ",\n".join(out)


def build_serving(home: Path, minimal: bool = False, ok: bool = True) -> Path:
    """Write home/serving.duckdb and home/last_refresh.json; minimal = only the tables published today."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / "serving.duckdb"
    path.unlink(missing_ok=True)
    con = duckdb.connect(str(path))
    con.execute(f"""create table ledger_focus as select
        BilledCost, EffectiveCost, BilledCost as ListCost, BilledCost as ContractedCost,
        BillingCurrency, BillingPeriodStart, BillingPeriodStart as ChargePeriodStart, ChargeCategory, ProviderName,
        CommitmentDiscountStatus, 'Compute' as ServiceCategory, 'GPU instances' as ServiceName,
        'sku-' || ProviderName as SkuId, 'us-east-1' as RegionId, 'res-' || coalesce(x_workload_id, 'none') as ResourceId,
        x_team, x_workload_id, 'prod' as x_environment, x_gpu_model,
        case when x_gpu_model is null then null else 8 end as x_gpu_count,
        'focus.csv' as x_source_file, row_number() over () as x_source_line
        from (values {_values(LEDGER, 'sssssmmtss')})
        t(ProviderName, x_team, x_workload_id, x_gpu_model, ChargeCategory, BilledCost, EffectiveCost,
          BillingPeriodStart, BillingCurrency, CommitmentDiscountStatus)""")
    cb_cols = ("team_id, billing_period_start, currency, billed_cost, amortised_cost, unused_commitment, direct_cost, "
               "credits, tax, api_cost, total_cost, charge_lines, budget_monthly, forecast_month_end")
    # minimal = a publication from before API spend: no api_cost column, no fct_api_spend_daily, total = amortised.
    extra = "" if minimal else (", budget_monthly, budget_monthly - total_cost as budget_remaining, forecast_month_end,"
                                f" 0::{M} as shared_cost, 0::{M} as idle_cost, api_cost")
    con.execute(f"""create table fct_chargeback_monthly as select team_id, billing_period_start, currency,
        direct_cost, credits, tax, {"total_cost - api_cost as total_cost" if minimal else "total_cost"}, charge_lines, 'amortised' as basis, billed_cost, amortised_cost,
        unused_commitment {extra}
        from (values {_values(CHARGEBACK, 'sdsmmmmmmmmimm')})
        t({cb_cols})""")
    con.execute(f"""create table publication as select '{RUN_ID}' as run_id, '2025-02-28 05:40:00'::timestamp
        as started_at, '{PUBLISHED_AT}'::timestamp as published_at, 12::bigint as checks_run,
        11::bigint as checks_passed, 1::bigint as checks_warned, 0::bigint as checks_failed,
        'fct_chargeback_monthly,ledger_focus' as tables_published""")
    con.execute("""create table check_results as select * from (values
        ('cost_conserved', 'fct_chargeback_monthly', 'error', 'pass', true, 'ok'),
        ('not_null_team_id', 'fct_chargeback_monthly', 'error', 'pass', true, 'ok'),
        ('price_freshness', 'fct_gpu_price_history', 'warn', 'warn', false, '1 price older than 7 days'))
        t(check_name, target, severity, status, passed, detail)""")
    con.execute("""create table check_failures as select * from (values
        ('price_freshness', 'fct_gpu_price_history', 1, '{"sku": "gd-1xh100", "age_days": 9}'))
        t(check_name, target, row_number, failing_row)""")
    con.execute("""create table dq_rejects as select * from (values
        ('billing', 'focus_csv', 'h1', 'focus.csv', 17, 'BilledCost', 'abc', 'not_a_number', 'BilledCost is not a number',
         '2025-02-27 01:00:00'::timestamp),
        ('billing', 'focus_csv', 'h1', 'focus.csv', 18, 'BilledCost', '', 'missing', 'BilledCost missing',
         '2025-02-27 01:00:00'::timestamp),
        ('usage', 'dcgm', 'h2', 'dcgm.csv', 3, 'gpu_util', '140', 'out_of_range', 'utilisation above 100',
         '2025-02-26 01:00:00'::timestamp))
        t(source_family, format, file_hash, file_name, line, column_name, value, rule, message, first_seen)""")
    if not minimal:
        _build_full(con)
        _build_money(con)
    con.close()
    status = {"ok": ok, "run_id": "run-fixture-0043" if not ok else RUN_ID,
              "message": "blocking check cost_conserved failed" if not ok else "published",
              "finished_at": "2025-02-28T06:00:05Z"}
    (home / "last_refresh.json").write_text(json.dumps(status))
    return path


def _build_full(con: duckdb.DuckDBPyConnection) -> None:
    """The tables that land later in the project: unit costs, prices, utilisation, decisions."""
    comps = ("gpu_compute, storage, network, checkpointing, serving_stack, observability, platform_labor, "
             "idle_capacity, retry_waste, failure_waste")
    con.execute(f"""create table fct_workload_unit_cost as select workload_id, team_id, workload_type, period,
        'USD' as currency, {comps}, 0::{M} as queue_overhead, 0::{M} as moderation_or_quality_filtering,
        0::{M} as operator_review, all_in_cost, produced_outputs, accepted_outputs, unit_of_success,
        effective_unit_cost, naive_unit_cost, 'fixture' as unit_cost_note
        from (values {_values(UNIT_COSTS, 'sssdmmmmmmmmmmmiismm')})
        t(workload_id, team_id, workload_type, period, {comps}, all_in_cost, produced_outputs, accepted_outputs,
          unit_of_success, effective_unit_cost, naive_unit_cost)""")
    con.execute(f"""create table fct_gpu_price_history as select provider, sku, region, pricing_category, 'USD' as
        currency, gpu_model, gpu_count, price_per_hour::{M} as price_per_hour, price_per_gpu_hour::{M} as
        price_per_gpu_hour, valid_from::timestamp as valid_from, valid_to::timestamp as valid_to,
        last_observed_at::timestamp as last_observed_at, source from (values
        ('aws', 'p5.48xlarge', 'us-east-1', 'on-demand', 'H100', 8, '98.32', '12.29', '2024-11-01', '2025-01-15',
         '2025-01-14 00:00:00', 'aws_pricelist_offer'),
        ('aws', 'p5.48xlarge', 'us-east-1', 'on-demand', 'H100', 8, '55.04', '6.88', '2025-01-15', null,
         '2025-02-27 00:00:00', 'aws_pricelist_offer'),
        ('coreweave', 'gd-1xh100', 'us-east', 'on-demand', 'H100', 1, '4.76', '4.76', '2025-01-01', null,
         '2025-01-02 00:00:00', 'html_table'),
        ('coreweave', 'gd-1xl40s', 'us-east', 'spot', 'L40S', 1, '1.10', '1.10', '2025-01-01', null,
         '2025-02-27 00:00:00', 'html_table'))
        t(provider, sku, region, pricing_category, gpu_model, gpu_count, price_per_hour, price_per_gpu_hour,
          valid_from, valid_to, last_observed_at, source)""")
    con.execute("create table dim_gpu as select * from (values ('H100', 80), ('L40S', 48)) t(gpu_model, memory_gb)")
    con.execute("""create table fct_gpu_utilisation_daily as select day::date as day, team_id, workload_id, gpu_model,
        billed_gpu_hours, allocated_gpu_hours, used_gpu_hours, idle_gpu_hours, failed_job_gpu_hours,
        utilisation_pct from (values
        ('2025-01-10', 'ml-research', 'wl-train', 'H100', 100.0, 90.0, 70.0, 30.0, 10.0, 70.0),
        ('2025-01-11', 'search', 'wl-serve', 'L40S', 48.0, 48.0, 24.0, 24.0, 0.0, 50.0),
        ('2025-02-03', 'ml-research', 'wl-train', 'H100', 120.0, 120.0, 110.0, 10.0, 0.0, 91.7))
        t(day, team_id, workload_id, gpu_model, billed_gpu_hours, allocated_gpu_hours, used_gpu_hours,
          idle_gpu_hours, failed_job_gpu_hours, utilisation_pct)""")
    con.execute(f"""create table fct_api_spend_daily as select '2025-02-03'::date as day, 'search' as team_id,
        'wl-serve' as workload_id, 'openrouter' as provider, 'llama-3.1-70b' as model, 1000 as requests, 3 as failed,
        5 as retried, 200000 as input_tokens, 50000 as output_tokens, 1.25::{M} as cost, 'USD' as currency""")
    con.execute("""create table fct_benchmark_runs as select 'wl-serve' as workload_id, 'coreweave-l40s' as candidate,
        240.0 as p95_latency_ms""")
    con.execute(f"""create table fct_candidate_comparison as select workload_id, candidate, provider, gpu_model,
        gpu_count, pricing_category, route_kind, gpu_cost::{M} as gpu_cost, storage_network::{M} as storage_network,
        platform_labor::{M} as platform_labor, failure_loss::{M} as failure_loss, accepted_outputs,
        effective_unit_cost::{M} as effective_unit_cost, p95_latency_ms, memory_margin_pct, quality_acceptance,
        meets_slo, rank, basis, notes from (values
        ('wl-serve', 'api-route', 'openrouter', null, null, 'api', 'api', '2000', '50', '100', '280', 900000,
         '0.002700000000', 900.0, null, 0.93, false, 1, 'measured', 'misses p95 latency'),
        ('wl-serve', 'coreweave-l40s', 'coreweave', 'L40S', 2, 'on-demand', 'gpu', '1800', '120', '450', '80', 800000,
         '0.003062500000', 240.0, 12.0, 0.96, true, 2, 'measured', 'thin memory margin'),
        ('wl-serve', 'aws-h100', 'aws', 'H100', 1, 'on-demand', 'gpu', '3000', '100', '400', '50', 1000000,
         '0.003550000000', 180.0, 45.0, 0.97, true, 3, 'projected', 'include p95 latency'))
        t(workload_id, candidate, provider, gpu_model, gpu_count, pricing_category, route_kind, gpu_cost,
          storage_network, platform_labor, failure_loss, accepted_outputs, effective_unit_cost, p95_latency_ms,
          memory_margin_pct, quality_acceptance, meets_slo, rank, basis, notes)""")
    con.execute("""create table fct_memory_fit as select * from (values
        ('wl-serve', 'coreweave-l40s', 'L40S', 2, 70.0, 12.0, 2.5, 84.5, 96.0, 12.0, true),
        ('wl-serve', 'aws-h100', 'H100', 1, 35.0, 6.0, 2.0, 43.0, 80.0, 46.3, true))
        t(workload_id, candidate, gpu_model, gpu_count, weights_gb, kv_cache_gb, overhead_gb, required_gb,
          available_gb, margin_pct, fits)""")
    con.execute(f"""create table fct_capacity_options as select workload_id, option, break_even_utilisation,
        measured_utilisation, monthly_cost::{M} as monthly_cost, label from (values
        ('wl-serve', 'on-demand', 0.0, 0.62, '2470', 'baseline'),
        ('wl-serve', 'reserved-1y', 0.55, 0.62, '1650', 'reserve: measured above break-even'),
        ('wl-serve', 'api', 0.30, 0.62, '2430', 'API cheaper below 30%'))
        t(workload_id, option, break_even_utilisation, measured_utilisation, monthly_cost, label)""")
    con.execute("""create table dim_workload as select * from (values
        ('wl-serve', 'search', 'real-time inference', 'accepted response', 300.0, 0.95, 10.0, 'always-on'),
        ('wl-train', 'ml-research', 'full fine-tune', 'accepted checkpoint', null, 0.9, 5.0, 'scheduled batch'))
        t(workload_id, team_id, workload_type, unit_of_success, slo_p95_latency_ms, slo_min_quality_acceptance,
          slo_min_memory_margin_pct, operating_mode)""")


def _build_money(con: duckdb.DuckDBPyConnection) -> None:
    """The all-in showback, the bridge (derived as fct_cost_bridge derives it), budgets and unpriced usage."""
    con.execute(f"""create table fct_showback_monthly as select team_id, period, currency, component, cost_basis,
        source, bridge_step, amount, 1 as cost_lines from (values {_values(SHOWBACK, 'sdsssssm')})
        t(team_id, period, currency, component, cost_basis, source, bridge_step, amount)""")
    steps = ", ".join(f"({o}, '{s}', '{k}')" for o, s, k in BRIDGE_STEPS)
    con.execute(f"""create table fct_cost_bridge as
        with inv as (select cast(BillingPeriodStart as date) as period, BillingCurrency as currency,
                            sum(BilledCost) as billed, sum(EffectiveCost) as amortised from ledger_focus group by all),
             api as (select date_trunc('month', day)::date as period, currency, sum(cost) as api
                     from fct_api_spend_daily group by all),
             sb as (select period, currency, bridge_step, sum(amount) as amount from fct_showback_monthly
                    where source = 'cost model' group by all),
             months as (select period, currency from inv union select period, currency from api
                        union select period, currency from sb),
             d as (select m.period, m.currency, s.step_order, s.step, s.step_kind,
                          case s.step when 'Invoice' then coalesce(inv.billed, 0)
                               when 'Amortisation adjustments' then coalesce(inv.amortised - inv.billed, 0)
                               when 'API spend' then coalesce(api.api, 0)
                               when 'Chargeback' then 0 when 'All-in showback' then 0
                               else coalesce(sb.amount, 0) end as delta
                   from months m cross join (values {steps}) s(step_order, step, step_kind)
                   left join inv on inv.period = m.period and inv.currency = m.currency
                   left join api on api.period = m.period and api.currency = m.currency
                   left join sb on sb.period = m.period and sb.currency = m.currency and sb.bridge_step = s.step),
             r as (select *, sum(delta) over (partition by period, currency order by step_order) as rt from d)
        select period, currency, step_order, step, step_kind,
               (case when step_kind in ('subtotal', 'total') then rt else delta end)::{M} as amount, rt::{M} as running_total
        from r order by period, currency, step_order""")
    con.execute(f"""create table fct_team_budget_monthly as
        with cb as (select team_id, billing_period_start as period, currency, sum(total_cost) as c
                    from fct_chargeback_monthly group by all),
             sb as (select team_id, period, currency, sum(amount) as s from fct_showback_monthly group by all),
             b as (select * from (values {_values(BUDGETS, 'sms')}) t(team_id, budget, budget_currency)),
             k as (select team_id, period, currency from cb union select team_id, period, currency from sb)
        select k.team_id, k.period, k.currency,
               case when b.budget_currency = k.currency then b.budget end as budget_monthly,
               coalesce(cb.c, 0)::{M} as chargeback_total, coalesce(sb.s, 0)::{M} as showback_total,
               (case when b.budget_currency = k.currency then b.budget - coalesce(cb.c, 0) end)::{M}
                   as budget_remaining_chargeback,
               (case when b.budget_currency = k.currency then b.budget - coalesce(sb.s, 0) end)::{M}
                   as budget_remaining_showback
        from k left join cb using (team_id, period, currency) left join sb using (team_id, period, currency)
        left join b on b.team_id = k.team_id order by k.period, k.currency, k.team_id""")
    con.execute(f"""create table fct_off_bill_usage as select md5(concat_ws('|', day, source_kind, site)) as
        unpriced_usage_id, day::date as day, source_kind, team_id, workload_id, gpu_model, provider, site,
        pricing_status, reason, gpu_hours::double as gpu_hours, rate_per_gpu_hour, currency, amount,
        case when pricing_status = 'unpriced' then null else 'fixture price' end as price_source,
        null::timestamp as price_observed_at, coalesce(reason, 'fixture') as price_basis, 1 as work_items
        from (values {_values(UNPRICED, 'ssssssssssmsm')})
        t(day, source_kind, team_id, workload_id, gpu_model, provider, site, pricing_status, reason, gpu_hours,
          rate_per_gpu_hour, currency, amount)""")
    con.execute("create table fct_unpriced_usage as select * from fct_off_bill_usage where pricing_status = 'unpriced'")
