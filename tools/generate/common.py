"""Helpers the generators share: SQL string literals, GUID-shaped ids, DuckDB COPY to a file."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb


def sql_str(s: str | None) -> str:
    """A SQL string literal (`null` for None)."""
    return "null" if s is None else "'" + s.replace("'", "''") + "'"


def guid(hex_digest: str) -> str:
    """The first 32 hex digits laid out as a GUID: 8-4-4-4-12."""
    h = hex_digest
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def sha1_guid(text: str) -> str:
    """A stable GUID-shaped id derived from `text`."""
    return guid(hashlib.sha1(text.encode()).hexdigest())


def copy_sql(query: str, path: Path | str, options: str = "format csv, header true") -> str:
    """`copy (query) to 'path' (options)`."""
    return f"copy ({query}) to {sql_str(str(path))} ({options})"


def copy_query(query: str, path: Path | str, options: str = "format csv, header true") -> None:
    """Write the result of `query` to `path` with a fresh in-memory DuckDB connection."""
    con = duckdb.connect()
    try:
        con.execute("set enable_progress_bar = false")
        con.execute(copy_sql(query, path, options))
    finally:
        con.close()
