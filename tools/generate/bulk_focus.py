"""A synthetic FOCUS 1.0 CSV (or Parquet) export for speed runs.

    python -m tools.generate focus /tmp/focus_1m.csv --rows 1000000

Set-based in DuckDB (no Python per row), deterministic for a given seed. The layout copies
the real FOCUS sample: quoted text, bare numbers, `NULL` nulls, zone-less timestamps,
JSON Tags from a small set (tags repeat in real exports), and an extra `Id` column.
"""

from __future__ import annotations

from pathlib import Path

from tools.generate.common import copy_query

_SQL = """
select
  case when i % 7 = 0 then 'us-east-1a' end as AvailabilityZone,
  ((hash(i, {seed}) % 1000000) / 1000000.0 * 5)::decimal(18,11) as BilledCost,
  '1234567890123' as BillingAccountId, 'SunBird' as BillingAccountName, 'USD' as BillingCurrency,
  timestamp '2024-10-01 00:00:00' as BillingPeriodEnd, timestamp '2024-09-01 00:00:00' as BillingPeriodStart,
  case when i % 997 = 0 then 'Credit' else 'Usage' end as ChargeCategory,
  cast(null as varchar) as ChargeClass,
  '$1.624 per On Demand Linux g5.4xlarge Instance Hour' as ChargeDescription,
  'Usage-Based' as ChargeFrequency,
  timestamp '2024-09-01 01:00:00' + to_hours((i % 700)::bigint) as ChargePeriodEnd,
  timestamp '2024-09-01 00:00:00' + to_hours((i % 700)::bigint) as ChargePeriodStart,
  cast(null as varchar) as CommitmentDiscountCategory, cast(null as varchar) as CommitmentDiscountId,
  cast(null as varchar) as CommitmentDiscountName, cast(null as varchar) as CommitmentDiscountStatus,
  cast(null as varchar) as CommitmentDiscountType,
  1.000000000000000::decimal(18,15) as ConsumedQuantity, 'Hours' as ConsumedUnit,
  0.0::decimal(18,11) as ContractedCost, 0.0::decimal(18,11) as ContractedUnitPrice,
  ((hash(i, {seed}) % 1000000) / 1000000.0 * 5)::decimal(18,11) as EffectiveCost,
  'Amazon Web Services, Inc.' as InvoiceIssuerName,
  ((hash(i, {seed}) % 1000000) / 1000000.0 * 5)::decimal(18,11) as ListCost,
  '1.624' as ListUnitPrice, 'Standard' as PricingCategory, 1.0::decimal(18,11) as PricingQuantity,
  'Hrs' as PricingUnit, 'AWS' as ProviderName, 'Amazon Web Services, Inc.' as PublisherName,
  'us-east-1' as RegionId, 'US East (N. Virginia)' as RegionName,
  'i-' || lpad(((hash(i, {seed}) % 50000))::varchar, 17, '0') as ResourceId,
  cast(null as varchar) as ResourceName, 'Instance' as ResourceType, 'Compute' as ServiceCategory,
  i as Id, 'Amazon Elastic Compute Cloud' as ServiceName, 'G95FST5FTYV3JSRX' as SkuId,
  'G95FST5FTYV3JSRX.JRTCKXETXF.6YS6EN2CT7' as SkuPriceId, '51738928782' as SubAccountId,
  'Atlas Nimbus' as SubAccountName,
  case i % 4 when 0 then null
    else '{{"env":"' || (['prod','dev','test'])[1 + (i % 3)] || '","team":"t' || (i % 40)::varchar || '"}}' end as Tags
from range({rows}) t(i)
"""


def generate_focus_csv(path: Path | str, rows: int, seed: int = 42) -> Path:
    """Write a FOCUS 1.0 CSV with `rows` data rows (plus header) to `path`; return the path.

    A `.parquet` suffix writes Parquet instead; `.csv.gz` writes gzip CSV.
    """
    path = Path(path)
    query = _SQL.format(rows=int(rows), seed=int(seed))
    if path.suffix == ".parquet":
        copy_query(query, path, "format parquet")
    else:
        copy_query(query, path, "format csv, header true, nullstr 'NULL', timestampformat '%Y-%m-%d %H:%M:%S'")
    return path
