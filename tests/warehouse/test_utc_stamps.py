"""The ledger's load and check times are UTC on a machine set to another time zone: they are compared
with dbt's build stamps as watermarks, and local time steps back an hour when daylight saving ends."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

PROBE = """
import sys
from pathlib import Path
from warehouse.audit import record_check
from warehouse.home import connect_ledger
con = connect_ledger(Path(sys.argv[1]))
record_check(con, "run-1", "a_check", "dbt", "error", "pass", "")
print(con.execute("select current_timestamp::timestamp").fetchone()[0].isoformat())
print(con.execute("select checked_at from audit.check_results").fetchone()[0].isoformat())
"""


def test_ledger_stamps_are_utc_in_new_york(tmp_path: Path) -> None:
    env = {**os.environ, "TZ": "America/New_York"}  # UTC-5 in December: a local stamp is 5 hours off
    before = datetime.now(UTC).replace(tzinfo=None)
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "ledger.duckdb")], env=env,
                         capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2]).stdout
    after = datetime.now(UTC).replace(tzinfo=None)
    stamps = [datetime.fromisoformat(line) for line in out.split()]
    assert len(stamps) == 2
    for stamp in stamps:
        assert before - timedelta(seconds=1) <= stamp <= after + timedelta(seconds=1), (stamp, before, after)
