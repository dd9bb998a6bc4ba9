"""Parse and load every landed file of one source family that is not loaded yet.

One broken file never stops the others: an unreadable or unrecognised file is recorded in
`audit.file_loads` and quarantined in `audit.dq_rejects` with its name, line and problem.

Files are committed and audited one after another, in manifest order. A file whose rows go to a
table stored as Parquet files (raw.gpu_samples) needs no database until its commit, so the next
PREPARE_AHEAD such files are parsed and written to their temporary files in worker threads
meanwhile (`_read_ahead`); the commit renames them into place exactly as an in-order load does.
"""

from __future__ import annotations

import inspect
import re
import tempfile
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from sources.catalog import recognise, unrecognised_reason
from sources.common import BatchedParse, ParseOutput, Reject, SourceFormat, UnreadableFile
from sources.plausibility import gate as plausibility_gate
from sources.plausibility import gate_stream
from sources.secrets import scrub_output, scrub_table
from warehouse.audit import ensure_audit
from warehouse.landing import LandedFile, read_manifest
from warehouse.line_endings import uniform_copy
from warehouse.raw import (
    FileTarget,
    PreparedFile,
    commit_prepared,
    ensure_all_raw_tables,
    file_target,
    prepare_file_batches,
    replace_file,
    replace_file_batches,
)
from warehouse.registry_check import check_registry, stop_if_lost_workloads_are_used


@dataclass
class FamilySummary:
    """What happened to one family in one run."""

    family: str
    files_seen: int = 0
    files_loaded: int = 0
    rows_loaded: int = 0
    rejects: int = 0
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _already_loaded(con: duckdb.DuckDBPyConnection, family: str) -> set[str]:
    rows = con.execute(
        "select distinct file_hash from audit.file_loads where family = ?", [family]
    ).fetchall()
    return {r[0] for r in rows}


def _record(
    con: duckdb.DuckDBPyConnection, f: LandedFile, fmt: str, status: str, rows: int,
    rejects: list[Reject], message: str, run_id: str, redactions: dict[str, int] | None = None,
) -> None:
    con.execute("delete from audit.file_loads where file_hash = ? and family = ?", [f.sha256, f.family])
    redacted = dict(sorted((redactions or {}).items()))
    con.execute(
        "insert into audit.file_loads (file_hash, family, format, source_file, origin, observed_at, rows_loaded, "
        "rejects, status, message, run_id, loaded_at, redactions, redacted_columns) "
        "values (?, ?, ?, ?, ?, ?::timestamp, ?, ?, ?, ?, ?, current_timestamp::timestamp, ?, ?)",
        [f.sha256, f.family, fmt, f.original_name, f.origin, f.observed_at.replace("Z", ""), rows,
         len(rejects), status, message, run_id, sum(redacted.values()),
         ", ".join(f"{k} {n}" for k, n in redacted.items()) or None],
    )
    con.execute("delete from audit.dq_rejects where file_hash = ? and source_family = ?", [f.sha256, f.family])
    if rejects:
        con.executemany(
            "insert into audit.dq_rejects values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?::timestamp, ?)",
            [[f.family, fmt, f.sha256, f.original_name, r.line, r.column, r.value, r.rule, r.message,
              f.observed_at.replace("Z", ""), run_id] for r in rejects],
        )


# Files parsed and written ahead of the one being committed (worker threads): DuckDB's reader and
# pyarrow's writer release the GIL, so two files use both cores. 0: every file in order, in the loader.
PREPARE_AHEAD = 2

_UNSAFE = re.compile(r"[^A-Za-z0-9._@+=-]+")


