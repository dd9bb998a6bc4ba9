"""FOCUS 1.2 billing exports (one CSV per provider and billing period) and invoice_totals.csv.

Rows (all amounts exact DECIMAL, summed by DuckDB for the invoice totals):
- one compute line per node and hour the instance ran (partial hours for spot reclaims):
  on-demand (`Standard`), spot (`Dynamic`, 30-40 % of on-demand, varying by day) or covered by
  the savings plan (`Committed`, BilledCost 0, EffectiveCost at the committed rate);
- the savings plan's daily recurring fee (`Purchase`) and its unused share (`Usage` with
  CommitmentDiscountStatus `Unused`, EffectiveCost only);
- storage (`Storage`) and data transfer (`Networking`) per workload and day, tagged;
- a promotional credit per account and period (`Credit`, untagged) and sales tax (`Tax`).
Tags carry `team`/`workload`/`environment` keys matching the generated registry.
"""

from __future__ import annotations

import calendar
import hashlib
from datetime import timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from tools.generate.common import copy_sql, guid, sql_str
from tools.generate.fleet import Fleet

ACCOUNTS = {
    "aws": ("740512938846", "GPU Ledger Payer", "AWS", "Amazon Web Services, Inc.", "Amazon Web Services, Inc."),
    "azure": ("/providers/Microsoft.Billing/billingAccounts/58241937", "GPU Ledger EA", "Microsoft", "Microsoft",
              "Microsoft"),
}
REGION_NAMES = {"us-east-1": "US East (N. Virginia)", "eastus": "East US"}
COMPUTE_SERVICE = {"aws": "Amazon Elastic Compute Cloud", "azure": "Virtual Machines"}
STORAGE = {"aws": ("Amazon Elastic Block Store", "0.08"), "azure": ("Storage", "0.075")}
NETWORK = {"aws": ("AWS Data Transfer", "0.09"), "azure": ("Bandwidth", "0.087")}
TAX_RATE = {"aws": Decimal("0.0"), "azure": Decimal("0.06")}
# Monthly storage / network spend per workload (USD), as in the registry's assumptions.
MONTHLY_EXTRAS = {
    "chat-assistant-70b": (400, 250), "batch-summarise-70b": (300, 60), "llm-pretrain-7b": (2500, 400),
    "chat-ft-llama8b": (150, 20), "support-lora-8b": (40, 5), "search-embed": (120, 40),
    "product-images": (180, 90), "promo-video": (260, 120), "nightly-evals": (30, 10),
}
SAVINGS_PLAN_ID = "arn:aws:savingsplans::740512938846:savingsplan/5f0c6d1e-gpu-ledger-compute-sp"
COMMITTED_FACTOR = Decimal("0.6")
COMMITMENT_HEADROOM = Decimal("1.15")  # the plan was sized for 15 % more p5 capacity than is used

COLUMNS = (
    "AvailabilityZone", "BilledCost", "BillingAccountId", "BillingAccountName", "BillingAccountType",
    "BillingCurrency", "BillingPeriodEnd", "BillingPeriodStart", "ChargeCategory", "ChargeClass",
    "ChargeDescription", "ChargeFrequency", "ChargePeriodEnd", "ChargePeriodStart", "CommitmentDiscountCategory",
    "CommitmentDiscountId", "CommitmentDiscountName", "CommitmentDiscountQuantity", "CommitmentDiscountStatus",
    "CommitmentDiscountType", "CommitmentDiscountUnit", "ConsumedQuantity", "ConsumedUnit", "ContractedCost",
    "ContractedUnitPrice", "EffectiveCost", "InvoiceId", "InvoiceIssuerName", "ListCost", "ListUnitPrice",
    "PricingCategory", "PricingCurrency", "PricingQuantity", "PricingUnit", "ProviderName", "PublisherName",
    "RegionId", "RegionName", "ResourceId", "ResourceName", "ResourceType", "ServiceCategory", "ServiceName",
    "ServiceSubcategory", "SkuId", "SkuPriceDetails", "SkuPriceId", "SubAccountId", "SubAccountName",
    "SubAccountType", "Tags", "x_InstanceType", "x_GpuCount",
)


def sub_account(provider: str, team: str) -> tuple[str, str]:
    h = hashlib.sha1(f"{provider}-{team}".encode()).hexdigest()
    if provider == "aws":
        return str(int(h[:12], 16) % 10**12).zfill(12), f"{team}-prod"
    return guid(h), f"{team}-prod"


def committed_rate(fleet: Fleet) -> Decimal:
    return (fleet.price_at("p5.48xlarge", 0) * COMMITTED_FACTOR).quantize(Decimal("0.000001"))


