"""`gpu-ledger` with a pause just before the publication's rename, for the kill test.

Usage: python -m tests.faults.paused_run <seconds> run --inputs ... --home ...
The pause is patched in here, in the test process, so production code carries no test hook:
after the new copy is complete it prints "test hook: ... pausing" (into the run log, where the
CLI sends stdout) and sleeps, so the test can SIGKILL the run at exactly that point.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from warehouse import publish


def main() -> None:
    pause = float(sys.argv[1])
    swap = publish._swap_into_place

    def paused_swap(tmp: Path, target: Path) -> None:
        print(f"test hook: {tmp.name} written; pausing {pause:g}s before the rename", flush=True)
        time.sleep(pause)
        swap(tmp, target)

    publish._swap_into_place = paused_swap
    from pipelines.cli import app

    app(sys.argv[2:], prog_name="gpu-ledger")


if __name__ == "__main__":
    main()
