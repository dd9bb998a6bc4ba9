"""Community GPU price catalogs in CSV: SkyPilot `vms.csv` and gpuhunt catalog CSV.

Read with DuckDB (catalogs hold tens of thousands of rows). Neither layout names the cloud
(the cloud is the file's folder/name upstream), so `provider` comes from a `provider` column
when present, else from the instance naming (aws `p4d.24xlarge`, azure `Standard_*`, gcp
`a2-highgpu-1g`/`n1-*`, lambda `gpu_1x_*`), else 'unknown'. Mapping happens later in dbt.
SkyPilot: Price -> on-demand, SpotPrice -> spot (empty = not offered). gpuhunt: one row per
line, `spot` true/false chooses the category. No timestamp: observed_at is the fetch time.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text
from sources.prices._rows import CURRENCIES, OBS_SCHEMA, OBSERVATIONS, fetch_time

SKYPILOT = "skypilot_catalog_csv"
GPUHUNT = "gpuhunt_catalog_csv"
_SKY_REQ = {"InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "SpotPrice", "Region"}
_HUNT_REQ = {"instance_name", "location", "price", "gpu_count", "gpu_name", "spot"}

_PROVIDER_SQL = """case
    when {sku} like 'Standard\\_%' escape '\\' then 'azure'
    when regexp_matches({sku}, '^gpu_[0-9]+x_') then 'lambda'
    when regexp_matches({sku}, '^(a2|a3|a4|g2|n1|n2|n2d|c2|c3|e2|m1|m2|ct5lp|ct6e)-') then 'gcp'
    when regexp_matches({sku}, '^[a-z][a-z0-9-]*\\.[a-z0-9]+$') then 'aws'
    else 'unknown' end"""


def _columns(head: bytes) -> set[str]:
    lines = head_text(head).splitlines()
    return {c.strip().strip('"') for c in lines[0].split(",")} if lines else set()


def detect_skypilot(path: Path, head: bytes) -> bool:
    """SkyPilot vms.csv header."""
    return _SKY_REQ <= _columns(head)


def detect_gpuhunt(path: Path, head: bytes) -> bool:
    """gpuhunt catalog CSV header."""
    return _HUNT_REQ <= _columns(head)


def _load(path: Path) -> tuple[duckdb.DuckDBPyConnection, set[str]]:
    con = duckdb.connect()
    try:
        con.execute(
            "create temp table src as select row_number() over () + 1 as _source_line, * "
            "from read_csv(?, header = true, all_varchar = true, delim = ',', quote = '\"')",
            [str(path)],
        )
    except duckdb.Error as exc:
        raise UnreadableFile(path, None, f"cannot read CSV: {exc}") from exc
    cols = {r[0] for r in con.execute("select column_name from (describe src)").fetchall()}
    return con, cols


def _finish(
    con: duckdb.DuckDBPyConnection, offers_sql: str, path: Path, fmt: str, fetched_at: datetime | None
) -> ParseOutput:
    """Judge the offers view (sku, price_text, ...) and return rows + rejects."""
    observed, basis, note = fetch_time(path, fetched_at)
    currencies = ", ".join(f"'{c}'" for c in sorted(CURRENCIES))
    con.execute(f"""create temp table judged as select *, try_cast(price_text as decimal(38, 12)) as price_dec,
        case when coalesce(trim(sku), '') = '' then 'missing_sku'
             when coalesce(trim(provider), '') = '' then 'missing_value'
             when coalesce(trim(price_text), '') = '' then 'missing_price'
             when try_cast(price_text as decimal(38, 12)) is null then 'non_numeric'
             when try_cast(price_text as decimal(38, 12)) = 0 then 'zero_price'
             when try_cast(price_text as decimal(38, 12)) < 0 then 'negative_price'
             when currency not in ({currencies}) then 'unknown_currency' end as rule
        from ({offers_sql})""")
    rejects = [
        Reject(line, rule, f"{rule.replace('_', ' ')}: {value!r}", col, value)
        for line, rule, col, value in con.execute(
            "select _source_line, rule, case rule when 'unknown_currency' then 'currency' when 'missing_sku' then 'sku' "
            "when 'missing_value' then 'provider' else price_column end, "
            "case rule when 'unknown_currency' then currency when 'missing_sku' then sku when 'missing_value' then provider "
            "else price_text end from judged where rule is not null order by 1"
        ).fetchall()
    ]
    table = con.execute(
        """select provider, sku, sku_description, region, pricing_category, term_details, currency,
               trim(price_text) as price, price_unit, gpu_model, gpu_count, ?::timestamp as observed_at, ? as observed_at_basis,
               source, ? as source_format, _source_line
           from judged where rule is null order by _source_line, pricing_category""",
        [observed, basis, fmt],
    ).to_arrow_table()
    con.close()
    return ParseOutput(
        tables={OBSERVATIONS: table.cast(OBS_SCHEMA)}, rejects=rejects, warnings=[note] if note else []
    )


def parse_skypilot(path: Path, fetched_at: datetime | None = None) -> ParseOutput:
    """SkyPilot catalog vms.csv -> gpu_price_observations (on-demand + spot rows)."""
    path = Path(path)
    con, cols = _load(path)
    provider = (
        "lower(trim(provider))" if "provider" in cols else _PROVIDER_SQL.format(sku="trim(InstanceType)")
    )
    zone = "nullif(trim(AvailabilityZone), '')" if "AvailabilityZone" in cols else "null"
    base = f"""select _source_line, {provider} as provider, trim(InstanceType) as sku,
        nullif(trim(AcceleratorName), '') as sku_description, trim(Region) as region,
        case when {zone} is null then null else json_object('availability_zone', {zone}) end as term_details,
        'USD' as currency, 'hour' as price_unit, null::varchar as gpu_model,
        nullif(trim(AcceleratorCount), '') as gpu_count, 'skypilot-catalog' as source"""
    offers = (
        f"{base}, 'on-demand' as pricing_category, Price as price_text, 'Price' as price_column from src "
        f"union all {base}, 'spot' as pricing_category, SpotPrice as price_text, 'SpotPrice' as price_column "
        "from src where coalesce(trim(SpotPrice), '') <> ''"
    )
    return _finish(con, offers, path, SKYPILOT, fetched_at)


def parse_gpuhunt(path: Path, fetched_at: datetime | None = None) -> ParseOutput:
    """gpuhunt catalog CSV -> gpu_price_observations (one row per line)."""
    path = Path(path)
    con, cols = _load(path)
    provider = (
        "lower(trim(provider))" if "provider" in cols else _PROVIDER_SQL.format(sku="trim(instance_name)")
    )
    memory = "nullif(trim(gpu_memory), '')" if "gpu_memory" in cols else "null"
    offers = f"""select _source_line, {provider} as provider, trim(instance_name) as sku,
        nullif(trim(gpu_name), '') as sku_description, trim(location) as region,
        case when lower(trim(spot)) in ('true', '1', 'yes') then 'spot' else 'on-demand' end as pricing_category,
        case when {memory} is null then null else json_object('gpu_memory_gb', {memory}) end as term_details,
        'USD' as currency, 'hour' as price_unit, null::varchar as gpu_model,
        nullif(trim(gpu_count), '') as gpu_count, 'gpuhunt-catalog' as source,
        price as price_text, 'price' as price_column from src"""
    return _finish(con, offers, path, GPUHUNT, fetched_at)


FORMATS = [
    SourceFormat(SKYPILOT, "prices", detect_skypilot, parse_skypilot, "SkyPilot catalog vms.csv"),
    SourceFormat(GPUHUNT, "prices", detect_gpuhunt, parse_gpuhunt, "gpuhunt catalog CSV"),
]