def _up_minutes(fleet: Fleet) -> pa.Table:
    """(node, hour, up_min) for every hour a node ran at least one minute."""
    hours = fleet.days * 24
    node_col, hour_col, up_col = [], [], []
    for node in fleet.nodes:
        up = np.ones(fleet.minutes, dtype=np.int8)
        for s, e in node.outages:
            up[s:e] = 0
        per_hour = up.reshape(hours, 60).sum(axis=1)
        idx = np.nonzero(per_hour)[0]
        node_col.append(np.full(len(idx), node.idx, dtype=np.int32))
        hour_col.append(idx.astype(np.int32))
        up_col.append(per_hour[idx].astype(np.int32))
    return pa.table({"node": np.concatenate(node_col), "hour": np.concatenate(hour_col),
                     "up_min": np.concatenate(up_col)})


def _nodes_table(fleet: Fleet) -> pa.Table:
    rate = committed_rate(fleet)
    rows = []
    for n in fleet.nodes:
        sub_id, sub_name = sub_account(n.type.provider, n.team)
        rows.append({
            "node": n.idx, "name": n.name, "provider": n.type.provider, "sku": n.type.sku, "gpus": n.type.gpus,
            "team": n.team, "workload": n.workload, "pricing": n.pricing, "resource_id": n.resource_id,
            "region": n.type.region, "price0": str(fleet.price_at(n.type.sku, 0)),
            "price1": str(fleet.price_at(n.type.sku, fleet.days)), "change_day": min(fleet.change_day(n.type.sku), 10**6),
            "committed_rate": str(rate), "sub_id": sub_id, "sub_name": sub_name,
        })
    return pa.Table.from_pylist(rows)


def _money(x: Decimal, q: str = "0.00000001") -> str:
    return str(x.quantize(Decimal(q), rounding=ROUND_HALF_EVEN))


def _daily_rows(fleet: Fleet) -> pa.Table:
    """Storage, network, savings-plan fee and credits: few rows, built with Decimal in Python."""
    rows = []
    provider_workloads = sorted({(n.type.provider, n.workload, n.team, n.type.region) for n in fleet.nodes})
    for d in range(fleet.days):
        day = fleet.start + timedelta(days=d)
        dim = calendar.monthrange(day.year, day.month)[1]
        for provider, workload, team, region in provider_workloads:
            storage_m, network_m = MONTHLY_EXTRAS.get(workload, (25, 5))
            h = int(hashlib.sha1(f"{fleet.seed}-{d}-{provider}-{workload}".encode()).hexdigest()[:8], 16)
            jitter = Decimal(85 + h % 30) / Decimal(100)
            for kind, monthly, (service, price), unit in (
                ("Storage", storage_m, STORAGE[provider], "GB-Mo"),
                ("Networking", network_m, NETWORK[provider], "GB"),
            ):
                qty = (Decimal(monthly) / Decimal(price) / Decimal(dim) * jitter).quantize(Decimal("0.000001"))
                cost = qty * Decimal(price)
                rows.append({
                    "provider": provider, "team": team, "workload": workload, "region": region, "day": d,
                    "category": "Usage", "frequency": "Usage-Based", "service_category": kind, "service": service,
                    "unit": unit, "qty": str(qty), "unit_price": price, "billed": _money(cost),
                    "effective": _money(cost), "description": f"${price} per {unit} {kind.lower()} ({workload})",
                    "resource_id": f"{provider}-{kind.lower()}-{workload}",
                })
        committed_nodes = sum(1 for n in fleet.nodes if n.pricing == "committed")
        if committed_nodes:
            fee = (committed_rate(fleet) * committed_nodes * COMMITMENT_HEADROOM).quantize(Decimal("0.01")) * 24
            rows.append({
                "provider": "aws", "team": None, "workload": None, "region": None, "day": d, "category": "Purchase",
                "frequency": "Recurring", "service_category": "Compute",
                "service": "Savings Plans for AWS Compute usage", "unit": "Hours", "qty": "24",
                "unit_price": str(fee / 24), "billed": _money(fee), "effective": "0",
                "description": "Savings Plan recurring fee (1 year, no upfront)", "resource_id": SAVINGS_PLAN_ID,
            })
    return pa.Table.from_pylist(rows, schema=pa.schema([
        ("provider", pa.string()), ("team", pa.string()), ("workload", pa.string()), ("region", pa.string()),
        ("day", pa.int32()), ("category", pa.string()), ("frequency", pa.string()),
        ("service_category", pa.string()), ("service", pa.string()), ("unit", pa.string()), ("qty", pa.string()),
        ("unit_price", pa.string()), ("billed", pa.string()), ("effective", pa.string()),
        ("description", pa.string()), ("resource_id", pa.string()),
    ]))


