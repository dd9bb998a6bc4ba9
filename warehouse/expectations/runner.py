"""Running a suite: read its rows from DuckDB, validate them with great-expectations (GX 1.x
ephemeral context, on pandas: GX's SQL datasource on DuckDB is broken upstream).

Tables can be large (usage samples, API request logs, billing exports, the FOCUS ledger), and
GX on pandas costs seconds per million rows (it even hashes the whole frame twice per batch).
So a table with more than `sample_rows` rows (default SAMPLE_ROWS) is validated on a bounded,
deterministic frame: a uniform sample (the rows with the smallest `hash(row key, 42)`) plus the
rows DuckDB finds that an expectation could reject (nulls, values outside the set or range,
pairs out of order, duplicated keys), at most SUSPECT_ROWS per kind; the check metadata says so.
GX's verdict on that frame is the result. Only the columns the expectations name are read.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import threading
import time
from collections.abc import Sequence
from decimal import Decimal
from functools import cache
from typing import Any

import duckdb
import pandas as pd

from .dsl import SAMPLE_SEED, Expectation, Suite, named
from .gx_configurations import configurations_built_once

_WARMING: list[threading.Thread] = []


def prewarm() -> None:
    """Start importing great-expectations in a background thread (~3 CPU s of imports on this machine).

    The nightly job calls this when dbt starts building in its own process, so the import overlaps
    the build instead of delaying the suites that run after it. `validate` waits for the
    thread before it touches GX; nothing else imports GX meanwhile.
    """
    if not _WARMING and "great_expectations" not in sys.modules:
        thread = threading.Thread(target=_import_gx, name="gx-import", daemon=True)
        _WARMING.append(thread)
        thread.start()


def _import_gx() -> None:
    try:
        _import_without_spark()
    except Exception:  # noqa: BLE001 - validate() imports again and reports the real error
        pass


# Installed for the Spark lane, imported by GX whenever present, never used by suites on pandas frames.
_SPARK_MODULES = ("pyspark", "py4j")


def _import_without_spark() -> Any:
    """great-expectations, imported without its optional Spark support when pyspark is not loaded yet.

    GX imports pyspark and py4j whenever they are installed, as this project's Spark lane has them; the
    suites validate pandas frames only, and that import was ~0.7 of ~6 CPU s of GX's import. A None
    entry in sys.modules makes GX's own `try: import pyspark` fail while it imports; it is removed
    afterwards, so a later `import pyspark` (the Spark lane's) loads it as usual."""
    blocked = [name for name in _SPARK_MODULES if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    _defer_scipy_stats()
    try:
        return importlib.import_module("great_expectations")
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def _defer_scipy_stats() -> None:
    """Make `scipy.stats` load on its first use instead of when GX imports it (~1.7 of ~4.5 CPU s of the
    import). GX imports it at module level for its distribution expectations (KS test, KL divergence),
    which no suite here uses; the module stays in sys.modules as a lazy one (importlib.util.LazyLoader), so
    whoever does use it gets the real module at the first attribute they read. Set as an attribute of
    `scipy` too: `from scipy import stats` then takes it without touching it (through scipy's own lazy
    `__getattr__` the import machinery read an attribute, which loaded it at once)."""
    if "scipy.stats" in sys.modules:
        return
    try:
        import scipy

        spec = importlib.util.find_spec("scipy.stats")
    except ImportError:
        return
    if spec is None or spec.loader is None:
        return
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules["scipy.stats"] = module
    spec.loader.exec_module(module)
    scipy.stats = module


def _gx() -> Any:
    for thread in _WARMING:
        thread.join()
    return _import_without_spark()  # heavy import, only when a check runs (at once if it is done)


@cache
def _context() -> Any:
    gx = _gx()

    ctx = gx.get_context(mode="ephemeral")
    try:
        from great_expectations.data_context.types.base import ProgressBarsConfig

        ctx.variables.progress_bars = ProgressBarsConfig(globally=False)
    except Exception:  # progress bars are cosmetic; older/newer GX may name this differently
        pass
    return ctx


@cache
def _frames() -> Any:
    """One pandas data source, asset and whole-frame batch definition for every suite: the frame is a
    batch parameter. Each `add_*` call saves the context's configuration as YAML (even an ephemeral
    one): one asset per suite made that ~20 % of GX's time on the samples."""
    source = _context().data_sources.add_pandas("gpu_ledger_frames")
    return source.add_dataframe_asset("frame").add_batch_definition_whole_dataframe("all")


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    """GX compares numbers as floats; Decimal objects are converted for validation only.

    Frames read from DuckDB already hold DECIMAL as float64; this is for frames built by hand.
    """
    decimal_cols = [c for c in df.columns if df[c].dtype == object
                    and df[c].head(1000).map(lambda v: isinstance(v, Decimal)).any()]
    if not decimal_cols:
        return df
    out = df.copy()
    for col in decimal_cols:
        out[col] = out[col].astype(float)
    return out


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(float(value)) if isinstance(value, (int, float, Decimal)) else f"'{value}'"


def _suspect_predicate(cls_name: str, kw: dict[str, Any]) -> str | None:
    """SQL that selects the rows an expectation could reject (None: no such shortcut).

    It only chooses which rows GX sees besides the sample; GX's own verdict is the result.
    """
    col = _q(kw["column"]) if "column" in kw else None
    if cls_name == "ExpectColumnValuesToNotBeNull":
        return f"{col} is null"
    if cls_name == "ExpectColumnValuesToBeInSet":
        values = ", ".join(_lit(v) for v in kw["value_set"]) or "null"
        return f"({col} is not null and {col} not in ({values}))"
    if cls_name == "ExpectColumnValuesToBeBetween":
        parts = []
        if kw.get("min_value") is not None:
            parts.append(f"{col} {'<=' if kw.get('strict_min') else '<'} {_lit(kw['min_value'])}")
        if kw.get("max_value") is not None:
            parts.append(f"{col} {'>=' if kw.get('strict_max') else '>'} {_lit(kw['max_value'])}")
        return "(" + " or ".join(parts) + ")" if parts else None
    if cls_name == "ExpectColumnPairValuesAToBeGreaterThanB":
        op = "<" if kw.get("or_equal") else "<="
        return f"({_q(kw['column_A'])} {op} {_q(kw['column_B'])})"
    if cls_name == "ExpectColumnValuesToMatchRegex":
        prefix = _LITERAL_PREFIX.fullmatch(kw["regex"])
        if prefix:  # `^GPU-`: a prefix test, not a regular expression on every row (0.7 s at 11M rows)
            return f"({col} is not null and not starts_with({col}::varchar, {_lit(prefix.group(1))}))"
        return f"({col} is not null and not regexp_matches({col}::varchar, {_lit(kw['regex'])}))"
    return None


def _key_columns(suite: Suite) -> list[list[str]]:
    """Column sets the suite expects to be unique."""
    keys = []
    for cls_name, kw in suite.expectations:
        if cls_name == "ExpectColumnValuesToBeUnique":
            keys.append([kw["column"]])
        elif cls_name == "ExpectCompoundColumnsToBeUnique":
            keys.append(list(kw["column_list"]))
    return keys


SUSPECT_ROWS = 1_000  # per kind of suspicion, on top of the sample
# From this many rows the suspects are found one predicate at a time (`_sample_and_suspects`). raw.gpu_samples
# at fleet-1000-30, CPU s one scan -> one per predicate: 43M rows 8.5 -> 3.1, 4.3M 1.31 -> 1.03, 1.4M 0.67 -> 0.80.
SPLIT_SCAN_ROWS = 2_000_000
_LITERAL_PREFIX = re.compile(r"\^([A-Za-z0-9 _:/-]+)")  # a regex that only anchors a literal prefix


def _row_id(con: duckdb.DuckDBPyConnection, suite: Suite, cols: list[str]) -> tuple[str, str]:
    """(what tells a sampled row from a suspect row, what the sample is drawn on): `rowid` for both
    in a table; in a raw view over Parquet files (warehouse/raw_files.py), which has none, the
    landed file and its line (the sample key) and the values read."""
    kind = con.execute("select table_type from information_schema.tables "
                       "where table_schema = ? and table_name = ?", [suite.schema, suite.table]).fetchone()
    if kind and kind[0] == "BASE TABLE":
        return "rowid", "rowid"
    return (f"hash({', '.join(_q(c) for c in dict.fromkeys(['_file_hash', '_source_line', *cols]))})",
            "_file_hash, _source_line")


def _sample_and_suspects(con: duckdb.DuckDBPyConnection, source: str, select: str, rid: str, key: str,
                         predicates: list[str], n: int, total: int) -> tuple[pd.DataFrame, int]:
    """The sample and the predicate suspects: (frame, rows of it in the sample).

    The sample is the `n` rows with the smallest hash(key, SAMPLE_SEED): uniform, and the same for
    the same table state whatever the threads. A scan keeps the rows below a hash bound that ~3n rows
    pass (fewer than n pass with a probability below 1e-20 at n = 100) or that a predicate selects;
    the window then takes the n smallest and up to SUSPECT_ROWS suspects outside them. From
    SPLIT_SCAN_ROWS rows on, each predicate has a scan of its own, so that DuckDB skips every row group
    whose min/max rule the predicate out: an OR of predicates on several columns skips none."""
    bound = min(2**64 - 1, (2**64 * min(3 * n, total)) // max(total, 1))
    below = f"hash({key}, {SAMPLE_SEED}) < {bound}::ubigint"
    columns = f"{rid} as _rid, {select}, hash({key}, {SAMPLE_SEED}) as _h"
    suspect = f"coalesce({' or '.join(predicates) if predicates else 'false'}, false)"
    if predicates and total >= SPLIT_SCAN_ROWS:
        # Materialized: no other condition joins a predicate in its scan (it would skip nothing). Rows once.
        scans = " union all ".join(f"select {columns} from {source} where {p}" for p in predicates)
        candidates = (f"with found as materialized ({scans}) select {columns}, {suspect} as _suspect from {source} "
                      f"where {below} union all select *, true from (select distinct on (_rid) * from found "
                      f"where _h >= {bound}::ubigint) as f")
    else:
        candidates = f"select {columns}, {suspect} as _suspect from {source} where {below} or {suspect}"
    ranked = f"select *, row_number() over (order by _h, _rid) <= {n} as _in_sample from ({candidates}) as c"
    frame = con.execute(
        f"select * exclude (_h, _suspect) from ({ranked}) as r "
        f"qualify _in_sample or (_suspect and row_number() over (partition by _suspect, _in_sample "
        f"order by _h, _rid) <= {SUSPECT_ROWS}) order by _in_sample desc").df()
    in_sample = int(frame.pop("_in_sample").sum())
    return frame, in_sample


def _duplicates(con: duckdb.DuckDBPyConnection, keys: list[list[str]], table: str, source: str, rid: str,
                select: str) -> list[pd.DataFrame]:
    """Up to SUSPECT_ROWS rows per unique key that share their key with another row. `source` scoped to
    some files (not `table`): the keys of its rows, duplicated anywhere in the table (an earlier file's
    row too), so a scoped frame misses no duplicate a whole-table one would find."""
    frames = []
    for key in keys:
        cols = ", ".join(_q(c) for c in key)
        scoped = f"where ({cols}) in (select {cols} from {source}) " if source != table else ""
        frames.append(con.execute(f"select {rid} as _rid, {select} from {table} {scoped}"
                                  f"qualify count(*) over (partition by {cols}) > 1 limit {SUSPECT_ROWS}").df())
    return frames


def _distinct_rows(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The frames as one, each row (`_rid`) once, in row order, without `_rid`."""
    return (pd.concat(parts, ignore_index=True).drop_duplicates("_rid").sort_values("_rid")
            .drop(columns="_rid").reset_index(drop=True))


def read_frame(con: duckdb.DuckDBPyConnection, suite: Suite, files: Sequence[str] | None = None,
               rows: tuple[str, str] | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The rows a suite validates, and metadata saying how they were chosen.

    `files` (landed file hashes; raw tables only): validate only the rows those files loaded, plus the
    rows of the whole table that share a unique key with one of them (`night_scope` says when a
    refresh may). `rows` (a predicate, and what it selects): likewise only the rows it selects.

    A table of at most `suite.sample_rows` rows is read whole, a bigger one as the module doc says (a
    sample alone would miss a rare bad row and every duplicate). A column the table lacks is left out, so
    its expectation fails and names it. DuckDB returns DECIMAL as float64, as GX compares numbers anyway.
    """
    present = {r[0] for r in con.execute(
        "select column_name from information_schema.columns where table_schema = ? and table_name = ?",
        [suite.schema, suite.table]).fetchall()}
    if not present:
        raise LookupError(f"table {suite.target} does not exist")
    wanted = suite.columns()
    cols = [c for c in wanted if c in present]
    select = ", ".join(_q(c) for c in cols) or "1 as _row"
    table = source = f"{_q(suite.schema)}.{_q(suite.table)}"
    meta: dict[str, Any] = {"missing_columns": ", ".join(c for c in wanted if c not in present)}
    if files is not None and "_file_hash" in present:
        # A literal list: DuckDB then skips the other files' row groups of a Parquet-backed raw view by their
        # statistics (the column is constant per file) instead of reading every day of the history.
        night = f"_file_hash in ({', '.join(_lit(h) for h in files) or 'null'})"
        rowid = "rowid, " if _row_id(con, suite, cols)[0] == "rowid" else ""
        source = f"(select {rowid}* from {table} where {night}) as night"
        meta["scope"] = f"the rows of the {len(files)} files loaded in this run"
    elif rows is not None:
        rowid = "rowid, " if _row_id(con, suite, cols)[0] == "rowid" else ""
        source, meta["scope"] = f"(select {rowid}* from {table} where {rows[0]}) as night", rows[1]
    total = con.execute(f"select count(*) from {source}").fetchone()[0]
    meta["rows"] = total
    keys = [k for k in _key_columns(suite) if all(c in present for c in k)]
    if suite.sample_rows is None or total <= suite.sample_rows:
        if source == table or not keys:
            df = con.execute(f"select {select} from {source}").df()
        else:  # the files' rows and, for the unique rules, every row sharing a key with one of them
            rid = _row_id(con, suite, cols)[0]
            df = _distinct_rows([con.execute(f"select {rid} as _rid, {select} from {source}").df(),
                                 *_duplicates(con, keys, table, source, rid, select)])
        meta.update(rows_validated=len(df), sampled="no: every row")
        return df, meta

    sample = f"using sample {suite.sample_rows} rows (smallest hash of the row key, seed {SAMPLE_SEED})"
    rid, sample_key = _row_id(con, suite, cols)
    predicates = [p for cls_name, kw in suite.expectations
                  if all(c in present for c in named(kw)) and (p := _suspect_predicate(cls_name, kw))]
    frame, sampled = _sample_and_suspects(con, source, select, rid, sample_key, predicates, suite.sample_rows, total)
    df = _distinct_rows([frame, *_duplicates(con, keys, table, source, rid, select)])
    suspects = len(df) - sampled
    meta.update(rows_validated=len(df), sampled=(
        f"{sample}: {sampled:,} of {total:,} rows, plus {suspects:,} suspect rows "
        f"(nulls, out-of-set/range values, pairs out of order, duplicated keys; at most {SUSPECT_ROWS:,} per kind)"))
    return df, meta


# Expectations on each row (or each pair or set of rows) of the columns they name: a frame without rows
# gives them nothing to reject, and GX passes them (tests/quality/test_gx_suites.py runs GX on each kind).
# The column-type rule (ExpectColumnValuesToBeInTypeList) is not among them: it checks the column's type,
# which an empty table still has.
ROW_RULES = frozenset({
    "ExpectColumnValuesToNotBeNull", "ExpectColumnValuesToBeInSet", "ExpectColumnValuesToBeBetween",
    "ExpectColumnPairValuesAToBeGreaterThanB", "ExpectColumnValuesToMatchRegex", "ExpectColumnValuesToBeUnique",
    "ExpectCompoundColumnsToBeUnique",
})


def to_validate(suite: Suite, df: pd.DataFrame) -> list[Expectation]:
    """The expectations GX must run on `df`: all of them, but on a frame without rows only those that can
    still fail (a column-type rule, or any rule on a column the frame lacks).

    Nearly half of the suites of a refresh meet an empty table (a home without that source): GX's fixed cost
    per expectation (~4 ms) bought nothing there."""
    if len(df):
        return list(suite.expectations)
    return [(cls_name, kw) for cls_name, kw in suite.expectations
            if cls_name not in ROW_RULES or not all(c in df.columns for c in named(kw))]


def validate(suite: Suite, df: pd.DataFrame) -> tuple[bool, list[str]]:
    """Run a suite on a DataFrame; returns (success, one line per failed expectation)."""
    expectations = to_validate(suite, df)
    if not expectations:
        return True, []
    return gx_validate(f"suite_{suite.schema}_{suite.table}", expectations, df)


def gx_validate(name: str, expectations: list[Expectation], df: pd.DataFrame) -> tuple[bool, list[str]]:
    """GX itself on `df`, every expectation given: (success, one line per failed expectation)."""
    gx = _gx()

    batch = _frames().get_batch(batch_parameters={"dataframe": _plain(df)})
    # Given whole, not by `add_expectation`, which compares each new expectation with every one added
    # before it (a pydantic dict of both): ~2,100 comparisons for the sample's 60 suites; 1.30-1.61 CPU s
    # for the 60 against 1.41-1.83 (two runs of three, alternating).
    gx_suite = gx.ExpectationSuite(name=name, expectations=[getattr(gx.expectations, cls_name)(**kwargs)
                                                            for cls_name, kwargs in expectations])
    # Most suites pass: validate for the verdict alone first (BOOLEAN_ONLY skips the unexpected-value
    # lists and counts, ~28 % of GX's time here), and only a failing suite again for the details.
    with configurations_built_once():  # the sample's 60 suites: 1.33-1.46 CPU s against 2.10-2.19
        quick = batch.validate(gx_suite, result_format="BOOLEAN_ONLY")
        if quick.success:
            return True, []
        result = batch.validate(gx_suite, result_format="SUMMARY")
    failures = [_describe(r) for r in result.results if not r.success]
    return result.success, failures


def _describe(r: Any) -> str:
    kwargs = ", ".join(f"{k}={v}" for k, v in r.expectation_config.kwargs.items()
                       if k not in ("batch_id", "value_set"))
    head = f"{r.expectation_config.type}({kwargs})"
    error = (r.exception_info or {}).get("exception_message") if r.exception_info else None
    if error:
        return f"{head}: {error.strip().splitlines()[0][:200]}"
    if "unexpected_count" not in r.result and "observed_value" in r.result:
        return f"{head}: observed {r.result['observed_value']}"
    return (f"{head}: {r.result.get('unexpected_count', '?')} unexpected, "
            f"e.g. {r.result.get('partial_unexpected_list', [])[:3]}")


def run_suite(con: duckdb.DuckDBPyConnection, suite: Suite, files: Sequence[str] | None = None,
              rows: tuple[str, str] | None = None) -> tuple[bool, list[str], dict[str, Any]]:
    """Read a suite's rows from the working database (only those `files` loaded, or `rows` selects, when
    given: see `read_frame`) and validate them; metadata includes seconds."""
    started = time.perf_counter()
    df, meta = read_frame(con, suite, files, rows)
    run = len(to_validate(suite, df))
    meta["expectations_run"] = (f"{run} of {len(suite.expectations)} (no rows: the row rules have nothing to check)"
                                if run < len(suite.expectations) else str(run))
    passed, failures = validate(suite, df)
    meta["seconds"] = round(time.perf_counter() - started, 3)
    return passed, failures, meta
