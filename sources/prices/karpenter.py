"""Karpenter on-demand GPU price histories (AWS and Azure), rebuilt from git history.

Each CSV row is one (file version, region, SKU) price from Karpenter's generated price tables.
Read with DuckDB (files reach 1M+ rows when regions are added); no Python row loop.
observed_at = generated_at (UTC `Z`), else commit_date (mixed offsets) converted to UTC.
Identical (observed_at, region, sku, price) rows inside one file are de-duplicated: the same
snapshot appears under several commits (re-formatted files, repository moves).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from sources.common import (
    ParseOutput,
    Reject,
    SourceFormat,
    UnreadableFile,
    csv_lines_after_rejects,
    csv_reader_rejects,
    head_text,
)
from sources.prices._rows import CURRENCIES, OBS_SCHEMA, OBSERVATIONS


@dataclass(frozen=True)
class _Layout:
    name: str
    provider: str
    columns: tuple[str, ...]
    sku: str
    price: str
    source_sql: str  # SQL expression for the `source` column (origin URL at the row's commit)
    term_details: str


AWS = _Layout(
    name="karpenter_aws_pricing_history",
    provider="aws",
    columns=(
        "generated_at",
        "commit",
        "commit_date",
        "source_path",
        "region",
        "currency",
        "instance_type",
        "family",
        "on_demand_price_per_hour",
    ),
    sku="instance_type",
    price="on_demand_price_per_hour",
    source_sql="'https://github.com/aws/karpenter-provider-aws/blob/' || \"commit\" || '/' || source_path",
    term_details='{"operating_system": "Linux", "tenancy": "Shared"}',
)
AZURE = _Layout(
    name="karpenter_azure_pricing_history",
    provider="azure",
    columns=(
        "generated_at",
        "commit",
        "commit_date",
        "region",
        "currency",
        "arm_sku_name",
        "on_demand_linux_price_per_hour",
    ),
    sku="arm_sku_name",
    price="on_demand_linux_price_per_hour",
    source_sql="'https://github.com/Azure/karpenter-provider-azure/blob/' || \"commit\" || '/pkg/providers/pricing/zz_generated.pricing.go'",
    term_details='{"operating_system": "Linux"}',
)


def _header(head: bytes) -> list[str]:
    first = head_text(head).splitlines()[0] if head else ""
    return [c.strip().strip('"') for c in first.split(",")]


def _detector(layout: _Layout):
    def detect(path: Path, head: bytes) -> bool:
        return _header(head) == list(layout.columns)

    return detect


def _parse_with(path: Path, layout: _Layout) -> ParseOutput:
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")  # timestamptz -> timestamp then yields UTC wall time
    cols = "{" + ", ".join(f"'{c}': 'VARCHAR'" for c in layout.columns) + "}"
    try:
        # A line the reader cannot split or decode (cut off, wrong field count, not UTF-8) is
        # quarantined on its own (store_rejects); the file's other lines still load.
        con.execute(
            f"""create temp table kept as
            select row_number() over () as _row, *
            from read_csv(?, header = true, auto_detect = false, delim = ',', quote = '"',
                          escape = '"', columns = {cols}, ignore_errors = true, store_rejects = true)""",
            [str(path)],
        )
    except duckdb.Error as exc:
        raise UnreadableFile(path, None, f"cannot read as {layout.name} CSV: {exc}") from exc
    reader_rejects = csv_reader_rejects(con)
    kept = con.execute("select count(*) from kept").fetchone()[0]
    if kept == 0:
        if reader_rejects:
            first = reader_rejects[0]
            raise UnreadableFile(path, first.line, f"no readable data row ({first.message})")
        raise UnreadableFile(path, 2, "CSV has a header but no data rows")
    # File line of each kept row: row index + 1 (header), shifted past the rejected lines before it.
    lines = pa.table({"_row": np.arange(1, kept + 1), "_source_line": csv_lines_after_rejects(
        kept, [r.line for r in reader_rejects])})
    con.register("kept_lines", lines)
    con.execute("create temp table src as select kept_lines._source_line, kept.* exclude (_row) "
                "from kept join kept_lines using (_row)")
    currencies = ", ".join(f"'{c}'" for c in sorted(CURRENCIES))
    con.execute(
        f"""create temp table classified as
        select *,
            try_cast(trim({layout.price}) as decimal(38, 12)) as price_dec,
            coalesce(try_cast(nullif(generated_at, '') as timestamptz),
                     try_cast(nullif(commit_date, '') as timestamptz))::timestamp as obs_ts,
            upper(trim(currency)) as cur
        from src""",
    )
    con.execute(
        f"""create temp table judged as
        select *, case
            when coalesce(trim({layout.price}), '') = '' then 'missing_price'
            when price_dec is null then 'non_numeric'
            when price_dec = 0 then 'zero_price'
            when price_dec < 0 then 'negative_price'
            when cur is null or cur not in ({currencies}) then 'unknown_currency'
            when obs_ts is null then 'invalid_timestamp'
            when coalesce(trim({layout.sku}), '') = '' then 'missing_sku'
            -- the source URL is built from the row's commit (and path): without them a price has no source,
            -- and the staging check on it withheld every source's publication
            when coalesce(trim("commit"), '') = '' or ({layout.source_sql}) is null then 'missing_source'
        end as rule
        from classified""",
    )
    rejects = reader_rejects + [
        Reject(line, rule, _reject_message(rule, value), col, value)
        for line, rule, col, value in con.execute(
            f"""select _source_line, rule,
                case when rule in ('unknown_currency') then 'currency'
                     when rule = 'invalid_timestamp' then 'generated_at'
                     when rule = 'missing_sku' then '{layout.sku}'
                     when rule = 'missing_source' then 'commit'
                     else '{layout.price}' end,
                case when rule = 'unknown_currency' then currency
                     when rule = 'invalid_timestamp' then coalesce(generated_at, '') || ' / ' || coalesce(commit_date, '')
                     when rule = 'missing_sku' then {layout.sku}
                     when rule = 'missing_source' then "commit"
                     else {layout.price} end
            from judged where rule is not null order by _source_line"""
        ).fetchall()
    ]
    table = con.execute(
        f"""select '{layout.provider}' as provider, trim({layout.sku}) as sku, null::varchar as sku_description,
                trim(region) as region, 'on-demand' as pricing_category, '{layout.term_details}' as term_details,
                cur as currency, trim({layout.price}) as price, 'hour' as price_unit,
                null::varchar as gpu_model, null::varchar as gpu_count, obs_ts as observed_at,
                'source' as observed_at_basis,
                {layout.source_sql} as source, '{layout.name}' as source_format, _source_line
            from judged where rule is null
            qualify row_number() over (partition by obs_ts, trim(region), trim({layout.sku}), price_dec
                                       order by _source_line) = 1
            order by _source_line"""
    ).to_arrow_table()
    good = con.execute("select count(*) from judged where rule is null").fetchone()[0]
    warnings = []
    if good > table.num_rows:
        warnings.append(
            f"{path.name}: {good - table.num_rows} duplicate (observed_at, region, sku, price) rows dropped "
            "(same snapshot under several commits)"
        )
    fallback = con.execute(
        "select count(*) from judged where rule is null and coalesce(generated_at, '') = ''"
    ).fetchone()[0]
    if fallback:
        warnings.append(
            f"{path.name}: {fallback} rows have no generated_at; observed_at taken from commit_date (UTC)"
        )
    con.close()
    return ParseOutput(tables={OBSERVATIONS: table.cast(OBS_SCHEMA)}, rejects=rejects, warnings=warnings)


def _reject_message(rule: str, value: str | None) -> str:
    return {
        "missing_price": "price is empty",
        "non_numeric": f"price {value!r} is not a number",
        "zero_price": "price is 0",
        "negative_price": f"price {value} is negative",
        "unknown_currency": f"currency {value!r} is not an ISO 4217 code",
        "invalid_timestamp": f"neither generated_at nor commit_date is a timestamp ({value})",
        "missing_sku": "SKU is empty",
        "missing_source": "the row names no commit (or source path): its price would have no source",
    }.get(rule, rule)


def parse_aws(path: Path) -> ParseOutput:
    """Karpenter AWS on-demand price history CSV -> gpu_price_observations."""
    return _parse_with(Path(path), AWS)


def parse_azure(path: Path) -> ParseOutput:
    """Karpenter Azure on-demand (Linux) price history CSV -> gpu_price_observations."""
    return _parse_with(Path(path), AZURE)


FORMATS = [
    SourceFormat(AWS.name, "prices", _detector(AWS), parse_aws, "Karpenter AWS on-demand price history CSV"),
    SourceFormat(
        AZURE.name, "prices", _detector(AZURE), parse_azure, "Karpenter Azure on-demand price history CSV"
    ),
]
