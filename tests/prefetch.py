"""Heavy fixtures computed ahead of time, in a second process, while other tests run.

A full refresh costs about a minute and the suite needs many of them. Each heavy module-scoped
fixture is a plain function `build(root: Path) -> dict` (picklable result) registered in JOBS.
When the session starts, the jobs the collected tests need are queued; one background thread
runs them one after another, each in its own `python` subprocess (its own GPU_LEDGER_* environment,
its own home under the session's temp dir). The modules that use these fixtures run last
(see `order_items`), so the light tests keep the other core busy meanwhile.

A fixture asks for its value with `result(name)`. If the job is done, the result is read back;
if it has not started, the fixture's own process runs it now (in a subprocess, like the worker);
while its job runs elsewhere, the waiting process runs the next queued job instead of idling.
Every refresh is still the real `execute_refresh` on its own inputs and its own fresh home;
only where (which process) and when it runs changes. At most two jobs run at a time: this
machine has two cores, and DuckDB allows one writer per file (each job has its own home).
"""

from __future__ import annotations

import importlib
import os
import pickle
import signal
import subprocess
import sys
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# name -> (builder "module:function", jobs it needs first, rough cost in full refreshes). The builder
# gets its own empty folder (and, for dependent jobs, the results of its dependencies as keyword
# arguments). The worker takes the costliest jobs first, so that the last job to finish is a short one;
# the tests take (and run themselves) whatever they need that has not started yet.
JOBS: dict[str, tuple[str, tuple[str, ...], float]] = {
    "catalogue_run": ("tests.bad_inputs.test_catalogue:build_catalogue_run", (), 1),
    "billing_commitments": ("tests.dbt.test_billing_commitments:build_runs", (), 2),
    "price_runs": ("tests.dbt.test_prices_models:build_price_runs", (), 2),
    "sample_run": ("tests.conftest:build_sample_run", (), 1.2),
    "focus_home": ("tests.conftest:build_focus_home", (), 1),
    "kill_sequence": ("tests.faults.test_kill:build_kill_sequence", ("focus_home",), 3),
    "e2e_rerun": ("tests.pipeline.test_e2e:build_rerun", ("focus_home",), 1),
    "e2e_doctored": ("tests.pipeline.test_e2e:build_doctored", ("focus_home",), 0.8),
    "e2e_unreadable": ("tests.pipeline.test_e2e:build_unreadable", (), 1),
    "incremental": ("tests.pipeline.test_incremental:build_refreshes", (), 3),
    "secret_run": ("tests.security.test_secrets:build_secret_run", (), 1),
    "spark_run": ("tests.spark.test_spark_lane:build_spark_run", ("sample_run",), 3),
}

# Fixture name -> job; a test that (transitively) uses one of these fixtures needs that job.
FIXTURES: dict[str, str] = {
    "catalogue_run": "catalogue_run",
    "commitment_runs": "billing_commitments",
    "price_runs": "price_runs",
    "sample_run": "sample_run",
    "focus_home": "focus_home",
    "kill_sequence": "kill_sequence",
    "e2e_rerun": "e2e_rerun",
    "e2e_doctored": "e2e_doctored",
    "e2e_unreadable": "e2e_unreadable",
    "refreshes": "incremental",
    "secret_run": "secret_run",
    "spark_run": "spark_run",
}


def _call(target: str, root: Path, deps: dict[str, dict]) -> dict:
    module, func = target.split(":")
    return getattr(importlib.import_module(module), func)(root, **deps)


def _child() -> None:
    """Subprocess entry point: python -m tests.prefetch TARGET ROOT OUT DEPS."""
    target, root, out, deps_file = sys.argv[1:5]
    with open(deps_file, "rb") as fh:
        deps = pickle.load(fh)
    work = Path(root) / "work"  # the builder's own empty folder (the job's bookkeeping stays outside it)
    work.mkdir()
    try:
        payload = ("ok", _call(target, work, deps))
    except BaseException:  # noqa: BLE001 - reported to the fixture that asks for it
        payload = ("error", traceback.format_exc())
    tmp = Path(out + ".part")
    with open(tmp, "wb") as fh:
        pickle.dump(payload, fh)
    tmp.replace(out)


@dataclass
class _Job:
    name: str
    target: str
    deps: tuple[str, ...]
    root: Path
    state: str = "pending"  # pending -> running -> done
    payload: tuple | None = field(default=None, repr=False)


