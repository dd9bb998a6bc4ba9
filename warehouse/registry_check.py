"""Registry conflicts across files, found before any model runs: the conflicting entry is quarantined.

One registry file is parsed alone (sources/registry/workloads.py rejects a vocabulary error such as
an unknown workload type); what only the whole registry shows is checked here, over the latest
version of every registry file (the rows dbt's `latest_registry_version` reads):

- `registry_duplicate_team` / `registry_duplicate_workload` / `registry_duplicate_policy`: an id
  defined twice, in one file or across files. The definition in the file landed first (by its
  landing time, then its name, then its line) stands; every later one is quarantined, so a new file
  can never take over a team that exists.
- `registry_unknown_team`: a workload whose team no registry file defines, or that names no team
  (checked before the workload duplicates, so a good definition of the same id elsewhere stands).

A quarantined entry is deleted from its raw.registry_* table and listed in audit.dq_rejects with
its file, line and what it conflicts with; the rest of the registry and every other source publish.
One exception: a workload lost that way (or to a parser reject such as an unknown type) that loaded
rows still use (eval runs, training runs, media batches, mappings...) would leave their costs without
an owner and fail the blocking tests downstream; then `RegistryStop` stops the refresh before any
model runs, with one line naming the file, line, conflict and the rows that use it, and the last
publication keeps serving. docs/registry.md "Conflicts".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import duckdb

_LATEST = """
    select file_hash, source_file, observed_at, format from audit.file_loads
    where family = 'registry' and status = 'loaded'
    qualify row_number() over (partition by origin order by observed_at desc, loaded_at desc) = 1
