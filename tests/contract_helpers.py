"""Test helper: load a ParseOutput into an in-memory DuckDB exactly as the pipeline does."""

from __future__ import annotations

import duckdb

from warehouse.raw import replace_file
from sources.common import ParseOutput


def load_in_memory(output: ParseOutput, family: str, fmt: str = "test") -> duckdb.DuckDBPyConnection:
    """Return an in-memory DuckDB with `output` loaded into its raw tables (contract-checked)."""
    con = duckdb.connect()
    replace_file(con, output, file_hash="0" * 64, source_file="test", fmt=fmt, family=family)
    return con