def billing_relation_sql(fleet: Fleet) -> str:
    """SQL of the full charge relation `charges` (typed), to be run where the tables exist."""
    acct = " ".join(
        f"when {sql_str(p)} then {sql_str(v[i])}" for p, v in ACCOUNTS.items() for i in [0]
    )
    acct_name = " ".join(f"when {sql_str(p)} then {sql_str(v[1])}" for p, v in ACCOUNTS.items())
    prov_name = " ".join(f"when {sql_str(p)} then {sql_str(v[2])}" for p, v in ACCOUNTS.items())
    publisher = " ".join(f"when {sql_str(p)} then {sql_str(v[3])}" for p, v in ACCOUNTS.items())
    region_name = " ".join(f"when {sql_str(r)} then {sql_str(n)}" for r, n in REGION_NAMES.items())
    tax = " ".join(f"when {sql_str(p)} then {r}" for p, r in TAX_RATE.items())
    start = f"timestamp '{fleet.start.isoformat()} 00:00:00'"
    return f"""
    with hourly as (
        select n.*, h.hour, h.up_min,
               {start} + to_hours(h.hour) as cps,
               cast(round(h.up_min / 60.0, 6) as decimal(18,6)) as qty,
               cast(case when h.hour // 24 >= n.change_day then n.price1 else n.price0 end as decimal(18,6)) as od,
               cast(round(cast(case when h.hour // 24 >= n.change_day then n.price1 else n.price0 end as double)
                          * (0.30 + (hash(n.node, h.hour // 24, {fleet.seed}) % 100) / 1000.0), 6) as decimal(18,6)) as spot
        from node_hours h join nodes n using (node)
    ),
    compute as (
        select provider, team, workload, region, cps, cps + interval 1 hour as cpe, 'Usage' as category,
               'Usage-Based' as frequency, 'Compute' as service_category,
               case provider when 'aws' then 'Amazon Elastic Compute Cloud' else 'Virtual Machines' end as service,
               'Hours' as unit, qty,
               case pricing when 'spot' then spot when 'committed' then cast(committed_rate as decimal(18,6)) else od end
                   as unit_price,
               cast(case pricing when 'committed' then 0 when 'spot' then qty * spot else qty * od end as decimal(38,8)) as billed,
               cast(case pricing when 'committed' then qty * cast(committed_rate as decimal(18,6))
                    when 'spot' then qty * spot else qty * od end as decimal(38,8)) as effective,
               cast(qty * od as decimal(38,8)) as list_cost, od as list_price,
               case pricing when 'spot' then 'Dynamic' when 'committed' then 'Committed' else 'Standard' end as pricing_category,
               case pricing when 'committed' then 'Used' end as cd_status,
               '$' || cast(case pricing when 'spot' then spot when 'committed' then cast(committed_rate as decimal(18,6)) else od end as varchar)
                   || ' per ' || case pricing when 'spot' then 'Spot' when 'committed' then 'Savings Plan covered' else 'On Demand' end
                   || ' Linux ' || sku || ' Instance Hour' as description,
               resource_id, name as resource_name, sku, gpus, sub_id, sub_name
        from hourly
    ),
    unused as (
        select 'aws' as provider, cast(null as varchar) as team, cast(null as varchar) as workload,
               cast(null as varchar) as region, {start} + to_days(d.day) as cps,
               {start} + to_days(d.day + 1) as cpe, 'Usage' as category, 'Usage-Based' as frequency,
               'Compute' as service_category, 'Savings Plans for AWS Compute usage' as service, 'Hours' as unit,
               cast(24 as decimal(18,6)) as qty, cast(null as decimal(18,6)) as unit_price,
               cast(0 as decimal(38,8)) as billed,
               cast(cast(d.billed as decimal(38,8)) - coalesce(u.used, 0) as decimal(38,8)) as effective,
               cast(null as decimal(38,8)) as list_cost, cast(null as decimal(18,6)) as list_price,
               'Committed' as pricing_category, 'Unused' as cd_status,
               'Unused Savings Plan commitment' as description, '{SAVINGS_PLAN_ID}' as resource_id,
               cast(null as varchar) as resource_name, cast(null as varchar) as sku, cast(null as integer) as gpus,
               cast(null as varchar) as sub_id, cast(null as varchar) as sub_name
        from daily d
        left join (select cast(date_diff('day', {start}, cps) as integer) as day, sum(effective) as used
                   from compute where pricing_category = 'Committed' group by all) u using (day)
        where d.category = 'Purchase'
    ),
    extras as (
        select provider, team, workload, region, {start} + to_days(day) as cps, {start} + to_days(day + 1) as cpe,
               category, frequency, service_category, service, unit, cast(qty as decimal(18,6)) as qty,
               cast(unit_price as decimal(18,6)) as unit_price, cast(billed as decimal(38,8)) as billed,
               cast(effective as decimal(38,8)) as effective,
               cast(case when category = 'Purchase' then billed else billed end as decimal(38,8)) as list_cost,
               cast(unit_price as decimal(18,6)) as list_price,
               case when category = 'Purchase' then 'Committed' else 'Standard' end as pricing_category,
               cast(null as varchar) as cd_status, description, resource_id,
               cast(null as varchar) as resource_name, cast(null as varchar) as sku, cast(null as integer) as gpus,
               cast(null as varchar) as sub_id, cast(null as varchar) as sub_name
        from daily
    ),
    lines as (
        select * from compute union all by name select * from unused union all by name select * from extras
    ),
    periods as (
        select provider, date_trunc('month', cps) as bps, sum(billed) as subtotal, min(cps) as first_cps
        from lines group by all
    ),
    credits as (
        select provider, cast(null as varchar) as team, cast(null as varchar) as workload, cast(null as varchar) as region,
               bps as cps, bps + interval 1 month as cpe, 'Credit' as category, 'One-Time' as frequency,
               cast(null as varchar) as service_category, cast(null as varchar) as service, cast(null as varchar) as unit,
               cast(null as decimal(18,6)) as qty, cast(null as decimal(18,6)) as unit_price,
               cast(-round(subtotal * 0.02, 2) as decimal(38,8)) as billed,
               cast(-round(subtotal * 0.02, 2) as decimal(38,8)) as effective,
               cast(null as decimal(38,8)) as list_cost, cast(null as decimal(18,6)) as list_price,
               cast(null as varchar) as pricing_category, cast(null as varchar) as cd_status,
               'Promotional credit: GPU startup programme' as description, cast(null as varchar) as resource_id,
               cast(null as varchar) as resource_name, cast(null as varchar) as sku, cast(null as integer) as gpus,
               cast(null as varchar) as sub_id, cast(null as varchar) as sub_name
        from periods
    ),
    taxes as (
        select provider, cast(null as varchar) as team, cast(null as varchar) as workload, cast(null as varchar) as region,
               bps as cps, bps + interval 1 month as cpe, 'Tax' as category, 'One-Time' as frequency,
               cast(null as varchar) as service_category, cast(null as varchar) as service, cast(null as varchar) as unit,
               cast(null as decimal(18,6)) as qty, cast(null as decimal(18,6)) as unit_price,
               cast(round(subtotal * 0.98 * case provider {tax} end, 2) as decimal(38,8)) as billed,
               cast(round(subtotal * 0.98 * case provider {tax} end, 2) as decimal(38,8)) as effective,
               cast(null as decimal(38,8)) as list_cost, cast(null as decimal(18,6)) as list_price,
               cast(null as varchar) as pricing_category, cast(null as varchar) as cd_status,
               'Sales tax' as description, cast(null as varchar) as resource_id,
               cast(null as varchar) as resource_name, cast(null as varchar) as sku, cast(null as integer) as gpus,
               cast(null as varchar) as sub_id, cast(null as varchar) as sub_name
        from periods where case provider {tax} end > 0
    ),
    all_lines as (
        select * from lines union all by name select * from credits union all by name select * from taxes
    )
    select
        case when provider = 'aws' and region is not null then region || 'a' end as AvailabilityZone,
        billed as BilledCost,
        case provider {acct} end as BillingAccountId,
        case provider {acct_name} end as BillingAccountName,
        'Billing Account' as BillingAccountType,
        'USD' as BillingCurrency,
        date_trunc('month', cps) + interval 1 month as BillingPeriodEnd,
        date_trunc('month', cps) as BillingPeriodStart,
        category as ChargeCategory,
        cast(null as varchar) as ChargeClass,
        description as ChargeDescription,
        frequency as ChargeFrequency,
        cpe as ChargePeriodEnd,
        cps as ChargePeriodStart,
        case when pricing_category = 'Committed' and category = 'Usage' then 'Spend' end as CommitmentDiscountCategory,
        case when pricing_category = 'Committed' and category = 'Usage' then '{SAVINGS_PLAN_ID}' end as CommitmentDiscountId,
        case when pricing_category = 'Committed' and category = 'Usage' then 'gpu-ledger-compute-sp' end as CommitmentDiscountName,
        case when pricing_category = 'Committed' and category = 'Usage' then effective end as CommitmentDiscountQuantity,
        cd_status as CommitmentDiscountStatus,
        case when pricing_category = 'Committed' and category = 'Usage' then 'Savings Plan' end as CommitmentDiscountType,
        case when pricing_category = 'Committed' and category = 'Usage' then 'USD' end as CommitmentDiscountUnit,
        case when category = 'Usage' then qty end as ConsumedQuantity,
        case when category = 'Usage' then unit end as ConsumedUnit,
        coalesce(effective, billed) as ContractedCost,
        unit_price as ContractedUnitPrice,
        effective as EffectiveCost,
        'INV-' || upper(provider) || '-' || strftime(cps, '%Y-%m') as InvoiceId,
        case provider {publisher} end as InvoiceIssuerName,
        coalesce(list_cost, billed) as ListCost,
        list_price as ListUnitPrice,
        pricing_category as PricingCategory,
        'USD' as PricingCurrency,
        qty as PricingQuantity,
        unit as PricingUnit,
        case provider {prov_name} end as ProviderName,
        case provider {publisher} end as PublisherName,
        region as RegionId,
        case region {region_name} end as RegionName,
        resource_id as ResourceId,
        resource_name as ResourceName,
        case when sku is not null then 'Virtual Machine' when service_category = 'Storage' then 'Volume' end as ResourceType,
        service_category as ServiceCategory,
        service as ServiceName,
        case service_category when 'Compute' then 'Virtual Machines' when 'Storage' then 'Block Storage'
             when 'Networking' then 'Network Traffic' end as ServiceSubcategory,
        case when sku is not null then upper(substr(md5(provider || sku), 1, 16)) end as SkuId,
        case when sku is not null then '{{"GpuCount":' || gpus || ',"InstanceType":"' || sku || '"}}' end as SkuPriceDetails,
        case when sku is not null then upper(substr(md5(provider || sku), 1, 16)) || '.' || coalesce(pricing_category, '') end as SkuPriceId,
        sub_id as SubAccountId,
        sub_name as SubAccountName,
        case when sub_id is not null then case provider when 'aws' then 'Linked Account' else 'Subscription' end end as SubAccountType,
        case when team is not null then
            '{{"environment":"prod","team":"' || team || '","workload":"' || workload || '"}}' end as Tags,
        sku as x_InstanceType,
        gpus as x_GpuCount,
        provider as _provider
    from all_lines
    order by provider, ChargePeriodStart, category, ResourceId, ServiceCategory, Tags
    """