class Prefetcher:
    def __init__(self, base: Path, names: list[str]) -> None:
        self.base = base
        self.cond = threading.Condition()
        self.jobs: dict[str, _Job] = {}
        self.order: list[str] = []
        for name in sorted(names, key=lambda n: -JOBS[n][2]):  # stable: ties keep the tests' order
            self._add(name)
        self.thread: threading.Thread | None = None
        self.procs: set[subprocess.Popen] = set()

    def stop(self) -> None:
        """End of session: stop any builder still running (only after an interrupted run)."""
        with self.cond:
            for job in self.jobs.values():
                if job.state == "pending":
                    job.state, job.payload = "done", ("error", "session ended")
            procs = list(self.procs)
            self.cond.notify_all()
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def _add(self, name: str) -> None:
        if name in self.jobs:
            return
        target, deps, _cost = JOBS[name]
        for dep in deps:
            self._add(dep)
        root = self.base / name
        root.mkdir(parents=True, exist_ok=True)
        self.jobs[name] = _Job(name, target, deps, root)
        self.order.append(name)

    # -- scheduling ---------------------------------------------------------------------------
    def _runnable(self) -> _Job | None:
        """The first queued job whose dependencies are done (caller holds the lock)."""
        for name in self.order:
            job = self.jobs[name]
            if job.state == "pending" and all(self.jobs[d].state == "done" for d in job.deps):
                return job
        return None

    def _execute(self, job: _Job) -> None:
        """Run one job in a subprocess (job is already marked running); record its payload."""
        out = job.root / "result.pickle"
        deps_file = job.root / "deps.pickle"
        log = job.root / "prefetch.log"
        try:
            with open(deps_file, "wb") as fh:
                pickle.dump({d: self._value(d) for d in job.deps}, fh)
            env = {**os.environ,
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
            with open(log, "w") as fh:
                proc = subprocess.Popen(
                    # `-m`, not `-c`: pyspark (imported by great-expectations) takes a __main__ without
                    # __spec__ or __file__ for its own doctest runner and calls sys.exit(0).
                    [sys.executable, "-m", "tests.prefetch", job.target, str(job.root), str(out), str(deps_file)],
                    cwd=REPO, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
                with self.cond:
                    self.procs.add(proc)
                try:
                    returncode = proc.wait()
                finally:
                    with self.cond:
                        self.procs.discard(proc)
            if out.exists():
                with open(out, "rb") as fh:
                    payload = pickle.load(fh)
            else:
                tail = log.read_text(errors="replace")[-5000:]
                payload = ("error", f"{job.name}: builder process exited {returncode}:\n{tail}")
        except BaseException:  # noqa: BLE001 - never leave a job 'running' for ever
            payload = ("error", traceback.format_exc())
        with self.cond:
            job.payload, job.state = payload, "done"
            self.cond.notify_all()

    def _worker(self) -> None:
        while True:
            with self.cond:
                job = self._runnable()
                while job is None:
                    if all(j.state != "pending" for j in self.jobs.values()):
                        return
                    self.cond.wait()
                    job = self._runnable()
                job.state = "running"
            self._execute(job)

    def start(self) -> None:
        if self.jobs:
            from pipelines.dbt_project import parse_manifest

            parse_manifest()  # once, here: concurrent refreshes must not each re-parse into dbt/target
            self.thread = threading.Thread(target=self._worker, name="prefetch", daemon=True)
            self.thread.start()

    def _value(self, name: str) -> dict:
        status, value = self.jobs[name].payload
        if status != "ok":
            raise RuntimeError(f"building fixture {name!r} failed:\n{value}")
        return value

    def result(self, name: str) -> dict:
        """The job's result; runs queued jobs in this process while it is not ready."""
        self._add_late(name)
        while True:
            with self.cond:
                target = self.jobs[name]
                if target.state == "done":
                    break
                job = target if target.state == "pending" and all(
                    self.jobs[d].state == "done" for d in target.deps) else self._runnable()
                if job is None:
                    self.cond.wait()
                    continue
                job.state = "running"
            self._execute(job)
        return self._value(name)

    def _add_late(self, name: str) -> None:
        with self.cond:
            if name not in self.jobs:  # not foreseen at collection (e.g. -p no:... or odd selection)
                self._add(name)
                self.cond.notify_all()


_PREFETCHER: Prefetcher | None = None


def configure(base: Path, names: list[str]) -> Prefetcher:
    global _PREFETCHER
    _PREFETCHER = Prefetcher(base, names)
    return _PREFETCHER


def result(name: str, tmp_path_factory) -> dict:
    """Value of heavy fixture job `name` (the session's prefetcher, or built here if none)."""
    global _PREFETCHER
    if _PREFETCHER is None:
        _PREFETCHER = Prefetcher(tmp_path_factory.mktemp("prefetch"), [])
    return _PREFETCHER.result(name)


def stop() -> None:
    if _PREFETCHER is not None:
        _PREFETCHER.stop()


def _skipped(item) -> bool:
    if item.get_closest_marker("skip"):
        return True
    return any(m.args and all(isinstance(a, bool) and a for a in m.args[:1]) for m in item.iter_markers("skipif"))


def jobs_for(item) -> list[str]:
    if _skipped(item):
        return []
    return [FIXTURES[f] for f in getattr(item, "fixturenames", ()) if f in FIXTURES]


def _module(item) -> str:
    return getattr(getattr(item, "module", None), "__name__", item.nodeid.split("::")[0])


def order_items(items: list) -> list[str]:
    """Move every module that needs a heavy job after the others (module order kept within each
    group); returns the jobs in the order the reordered tests will first need them."""
    heavy_modules = {_module(item) for item in items if jobs_for(item)}
    light = [i for i in items if _module(i) not in heavy_modules]
    heavy = [i for i in items if _module(i) in heavy_modules]
    items[:] = light + heavy
    names: list[str] = []
    for item in heavy:
        for name in jobs_for(item):
            if name not in names:
                names.append(name)
    return names


if __name__ == "__main__":
    _child()
