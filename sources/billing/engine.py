"""Set-based FOCUS typing shared by every billing format.

A format module loads its file into view `raw` (see `reader.py`) and describes, per FOCUS
column, a SQL expression over `raw` (`stage`). This module then runs:
  1. one query that collects rejects: a UNION ALL of TRY_CAST failures and rule checks;
  2. one query that returns the good rows, typed, with normalised Tags and x_extra.
No Python runs per row; Tags are normalised per DISTINCT value (see `tags.py`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from sources.billing import mappings
from sources.billing.reader import RawFile, header_key
from sources.billing.schema import DECIMAL, DECIMAL_COLUMNS, FOCUS_COLUMNS, TABLE, TIMESTAMP_COLUMNS
from sources.billing.tags import normalise_distinct
from sources.common import ParseOutput, Reject
from sources.prices._rows import CURRENCIES  # the one ISO 4217 list of the project

#: Rows without these values cannot be placed in a ledger, so they are rejected.
REQUIRED_VALUES = ("BilledCost", "ChargePeriodStart", "ChargePeriodEnd", "BillingPeriodStart", "BillingPeriodEnd")


def q(name: str) -> str:
    """Quote an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def lit(text: str) -> str:
    """An SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def connect() -> duckdb.DuckDBPyConnection:
    """In-memory DuckDB with UTC session time zone (zone-less timestamps are read as UTC)."""
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    return con


def ts_expr(x: str, sql_type: str = "VARCHAR") -> str:
    """SQL turning a value into naive UTC TIMESTAMP, NULL when unparseable.

    Text: ISO with/without T, with Z or an offset, and `HH:MMZ` without seconds (OCI).
    Values with no offset after the date part (the common case) take the fast TIMESTAMP cast;
    values with an offset go through TIMESTAMPTZ (ICU, ~4x slower) so they are converted;
    the regex fallback only runs for values neither cast could read. COALESCE is lazy.
    Native Parquet TIMESTAMP is taken as UTC; TIMESTAMPTZ is converted.
    """
    if sql_type == "TIMESTAMP":
        return x
    if sql_type != "VARCHAR":
        return f"try_cast({x} as timestamptz)::timestamp"
    has_offset = f"(strpos(substr({x}, 11), '+') > 0 or strpos(substr({x}, 11), '-') > 0)"
    fixed = rf"regexp_replace({x}, '([T ]\d{{2}}:\d{{2}})(Z|[+-]\d{{2}}:?\d{{2}})?$', '\1:00\2')"
    return (
        f"coalesce(case when {has_offset} then try_cast({x} as timestamptz)::timestamp "
        f"else try_cast({x} as timestamp) end, try_cast({fixed} as timestamptz)::timestamp)"
    )


def enum_expr(x: str, column: str) -> str:
    """Canonical spelling of a FOCUS enum value (`Usage-based` -> `Usage-Based`), else as is."""
    values = mappings.FOCUS_ENUMS.get(column)
    if not values:
        return x
    whens = " ".join(f"when {lit(v.lower())} then {lit(v)}" for v in values)
    # Values already spelled canonically (nearly all) skip the per-value lower/trim copies.
    canon = ", ".join(lit(v) for v in values)
    return f"case when {x} in ({canon}) then {x} else case lower(trim({x})) {whens} else {x} end end"


@dataclass
class Staged:
    """What a format module hands to `finish`: expressions per FOCUS column over `raw`."""

    exprs: dict[str, str]  # FOCUS column -> SQL expression over raw (VARCHAR for CSV sources)
    extra: dict[str, str]  # original header -> raw column, for x_extra
    focus_version: str
    source_format: str
    warnings: list[str] = field(default_factory=list)


def x_extra_expr(extra: dict[str, str]) -> str:
    """JSON object text of the non-FOCUS columns of a row (NULL values omitted)."""
    if not extra:
        return "cast(null as varchar)"
    # Built as text (concat_ws skips NULLs; to_json escapes the value): a MAP/LIST per row
    # cost several times more. Same compact output as to_json of a map: {"k":"v",...}.
    entries = ", ".join(
        f"case when {col} is not null then {lit(json.dumps(name, ensure_ascii=False) + ':')} || to_json({col}::varchar) end"
        for name, col in extra.items()
    )
    return f"nullif('{{' || concat_ws(',', {entries}) || '}}', '{{}}')"


def direct_columns(raw: RawFile, wanted: tuple[str, ...] = FOCUS_COLUMNS) -> tuple[dict[str, str], dict[str, str]]:
    """Match source headers to FOCUS columns case-insensitively; return (focus->raw col, extra)."""
    by_key = {c.lower(): c for c in wanted}
    mapped: dict[str, str] = {}
    extra: dict[str, str] = {}
    for name, col in raw.columns.items():
        focus = by_key.get(header_key(name))
        if focus and focus not in mapped:
            mapped[focus] = col
        else:
            extra[name] = col
    return mapped, extra


def _types(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return {r[0]: r[1] for r in con.execute("describe staged").fetchall()}


def _typed(col: str, typ: str) -> str:
    """Typed SQL for a staged column."""
    x = q(col)
    varchar = typ == "VARCHAR"
    if col in DECIMAL_COLUMNS:
        if not varchar:
            return f"try_cast({x} as {DECIMAL})"
        # DECIMAL(38,12) parsing from text is ~20x slower in DuckDB (128-bit path) than
        # DECIMAL(18,12); same scale, so same rounding. COALESCE is lazy: the wide cast only
        # runs for values of 1e6 or more (or bad text).
        return f"coalesce(try_cast({x} as DECIMAL(18,12))::{DECIMAL}, try_cast({x} as {DECIMAL}))"
    if col in TIMESTAMP_COLUMNS:
        return ts_expr(x, typ)
    return x if varchar else f"{x}::varchar"


Ref = Callable[[str], str]


def _checks(types: dict[str, str]) -> list[tuple[str, str, Callable[[Ref, Ref], str]]]:
    """(rule, column, f(raw_ref, typed_ref) -> SQL condition TRUE for a bad row).

    Written against references so the same rule runs both on `staged` (reject query) and on
    the already-typed inner select of the good-row query (casts are not computed twice).
    """
    checks: list[tuple[str, str, Callable[[Ref, Ref], str]]] = []
    for col in REQUIRED_VALUES:
        checks.append(("missing_value", col, lambda r, t, c=col: f"{r(c)} is null"))
    for col in DECIMAL_COLUMNS:
        if col in types:
            checks.append(("non_numeric", col, lambda r, t, c=col: f"{r(c)} is not null and {t(c)} is null"))
    for col in TIMESTAMP_COLUMNS:
        if col in types:
            checks.append(("invalid_timestamp", col, lambda r, t, c=col: f"{r(c)} is not null and {t(c)} is null"))
    if "ChargePeriodStart" in types and "ChargePeriodEnd" in types:
        checks.append(("period_reversed", "ChargePeriodEnd",
                       lambda r, t: f"{t('ChargePeriodEnd')} < {t('ChargePeriodStart')}"))
    if "BillingCurrency" in types:
        # An ISO 4217 code, not just its shape: 'ZZZ' would pass a shape check and then fail the
        # blocking currency expectation on ledger_focus, withholding the whole publication.
        iso = ", ".join(lit(c) for c in sorted(CURRENCIES))
        checks.append(("unknown_currency", "BillingCurrency",
                       lambda r, t: f"{r('BillingCurrency')} is not null and {r('BillingCurrency')}::varchar not in ({iso})"))
    return checks


_MESSAGES = {
    "missing_value": "required value is empty",
    "non_numeric": "not a number",
    "invalid_timestamp": "not a valid timestamp",
    "period_reversed": "ChargePeriodEnd is before ChargePeriodStart",
    "unknown_currency": "not an ISO 4217 currency code",
}


def _enum_warnings(con: duckdb.DuckDBPyConnection, types: dict[str, str]) -> list[str]:
    """One scan: values of FOCUS enum columns that are not in the FOCUS value list."""
    cols = [c for c in mappings.FOCUS_ENUMS if c in types]
    if not cols:
        return []
    aggs = ", ".join(
        f"list(distinct {q(c)}::varchar) filter (where {q(c)}::varchar not in "
        f"({', '.join(lit(v) for v in mappings.FOCUS_ENUMS[c])}))"
        for c in cols
    )
    row = con.execute(f"select {aggs} from staged").fetchone()
    return [
        f"{c}: values outside the FOCUS list kept as is: {sorted(v)[:10]}"
        for c, v in zip(cols, row) if v
    ]


def finish(con: duckdb.DuckDBPyConnection, raw: RawFile, staged: Staged, enum_warnings: bool = True) -> ParseOutput:
    """Run the reject query and the good-row query over `raw`; return the ParseOutput.

    `enum_warnings=False` skips the scan listing non-FOCUS enum values (the caller does it).
    """
    exprs = dict(staged.exprs)
    for col in ("ChargeCategory", "ChargeClass", "ChargeFrequency", "PricingCategory",
                "CommitmentDiscountStatus", "CommitmentDiscountCategory", "CommitmentDiscountType"):
        if col in exprs:
            exprs[col] = enum_expr(exprs[col], col)
    if "BillingCurrency" in exprs:
        exprs["BillingCurrency"] = f"upper(trim({exprs['BillingCurrency']}::varchar))"
    select = ", ".join(f"{e} as {q(c)}" for c, e in exprs.items())
    con.execute(
        f"create temp view staged as select _source_line, {select}, "
        f"{x_extra_expr(staged.extra)} as x_extra from raw"
    )
    types = _types(con)
    checks = _checks(types)
    checked = sorted({c for _, c, _ in checks} | {"BillingCurrency"} & set(types))

    warnings = list(raw.warnings) + list(staged.warnings) + (_enum_warnings(con, types) if enum_warnings else [])
    tag_join, tags_sql = "", f"s.{q('Tags')}::varchar" if "Tags" in types else "cast(null as varchar)"
    if "Tags" in types:
        distinct = [r[0] for r in con.execute(
            f"select distinct {q('Tags')}::varchar from staged where {q('Tags')} is not null").fetchall()]
        norm, tag_warn = normalise_distinct(distinct)
        warnings += tag_warn
        # Only values that change need a lookup; a real table (not a registered Arrow object)
        # gives the optimiser the cardinality, so the big side is never the hash-build side.
        changed = [(a, b) for a, b in zip(distinct, norm) if a != b]
        if changed:
            con.register("_tagmap_arrow", pa.table({
                "_raw": pa.array([a for a, _ in changed], pa.string()),
                "_norm": pa.array([b for _, b in changed], pa.string()),
            }))
            con.execute("create temp table _tagmap as select * from _tagmap_arrow")
            tag_join = f"left join _tagmap t on s.{q('Tags')}::varchar = t._raw"
            tags_sql = f"case when t._raw is null then s.{q('Tags')}::varchar else t._norm end"

    # Good rows: inner select types each column once; the outer filter reuses the typed values.
    typed_cols = [f"{_typed(c, types[c])} as {q(c)}" for c in FOCUS_COLUMNS if c in types and c != "Tags"]
    raw_refs = [f"s.{q(c)} as {q('_r_' + c)}" for c in checked if c in types]
    out_cols = [q(c) for c in FOCUS_COLUMNS if c in types and c != "Tags"]
    bad_row = " or ".join(
        f"coalesce({f(lambda c: q('_r_' + c), q)}, false)" for _, _, f in checks
    ) or "false"
    good = con.execute(
        f"select _source_line, {', '.join(out_cols)}, {q('Tags')}, "
        f"{lit(staged.focus_version)} as x_focus_version, {lit(staged.source_format)} as x_source_format, x_extra "
        f"from (select s._source_line, {', '.join(typed_cols + raw_refs)}, {tags_sql} as {q('Tags')}, s.x_extra "
        f"from staged s {tag_join}) where not ({bad_row}) order by _source_line"
    ).to_arrow_table()

    rejects = list(raw.rejects)
    if good.num_rows < raw.rows:  # some row failed a check: say which and why
        rejects += check_rejects(con, types)
    return ParseOutput(tables={TABLE: good}, rejects=rejects, warnings=warnings)


def check_rejects(con: duckdb.DuckDBPyConnection, types: dict[str, str], view: str = "staged") -> list[Reject]:
    """Every failed check of the rows in `view` (staged columns + `_source_line`), one UNION ALL."""
    parts = [
        f"select _source_line, {lit(rule)} as rule, {lit(col)} as col, {q(col)}::varchar as val "
        f"from {view} where {f(q, lambda c: _typed(c, types[c]))}"
        for rule, col, f in _checks(types)
    ]
    if not parts:
        return []
    bad = con.execute(f"select * from ({' union all '.join(parts)}) order by _source_line, rule, col").fetchall()
    return [Reject(int(ln) if ln is not None else None, rule, f"{col}: {_MESSAGES[rule]}", col, val)
            for ln, rule, col, val in bad]
