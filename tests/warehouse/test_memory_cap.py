"""Both processes of a refresh cap DuckDB at one value: the refresh's own connections (warehouse/home.py)
and dbt's (dbt/profiles.yml, its default when GPU_LEDGER_DBT_MEMORY_LIMIT is unset). The cap is what keeps
each process within the 2 GiB budget whatever the history (BENCHMARKS.md, peak RSS), so the two must not
drift apart, and the cap must leave room below 2 GiB for what a process holds besides DuckDB's buffers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest

from tests.dbt.ledger_nodes import LEDGER, run_nodes
from warehouse.home import DBT_DIR, connect_ledger

PROFILE_DEFAULT = re.compile(
    r"memory_limit: \"\{\{ env_var\('GPU_LEDGER_DBT_MEMORY_LIMIT', '([^']+)'\) \}\}\"")
UNITS = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def _setting(con: duckdb.DuckDBPyConnection) -> str:
    """DuckDB's memory_limit as it reports it, e.g. '1.5 GiB'."""
    return con.execute("select current_setting('memory_limit')").fetchall()[0][0]


def test_dbt_and_the_refresh_cap_duckdb_alike_below_2_gib(tmp_path: Path) -> None:
    (dbt_default,) = PROFILE_DEFAULT.findall((DBT_DIR / "profiles.yml").read_text())
    ledger = connect_ledger(tmp_path / "ledger.duckdb")
    try:
        refresh_cap = _setting(ledger)
    finally:
        ledger.close()
    probe = duckdb.connect()
    try:
        probe.execute(f"set memory_limit='{dbt_default}'")  # DuckDB's own parser reads the profile's value
        dbt_cap = _setting(probe)
    finally:
        probe.close()
    assert dbt_cap == refresh_cap, (dbt_default, refresh_cap)
    number, unit = refresh_cap.split()
    # a process holds ~450 MiB besides DuckDB's buffers (Python, dbt, the manifest: 1,986 MB peak at
    # fleet-1000-30 under a 1536MiB cap), so a cap above 1.5 GiB leaves the 2 GiB budget no margin
    assert 1.0 * 2**30 <= float(number) * UNITS[unit] <= 1.5 * 2**30, refresh_cap


# The refresh's sessions that are databases of their own (DuckDB's default cap there is 80 % of RAM): the
# publication's in-memory session (uncapped, 2,481 MB in a full rebuild of a 365-day fleet-256 history),
# the lake export's and the great-expectations reader of the ledger.
OWN_SESSIONS = {"warehouse/publish.py": 1, "warehouse/lake.py": 1, "pipelines/defs/quality/checks.py": 1}


def test_the_refreshs_own_duckdb_sessions_are_capped_alike(tmp_path: Path) -> None:
    from warehouse.home import REPO_ROOT, capped

    con = capped(duckdb.connect())
    ledger = connect_ledger(tmp_path / "ledger.duckdb")
    try:
        assert _setting(con) == _setting(ledger) != _setting(duckdb.connect())
    finally:
        con.close()
        ledger.close()
    for rel, sessions in OWN_SESSIONS.items():
        text = (REPO_ROOT / rel).read_text()
        assert text.count("capped(duckdb.connect(") == sessions, rel


SHOW_SETTINGS = ("select current_setting('memory_limit') as memory_limit, current_setting('TimeZone') as time_zone, "
                 "current_setting('checkpoint_threshold') as checkpoint_threshold")


@pytest.mark.parametrize("memory_env", [None, "1GiB"])
def test_dbts_own_cursor_runs_with_the_profiles_settings(tmp_path: Path, memory_env: str | None) -> None:
    """What a dbt node's cursor sees: the cap (or GPU_LEDGER_DBT_MEMORY_LIMIT's), the checkpoint threshold and
    UTC. The first two are the database's config, given once when dbt opens the ledger, the time zone a SET on
    each cursor (dbt/profiles.yml); a setting dropped or given where a cursor does not see it fails here."""
    ledger = tmp_path / "ledger" / LEDGER
    ledger.parent.mkdir()
    duckdb.connect(str(ledger)).close()
    env = {"GPU_LEDGER_DBT_MEMORY_LIMIT": memory_env} if memory_env else {}
    statuses, out = run_nodes(ledger, "show", "--inline", SHOW_SETTINGS, "--output", "json",
                              target=tmp_path / "target", env=env)
    assert list(statuses.values()) == ["success"], out[-3000:]
    (shown,) = json.loads(out[out.index("{"):out.rindex("}") + 1])["show"]
    profile = (DBT_DIR / "profiles.yml").read_text()
    (dbt_default,) = PROFILE_DEFAULT.findall(profile)
    (threshold,) = re.findall(r'checkpoint_threshold: "([^"]+)"', profile)
    probe = duckdb.connect()
    try:
        # DuckDB's own parser reads the values as the profile gives them: 1280MiB reads '1.2 GiB', 256MB
        # (10^6 bytes) '244.1 MiB', 1GiB '1.0 GiB'
        probe.execute(f"set memory_limit='{memory_env or dbt_default}'")
        probe.execute(f"set checkpoint_threshold='{threshold}'")
        expected = probe.execute("select current_setting('memory_limit'), current_setting('checkpoint_threshold')"
                                 ).fetchall()[0]
    finally:
        probe.close()
    assert (shown["memory_limit"], shown["checkpoint_threshold"]) == expected
    assert shown["time_zone"] == "UTC"
    # and not the defaults a connection gets without them (80 % of RAM, 16 MiB)
    assert expected != tuple(duckdb.connect().execute(
        "select current_setting('memory_limit'), current_setting('checkpoint_threshold')").fetchall()[0])