def write_billing(fleet: Fleet, out: Path) -> dict[str, int]:
    """Write billing/focus_<provider>_<yyyy-mm>.csv and billing/invoice_totals.csv."""
    out.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    try:
        con.execute("set TimeZone = 'UTC'")
        con.register("node_hours", _up_minutes(fleet))
        con.register("nodes", _nodes_table(fleet))
        con.register("daily", _daily_rows(fleet))
        con.execute(f"create table charges as {billing_relation_sql(fleet)}")
        counts: dict[str, int] = {}
        files = con.execute(
            "select distinct _provider, strftime(BillingPeriodStart, '%Y-%m') from charges order by all").fetchall()
        cols = ", ".join(f'"{c}"' for c in COLUMNS)
        for provider, period in files:
            path = out / f"focus_{provider}_{period}.csv"
            con.execute(copy_sql(
                f"select {cols} from charges where _provider = ? and strftime(BillingPeriodStart, '%Y-%m') = ? "
                "order by ChargePeriodStart, ChargeCategory, ResourceId, ServiceCategory, Tags",
                path, "format csv, header true, timestampformat '%Y-%m-%dT%H:%M:%SZ'"), [provider, period])
            counts[path.name] = con.execute(
                "select count(*) from charges where _provider = ? and strftime(BillingPeriodStart, '%Y-%m') = ?",
                [provider, period]).fetchone()[0]
        inv = out / "invoice_totals.csv"
        con.execute(copy_sql(
            """select InvoiceId, BillingAccountId, strftime(BillingPeriodStart, '%Y-%m-%d') as BillingPeriodStart,
                      BillingCurrency, cast(sum(BilledCost) as decimal(38,8)) as InvoiceTotal
               from charges group by all order by InvoiceId""", inv))
        counts[inv.name] = len(files)
        return counts
    finally:
        con.close()