"""


@dataclass(frozen=True)
class Conflict:
    """One quarantined registry entry."""

    table: str
    file_hash: str
    file_name: str
    fmt: str
    line: int | None
    column: str
    value: str
    rule: str
    message: str


def _duplicates(con: duckdb.DuckDBPyConnection, table: str, key: str, what: str) -> list[Conflict]:
    rows = con.execute(f"""
        with r as (
            select t.{key} as id, t._file_hash, l.source_file, l.format, t._source_line,
                   row_number() over w as k, first_value(l.source_file || ':' || coalesce(t._source_line, 0)) over w
                       as first_at
            from raw.{table} as t join ({_LATEST}) as l on t._file_hash = l.file_hash
            where t.{key} is not null
            window w as (partition by t.{key} order by l.observed_at, l.source_file, t._source_line)
        )
        select id, _file_hash, source_file, format, _source_line, first_at from r where k > 1
        order by source_file, _source_line""").fetchall()
    return [Conflict(table, fh, name, fmt, line, key, str(ident), f"registry_duplicate_{what}",
                     f"{name}:{line}: {what} {ident!r} is already defined at {first}; the first definition "
                     "stands, this one is quarantined")
            for ident, fh, name, fmt, line, first in rows]


def _unknown_teams(con: duckdb.DuckDBPyConnection) -> list[Conflict]:
    rows = con.execute(f"""
        with latest as ({_LATEST}),
        teams as (select distinct t.team_id from raw.registry_teams as t join latest as l on t._file_hash = l.file_hash)
        select w.workload_id, w.team_id, w._file_hash, l.source_file, l.format, w._source_line,
               (select string_agg(team_id, ', ' order by team_id) from teams) as known
        from raw.registry_workloads as w join latest as l on w._file_hash = l.file_hash
        where w.team_id is null or trim(w.team_id) = '' or w.team_id not in (select team_id from teams)
        order by l.source_file, w._source_line""").fetchall()
    # A workload naming no team at all is quarantined the same way: no one would own its costs.
    return [Conflict("registry_workloads", fh, name, fmt, line, "team_id", str(team or ""), "registry_unknown_team",
                     f"{name}:{line}: workload {wid!r} "
                     + (f"names team {team!r}, which no registry file defines" if team and team.strip()
                        else "names no team") + f" (teams: {known or 'none'}); quarantined")
            for wid, team, fh, name, fmt, line, known in rows]


def check_registry(con: duckdb.DuckDBPyConnection, run_id: str) -> list[Conflict]:
    """Quarantine every conflicting registry entry (see the module docstring); returns them, in order."""
    found = _duplicates(con, "registry_teams", "team_id", "team")
    _quarantine(con, found, run_id)
    # A workload on an unknown team goes before the duplicates, so that a good definition elsewhere stands.
    for step in (_unknown_teams, lambda c: _duplicates(c, "registry_workloads", "workload_id", "workload"),
                 lambda c: _duplicates(c, "registry_policies", "policy", "policy")):
        more = step(con)
        _quarantine(con, more, run_id)
        found += more
    return found


def stop_if_lost_workloads_are_used(con: duckdb.DuckDBPyConnection) -> None:
    """Raise RegistryStop when a workload quarantined from the current registry (audit.dq_rejects) is
    still used by loaded rows; run on every registry ingest, so an unfixed registry stops every refresh."""
    used = _used_but_undefined(con)
    if used:
        raise RegistryStop("; ".join(used) + ": fix the registry (the refresh stops before any model runs; "
                           "the last publication keeps serving)")


class RegistryStop(Exception):
    """A workload the registry lost to a conflict is still used by loaded rows: its costs would have no owner."""


# The workload a registry reject names: `<file>:<line>: workload 'x' names team ...` (here) or
# `workload 'x': workload_type ...` (sources/registry/workloads.py, a vocabulary error).
_NAMED_WORKLOAD = re.compile(r"(?:^|: )workload '([^']+)'")


def _used_but_undefined(con: duckdb.DuckDBPyConnection) -> list[str]:
    """One line per quarantined workload that loaded rows still use and no kept registry entry defines."""
    why: dict[str, str] = {}
    for message, name, line in con.execute(
            f"select message, file_name, line from audit.dq_rejects where source_family = 'registry' "
            f"and file_hash in (select file_hash from ({_LATEST})) "
            "and (rule = 'registry_unknown_team' or rule like 'invalid_%') order by file_name, line").fetchall():
        if (m := _NAMED_WORKLOAD.search(message or "")) is not None:
            where = f"{name}:{line}: "
            why.setdefault(m.group(1), message if message.startswith(where) else where + message)
    if not why:
        return []
    defined = {r[0] for r in con.execute(f"select w.workload_id from raw.registry_workloads as w join ({_LATEST}) "
                                         "as l on w._file_hash = l.file_hash").fetchall()}
    lost = sorted(set(why) - defined)
    # Loaded rows that name a workload (API requests name one by tag, softly: unmatched ones are reported
    # downstream, never blocking, so they are not counted here).
    tables = [t for (t,) in con.execute(
        "select table_name from information_schema.columns where table_schema = 'raw' and column_name = 'workload_id' "
        "and table_name not in ('registry_workloads', 'api_requests') order by 1").fetchall()]
    out = []
    for wid in lost:
        uses = []
        for table in tables:
            latest = f" and _file_hash in (select file_hash from ({_LATEST}))" if table.startswith("registry_") else ""
            [(n,)] = con.execute(f'select count(*) from raw."{table}" where workload_id = ?{latest}', [wid]).fetchall()
            if n:
                uses.append(f"{n} row(s) of raw.{table}")
        if uses:
            out.append(f"{why[wid]} -- but {', '.join(uses)} use workload {wid!r}")
    return out


def _quarantine(con: duckdb.DuckDBPyConnection, conflicts: list[Conflict], run_id: str) -> None:
    for c in conflicts:
        con.execute(f"delete from raw.{c.table} where _file_hash = ? and _source_line is not distinct from ?",
                    [c.file_hash, c.line])
        con.execute("update audit.file_loads set rows_loaded = rows_loaded - 1, rejects = rejects + 1 "
                    "where file_hash = ? and family = 'registry'", [c.file_hash])
        con.execute("insert into audit.dq_rejects select 'registry', ?, ?, ?, ?, ?, ?, ?, ?, observed_at, ? "
                    "from audit.file_loads where file_hash = ? and family = 'registry' limit 1",
                    [c.fmt, c.file_hash, c.file_name, c.line, c.column, c.value, c.rule, c.message, run_id,
                     c.file_hash])
