"""A landing folder that cannot be written (the home's disk full, a quota) is the ledger's own failure, not
the inputs': the refresh stops before its run and says so, no input is refused for it, and the next refresh
with room lands the same files (warehouse/landing_io.py). Before, every input being copied was recorded as
"cannot be read: No space left on device", and those refusals stayed in the manifest and the audit.

The write failure is real: the refresh runs in a child process under RLIMIT_FSIZE with SIGXFSZ ignored, so
every write past the limit fails with EFBIG ("File too large"), as a full disk fails with ENOSPC; reading
the inputs is not limited."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sources.catalog import FAMILIES
from warehouse.home import Home
from warehouse.landing import land_inputs, read_manifest
from warehouse.status import read_status

REPO = Path(__file__).resolve().parents[2]
LIMIT = 16 * 1024  # bytes a file of the child may grow to
CHILD = f"""
import json, resource, signal, sys
from pathlib import Path
from pipelines.cli import execute_refresh
sys.dont_write_bytecode = True  # a .pyc written past the limit is kept cut short (CPython does not check the count)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, ({LIMIT}, {LIMIT}))
print(json.dumps(execute_refresh(Path(sys.argv[1]), Path(sys.argv[2]), docs=False)))
"""


def _inputs(root: Path) -> tuple[Path, bytes]:
    """An inputs folder with one DCGM export of ~63 KiB (nearly 4x the limit); its bytes."""
    rows = ["timestamp,hostname,gpu,uuid,modelName,DCGM_FI_DEV_GPU_UTIL"]
    rows += [f"2025-04-01T{m // 60:02d}:{m % 60:02d}:00Z,node-{m % 7},{m % 8},GPU-{m % 8:04d},NVIDIA L40S,{m % 100}"
             for m in range(1200)]
    data = ("\n".join(rows) + "\n").encode()
    (root / "usage").mkdir(parents=True)
    (root / "usage" / "dcgm_2025-04-01.csv").write_bytes(data)
    return root, data


def test_a_landing_folder_that_cannot_be_written_stops_the_refresh_and_refuses_nothing(tmp_path: Path) -> None:
    inputs, data = _inputs(tmp_path / "inputs")
    assert len(data) > 3 * LIMIT
    home = tmp_path / "home"
    done = subprocess.run([sys.executable, "-c", CHILD, str(home), str(inputs)], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    ok, run_id, reason = json.loads(done.stdout.strip().splitlines()[-1])
    assert (ok, run_id) == (False, "")
    # The reason names the landing folder, the input it was copying and the system's error, and says what to expect.
    assert reason.startswith("landing folder: cannot write "), reason
    assert "(for dcgm_2025-04-01.csv): File too large" in reason and "no input was refused" in reason, reason
    status = read_status(home)
    assert status is not None and status["ok"] is False and status["message"] == reason
    landing = Home(home).landing
    assert all(row.refused is None for row in read_manifest(landing)), read_manifest(landing)
    assert not [p for p in landing.rglob("*") if p.is_file() and p.name.startswith(".staged-")]

    # With room again (this process has no limit), the same input lands as itself, and nothing is refused.
    seen, new = land_inputs(inputs, landing, FAMILIES)
    assert (seen, new) == (1, 1)
    rows = read_manifest(landing)
    assert [(r.original_name, r.refused) for r in rows] == [("dcgm_2025-04-01.csv", None)]
    assert (landing / rows[0].landed_path).read_bytes() == data
