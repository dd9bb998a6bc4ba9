"""Loads parser output into `raw.*` tables according to `warehouse/contracts/*.yaml`.

Idempotent by construction: a landed file's rows are replaced in one transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import yaml

from sources.common import BatchedParse, ParseOutput, StreamEnd

CONTRACTS_DIR = Path(__file__).resolve().parent / "contracts"
LINEAGE_COLUMNS = {
    "_file_hash": "VARCHAR",
    "_source_file": "VARCHAR",
    "_source_line": "BIGINT",
    "_format": "VARCHAR",
    "_loaded_at": "TIMESTAMP",
}


class ContractError(Exception):
    """Parser output does not match its raw table contract."""


@cache
def contracts() -> dict[str, dict[str, Any]]:
    """Every raw table contract, keyed by table name."""
    merged: dict[str, dict[str, Any]] = {}
    for path in sorted(CONTRACTS_DIR.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text()) or {}
        for name, spec in (doc.get("tables") or {}).items():
            if name in merged:
                raise ContractError(f"raw table {name!r} is declared twice (second time in {path.name})")
            merged[name] = {**spec, "family": doc.get("family", path.stem)}
    return merged


def contract_columns(table: str) -> dict[str, str]:
    """Contract columns (name -> DuckDB type) of one raw table, lineage columns excluded."""
    try:
        return dict(contracts()[table]["columns"])
    except KeyError as exc:
        raise ContractError(f"no contract declares raw table {table!r}") from exc


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def ensure_raw_table(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """Create `raw.<table>` from its contract if it does not exist yet."""
    cols = {**contract_columns(table), **LINEAGE_COLUMNS}
    ddl = ", ".join(f"{_quote(c)} {t}" for c, t in cols.items())
    con.execute("create schema if not exists raw")
    con.execute(f"create table if not exists raw.{_quote(table)} ({ddl})")


def ensure_all_raw_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create every contracted raw table, so dbt sources exist even before their first file."""
    for table in contracts():
        ensure_raw_table(con, table)


def check_contract(table: str, data: pa.Table) -> None:
    """Raise ContractError when the parser produced columns the contract does not declare."""
    allowed = set(contract_columns(table)) | {"_source_line"}
    extra = [c for c in data.column_names if c not in allowed]
    if extra:
        raise ContractError(f"raw.{table}: parser produced undeclared columns {extra}")


def insert_rows(
    con: duckdb.DuckDBPyConnection,
    table: str,
    data: pa.Table,
    *,
    file_hash: str,
    source_file: str,
    fmt: str,
) -> int:
    """Insert one parsed table (no transaction handling; see `replace_file`)."""
    check_contract(table, data)
    ensure_raw_table(con, table)
    cols = contract_columns(table)
    present = set(data.column_names)
    con.register("_incoming", data)
    try:
        select = []
        for col, typ in cols.items():
            select.append(f"cast({_quote(col)} as {typ})" if col in present else f"cast(null as {typ})")
        line = "cast(_source_line as bigint)" if "_source_line" in present else "cast(null as bigint)"
        names = ", ".join(_quote(c) for c in [*cols, *LINEAGE_COLUMNS])
        con.execute(
            f"insert into raw.{_quote(table)} ({names}) select {', '.join(select)}, "
            f"?, ?, {line}, ?, current_timestamp::timestamp from _incoming",
            [file_hash, source_file, fmt],
        )
    finally:
        con.unregister("_incoming")
    return data.num_rows


def replace_file(
    con: duckdb.DuckDBPyConnection,
    output: ParseOutput,
    *,
    file_hash: str,
    source_file: str,
    fmt: str,
    family: str,
) -> int:
    """Replace every row of one landed file across its family's raw tables, atomically."""
    family_tables = [t for t, spec in contracts().items() if spec["family"] == family]
    for t in family_tables:
        ensure_raw_table(con, t)
    con.execute("begin transaction")
    try:
        for t in family_tables:
            con.execute(f"delete from raw.{_quote(t)} where _file_hash = ?", [file_hash])
        loaded = 0
        for table, data in output.tables.items():
            loaded += insert_rows(con, table, data, file_hash=file_hash, source_file=source_file, fmt=fmt)
        con.execute("commit")
    except Exception:
        con.execute("rollback")
        raise
    return loaded


def replace_file_batches(
    con: duckdb.DuckDBPyConnection,
    parsed: BatchedParse,
    *,
    file_hash: str,
    source_file: str,
    fmt: str,
    family: str,
    each: Callable[[pa.Table], pa.Table] = lambda t: t,
) -> tuple[int, StreamEnd]:
    """`replace_file` for a parse in bounded batches: one transaction, one insert per batch (so
    memory holds one batch, not the file), then the parser's end-of-file corrections: delete the
    rows it dropped (duplicates) and move line numbers past the lines its reader rejected.
    `each` is applied to every batch before its insert (the credential scrub)."""
    family_tables = [t for t, spec in contracts().items() if spec["family"] == family]
    for t in family_tables:
        ensure_raw_table(con, t)
    target = f"raw.{_quote(parsed.table)}"
    con.execute("begin transaction")
    try:
        for t in family_tables:
            con.execute(f"delete from raw.{_quote(t)} where _file_hash = ?", [file_hash])
        loaded = 0
        for batch in parsed.batches():
            loaded += insert_rows(con, parsed.table, each(batch), file_hash=file_hash, source_file=source_file,
                                  fmt=fmt)
        end = parsed.finish()
        if end.drop_lines:
            con.execute(f"delete from {target} where _file_hash = ? and _source_line in (select unnest(?))",
                        [file_hash, end.drop_lines])
            loaded -= len(end.drop_lines)
        if end.rejected_lines:
            # Row with provisional line p is on file line p + #{i : rejected[i] - i <= p}
            # (sources.common.provisional_to_file_lines): an ASOF join on the cumulative counts.
            steps = [line - i for i, line in enumerate(end.rejected_lines)]
            con.execute(
                f"update {target} as t set _source_line = t._source_line + s.shift from ("
                f"select r._source_line as line, c.shift from {target} as r asof join ("
                f"select step, max(k) as shift from (select step, row_number() over (order by step) as k "
                f"from unnest(?) as u(step)) group by step) as c on r._source_line >= c.step "
                f"where r._file_hash = ?) as s where t._file_hash = ? and t._source_line = s.line",
                [steps, file_hash, file_hash])
        con.execute("commit")
    except Exception:
        con.execute("rollback")
        raise
    return loaded, end
