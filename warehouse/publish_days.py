"""Publishing a rebuilt mart by day (or month): only the days that changed since the publication in place.

A mart whose dbt model rebuilds it by UTC day (fct_focus_export copies the days int_focus_export_rows
rebuilt) declares how in its yml, `meta: publish_by_day: {column, upstream, upstream_day, stamp, grain}`:
a mart row's UTC day is that of its `column` (a date or timestamp), `upstream` is the day-incremental
model whose rows carry the
day (`upstream_day`) and the time the build that wrote it ran (`stamp`, x_built_at; a day is
always rewritten whole, so its rows share one stamp). `grain: month` (default `day`) does the same by
calendar month, for a mart its model rebuilds by month (fct_workload_cost_lines copies the months
int_workload_cost_lines rebuilt): a "day" below is then the first day of a row's month. The publication records `ledger_as_of`, the
time it started reading the ledger; refreshes are serialised by the refresh lock, so a day stamped
after it was written by a later build. The new file (a byte copy of the publication in place,
warehouse/publish.py) then replaces only:

- the days stamped after the publication in place read the ledger (rebuilt since, including by a
  refresh that failed before publishing), and
- the days one side holds and the other does not (a day gone from the ledger, a day new to it),

by a delete and an insert of those days' rows, sorted like a whole write (the days as ranges of
`column`, so both read only the row groups that hold them). Every other day's rows are
the ones the publication in place was written from: the mart changes a day's rows only when its
upstream rewrote (and restamped) that day. The mart is written whole instead when that cannot be
known: no recorded `ledger_as_of`, an upstream or stamp the ledger lacks, columns that differ from
the copy's, or a row without a day. The rows equal a whole write's; their stored order is by day as
published night after night (readers and exports sort).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import duckdb


@dataclass(frozen=True)
class DayScope:
    """How one mart is published by day (see the module doc); `upstream` is `schema.table` in the ledger."""

    column: str
    upstream: str
    upstream_day: str
    stamp: str = "x_built_at"
    grain: str = "day"  # or "month"

    def __post_init__(self) -> None:
        if self.grain not in ("day", "month"):
            raise ValueError(f"publish_by_day grain must be day or month, not {self.grain!r}")

    def unit(self, column: str) -> str:
        """SQL of the first day (a date) of the day or month `column` (a quoted name) falls in."""
        return f"cast({column} as date)" if self.grain == "day" else f"cast(date_trunc('month', {column}) as date)"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _columns(con: duckdb.DuckDBPyConnection, catalog: str, schema: str, table: str) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in con.execute(
        "select column_name, data_type from information_schema.columns where table_catalog = ? "
        "and table_schema = ? and table_name = ? order by ordinal_position", [catalog, schema, table]).fetchall()]


def previous_ledger_as_of(con: duckdb.DuckDBPyConnection) -> datetime | None:
    """`ledger_as_of` of the publication attached as `previous` (None: not recorded, so no day is known)."""
    if ("ledger_as_of", "TIMESTAMP") not in _columns(con, "previous", "main", "publication"):
        return None
    row = con.execute("select max(ledger_as_of) from previous.main.publication").fetchone()
    return row[0] if row else None


def changed_days(con: duckdb.DuckDBPyConnection, table: str, scope: DayScope, as_of: datetime) -> list | None:
    """The days (dates) of mart `table` to replace in the copy (`serving`) from the ledger, sorted; None when
    the mart has to be written whole (see the module doc)."""
    schema, _, name = scope.upstream.partition(".")
    names = {c for c, _ in _columns(con, "ledger", schema, name)}
    if scope.upstream_day not in names or scope.stamp not in names:
        return None
    mine = _columns(con, "ledger", "marts", table)
    if mine != _columns(con, "serving", "main", table) or scope.column not in dict(mine):
        return None
    source, copy, day = f"ledger.marts.{_q(table)}", f"serving.main.{_q(table)}", scope.unit(_q(scope.column))
    # one scan of the day column of each side; a row without a day could not be placed
    nulls = con.execute(f"select (select count(*) from {source} where {_q(scope.column)} is null) "
                        f"+ (select count(*) from {copy} where {_q(scope.column)} is null)").fetchone()[0]
    if nulls:
        return None
    rows = con.execute(
        f"select cast(d as date) from ({stamped_days_sql(scope, 'ledger')}) as stamped "
        f"union (select distinct {day} from {source} except select distinct {day} from {copy}) "
        f"union (select distinct {day} from {copy} except select distinct {day} from {source}) order by 1",
        [as_of]).fetchall()
    return [r[0] for r in rows if r[0] is not None]


def stamped_days_sql(scope: DayScope, catalog: str | None = None) -> str:
    """SQL of the upstream's days (`d`; months: their first days) stamped after a time bound as its one
    parameter (or never stamped)."""
    schema, _, name = scope.upstream.partition(".")
    relation = ".".join(_q(p) for p in ((catalog,) if catalog else ()) + (schema, name))
    return (f"select distinct {scope.unit(_q(scope.upstream_day))} as d from {relation} "
            f"where {_q(scope.stamp)} is null or {_q(scope.stamp)} > ?")


def days_stamped_since(con: duckdb.DuckDBPyConnection, table: str, scope: DayScope,
                       since: datetime) -> tuple[str, list[date]] | None:
    """For a check of mart `table` (in `marts` of the database `con` opened) that passed at `since`: a
    predicate on the mart's rows of the days its upstream rewrote after that, and those days; None when
    the mart lacks the day column or the upstream its stamp (then the check reads every row)."""
    schema, _, name = scope.upstream.partition(".")
    names = {r[0] for r in con.execute("select column_name from information_schema.columns where table_schema = ? "
                                       "and table_name = ?", [schema, name]).fetchall()}
    types = dict(con.execute("select column_name, data_type from information_schema.columns "
                             "where table_schema = 'marts' and table_name = ?", [table]).fetchall())
    if scope.upstream_day not in names or scope.stamp not in names or scope.column not in types:
        return None
    days = sorted(r[0] for r in con.execute(f"select cast(d as date) from ({stamped_days_sql(scope)}) as s",
                                            [since]).fetchall() if r[0] is not None)
    return in_days(scope.column, types[scope.column], days, scope.grain), days


def _next(d: date, grain: str) -> date:
    return d + timedelta(days=1) if grain == "day" else (d.replace(day=1) + timedelta(days=32)).replace(day=1)


def in_days(column: str, column_type: str, days: list[date], grain: str = "day") -> str:
    """A predicate: `column` falls on one of `days` (months of `grain` month: the months they start;
    consecutive ones as one range), as plain comparisons with constants of the column's type, which
    DuckDB checks against each row group's min/max."""
    ranges: list[list[date]] = []
    for d in sorted(days):
        if ranges and ranges[-1][1] == d:
            ranges[-1][1] = _next(d, grain)
        else:
            ranges.append([d, _next(d, grain)])
    kind = "date" if column_type == "DATE" else "timestamp"
    return "(" + " or ".join(f"({_q(column)} >= {kind} '{lo}' and {_q(column)} < {kind} '{hi}')"
                             for lo, hi in ranges) + ")" if ranges else "false"


def replace_days(con: duckdb.DuckDBPyConnection, table: str, scope: DayScope, days: list[date],
                 sort_order: Callable[[duckdb.DuckDBPyConnection, str], str]) -> int:
    """Delete `days` from the copy's `table` and insert the ledger's rows of those days, sorted as
    `sort_order` sorts them (warehouse/publish.py); returns the rows inserted."""
    if not days:
        return 0
    where = in_days(scope.column, dict(_columns(con, "ledger", "marts", table))[scope.column], days, scope.grain)
    rows = f"(select * from ledger.marts.{_q(table)} where {where})"
    con.execute(f"delete from serving.main.{_q(table)} where {where}")
    return con.execute(f"insert into serving.main.{_q(table)} select * from {rows} as r "
                       f"order by {sort_order(con, rows + ' as r')}").fetchone()[0]