def _parse(fmt: SourceFormat, path: Path, f: LandedFile, *, batched: bool = False,
           sharing_cores: bool = False) -> ParseOutput | BatchedParse:
    """Call the parser on the landed bytes under the file's original name (`fmt.stream` when `batched`).

    Some formats carry facts in the name (vLLM's `_tp8_pp2_` and result stem, LiteLLM catalog
    versions), so the parser sees a symlink named like the original (sanitised: a base name only,
    never a path) in a private temporary folder. Parsers whose files carry no time of their own
    get a time: `landed_at` (the landing time) to parsers that take it, `fetched_at` only for a file
    the pipeline fetched over HTTP (a copied file's modification or landing time is not the time its
    prices were seen: the price parsers then date it by its name or call it undated).
    """
    safe = _UNSAFE.sub("_", Path(f.original_name).name).lstrip(".") or f.sha256
    with tempfile.TemporaryDirectory(prefix="gpu-ledger-parse-") as tmp:
        named = Path(tmp) / safe
        named.symlink_to(path.resolve())
        if batched and fmt.stream is not None:
            # Opened lazily while the loader pulls batches: read through the landed path itself
            # (the symlink's folder is gone by then); batched formats take nothing from the name.
            # Impossible figures are quarantined batch by batch (every gate reads one row only).
            # `sharing_cores`: other files are parsed meanwhile, so the reader takes one thread.
            one_thread = sharing_cores and "threads" in inspect.signature(fmt.stream).parameters
            return gate_stream(fmt.stream(path, threads=1) if one_thread else fmt.stream(path))
        params = inspect.signature(fmt.parse).parameters
        observed = datetime.strptime(f.observed_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        if "landed_at" in params:
            return fmt.parse(named, landed_at=observed)
        if "fetched_at" in params:
            return fmt.parse(named, fetched_at=observed if f.http_status is not None else None)
        return fmt.parse(named)


def _checked(output: ParseOutput) -> tuple[ParseOutput, dict[str, int]]:
    # Impossible figures (prices, API spend, jobs) never reach raw; credentials never pass landing/.
    return scrub_output(plausibility_gate(output))


def _load_batches(
    con: duckdb.DuckDBPyConnection, fmt: SourceFormat, path: Path, f: LandedFile,
) -> tuple[int, ParseOutput, dict[str, int]]:
    """Load a file in bounded batches (memory does not grow with the file): every batch passes the
    plausibility gate (`_parse`) and is scrubbed of credentials before its insert, the rejects and
    warnings at the end."""
    parsed = _parse(fmt, path, f, batched=True)
    redactions: dict[str, int] = {}
    rows, end = replace_file_batches(con, parsed, file_hash=f.sha256, source_file=f.original_name, fmt=fmt.name,
                                     family=f.family, each=_scrubber(parsed.table, redactions), tables_ready=True)
    output, more = scrub_output(ParseOutput(rejects=end.rejects, warnings=end.warnings))
    for key, n in more.items():
        redactions[key] = redactions.get(key, 0) + n
    return rows, output, redactions


def _scrubber(table: str, redactions: dict[str, int]) -> Callable[[pa.Table], pa.Table]:
    """The credential scrub of every batch before it is stored, counting into `redactions`."""

    def scrub(batch: pa.Table) -> pa.Table:
        batch, counts = scrub_table(batch)
        for col, n in counts.items():
            redactions[f"{table}.{col}"] = redactions.get(f"{table}.{col}", 0) + n
        return batch

    return scrub


@dataclass
class _Ahead:
    """A landed file parsed and written to its temporary Parquet file in a worker thread."""

    fmt: SourceFormat
    future: Future[tuple[PreparedFile, dict[str, int]]]


def _prepare(parsed: BatchedParse, target: FileTarget, f: LandedFile,
             fmt_name: str) -> tuple[PreparedFile, dict[str, int]]:
    redactions: dict[str, int] = {}
    prepared = prepare_file_batches(parsed, target, file_hash=f.sha256, source_file=f.original_name, fmt=fmt_name,
                                    each=_scrubber(parsed.table, redactions))
    return prepared, redactions


def _read_ahead(con: duckdb.DuckDBPyConnection, pool: ThreadPoolExecutor, f: LandedFile,
                landing_dir: Path, sharing_cores: bool = False) -> _Ahead | None:
    """Start a file's parse and Parquet write in `pool` when it needs no database until its commit: a
    batched format, a file-stored table. None: the loader does it in order. `sharing_cores`: other
    files are prepared at the same time (the reader then takes one thread, see `_parse`)."""
    if f.refused:
        return None
    path = landing_dir / f.landed_path
    fmt = recognise(path, f.family)
    if fmt is None or fmt.stream is None:
        return None
    try:
        parsed = _parse(fmt, path, f, batched=True, sharing_cores=sharing_cores)
    except UnreadableFile:
        return None  # load_landed meets it again and quarantines the file
    target = file_target(con, parsed.table)
    if target is None:
        return None
    return _Ahead(fmt, pool.submit(_prepare, parsed, target, f, fmt.name))


def _load(con: duckdb.DuckDBPyConnection, fmt: SourceFormat, path: Path, f: LandedFile,
          ahead: _Ahead | None) -> tuple[int, ParseOutput, dict[str, int]]:
    """Parse `path` as `f` and load its rows (the batched and read-ahead formats); rows -1: `replace_file`
    is left to the caller."""
    if ahead is not None:
        prepared, redactions = ahead.future.result()
        rows = commit_prepared(con, prepared, family=f.family, tables_ready=True)
        output, more = scrub_output(ParseOutput(rejects=prepared.end.rejects, warnings=prepared.end.warnings))
        for key, n in more.items():
            redactions[key] = redactions.get(key, 0) + n
        return rows, output, redactions
    if fmt.stream is not None:
        return _load_batches(con, fmt, path, f)
    output, redactions = _checked(_parse(fmt, path, f))
    return -1, output, redactions


def _load_uniform_line_ends(con: duckdb.DuckDBPyConnection, fmt: SourceFormat, path: Path, f: LandedFile,
                            failed: UnreadableFile) -> tuple[int, ParseOutput, dict[str, int]] | UnreadableFile:
    """After `failed`: load a copy of the file with uniform line ends when its own mix them (a strict CSV
    reader stops on the whole file there, `warehouse/line_endings.py`), saying so in a warning; else, or
    when the copy fails too, the failure to report."""
    with tempfile.TemporaryDirectory(prefix="gpu-ledger-line-ends-") as tmp:
        try:
            copy = uniform_copy(path, Path(tmp))
        except (OSError, EOFError):  # no room for the copy, a broken gzip: the first failure stands
            return failed
        if copy is None:
            return failed
        try:
            rows, output, redactions = _load(con, fmt, copy.path, f, None)
        except UnreadableFile as again:
            return UnreadableFile(path, again.line, f"{again.problem} (and so with uniform line ends: the file "
                                                    f"has {copy.mixed})")
        output.warnings.append(copy.warning)
        return rows, output, redactions


def load_landed(
    con: duckdb.DuckDBPyConnection, f: LandedFile, landing_dir: Path, run_id: str, summary: FamilySummary,
    ahead: _Ahead | None = None,
) -> None:
    """Parse one landed file and replace its rows; quarantine what cannot be read. The raw tables
    exist already (`ingest_family` creates them once per ingest). `ahead`: the parse and the Parquet
    file were started in a worker thread; only the commit and the audit rows are left."""
    if f.refused:  # refused at landing (a link out of the inputs, a hidden name...): no bytes to parse
        msg = f"{f.original_name}: {f.refused}"
        summary.problems.append(msg)
        _record(con, f, "refused", "unreadable", 0, [Reject(None, "unreadable_file", f.refused)], msg, run_id)
        return
    path = landing_dir / f.landed_path
    fmt = ahead.fmt if ahead is not None else recognise(path, f.family)
    if fmt is None:
        because = unrecognised_reason(path, f.family)
        msg = f"{f.original_name}: no known {f.family} format matches this file's content" + (
            f" ({because})" if because else "")
        summary.problems.append(msg)
        _record(con, f, "unknown", "unknown_format", 0, [Reject(None, "unknown_format", msg)], msg, run_id)
        return
    try:
        rows, output, redactions = _load(con, fmt, path, f, ahead)
    except UnreadableFile as exc:
        loaded = _load_uniform_line_ends(con, fmt, path, f, exc)
        if isinstance(loaded, UnreadableFile):
            where = f"{f.original_name}:{loaded.line}" if loaded.line else f.original_name
            msg = f"{where}: {loaded.problem}"
            summary.problems.append(msg)
            _record(con, f, fmt.name, "unreadable", 0, [Reject(loaded.line, "unreadable_file", loaded.problem)], msg,
                    run_id)
            return
        rows, output, redactions = loaded
    if redactions:
        where = ", ".join(f"{k} {n}" for k, n in sorted(redactions.items()))
        output.warnings.append(f"{sum(redactions.values())} value(s) holding a credential stored only as their "
                               f"sha256 ({where})")
    if rows < 0:
        rows = replace_file(con, output, file_hash=f.sha256, source_file=f.original_name, fmt=fmt.name,
                            family=f.family, tables_ready=True)
    if rows == 0 and not output.rejects:  # said here once for every format, not by each parser
        output.warnings.append("no rows loaded: the file holds no data rows")
    summary.files_loaded += 1
    summary.rows_loaded += rows
    summary.rejects += len(output.rejects)
    summary.warnings.extend(f"{f.original_name}: {w}" for w in output.warnings)
    _record(con, f, fmt.name, "loaded", rows, output.rejects, "; ".join(output.warnings)[:2000], run_id,
            redactions)


def ingest_family(
    con: duckdb.DuckDBPyConnection, family: str, landing_dir: Path, run_id: str, *, reload_all: bool = False,
) -> FamilySummary:
    """Load every landed file of the family not loaded yet (all of them when `reload_all`)."""
    ensure_audit(con)
    ensure_all_raw_tables(con)
    summary = FamilySummary(family)
    done = set() if reload_all else _already_loaded(con, family)
    pending: dict[str, LandedFile] = {}
    for f in read_manifest(landing_dir):
        if f.family == family and f.sha256 not in done:
            pending.setdefault(f.sha256, f)
    if family == "registry" and pending:
        # The registry is checked as a whole (warehouse/registry_check.py): when a file is new or
        # edited, every registry file is loaded again, so an entry quarantined for a conflict that is
        # gone comes back.
        for f in read_manifest(landing_dir):
            if f.family == family:
                pending.setdefault(f.sha256, f)
    files = list(pending.values())
    # Files are committed and audited in manifest order; the next PREPARE_AHEAD ones are parsed and
    # written to their temporary Parquet files meanwhile, on the other core.
    ahead: dict[int, _Ahead | None] = {}
    with ThreadPoolExecutor(max(1, PREPARE_AHEAD), thread_name_prefix="gpu-ledger-prepare") as pool:
        try:
            for i, f in enumerate(files):
                for j in range(i, min(i + PREPARE_AHEAD, len(files))):
                    if j not in ahead:
                        ahead[j] = _read_ahead(con, pool, files[j], landing_dir,
                                               sharing_cores=PREPARE_AHEAD > 1 and len(files) - i > 1)
                summary.files_seen += 1
                load_landed(con, f, landing_dir, run_id, summary, ahead.pop(i, None))
        finally:
            for left in ahead.values():  # an error stopped the loop: remove what was prepared for nothing
                if left is not None and not left.future.cancel() and left.future.exception() is None:
                    left.future.result()[0].load.abort()  # a failed preparation removed its own file
    if family == "registry":
        for c in check_registry(con, run_id) if files else []:
            summary.rejects += 1
            summary.problems.append(c.message)
        stop_if_lost_workloads_are_used(con)  # RegistryStop: the refresh ends here, before any model
    return summary
