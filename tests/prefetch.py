"""Heavy fixtures computed ahead of time, in worker processes, while other tests run.

A full refresh costs tens of seconds and the suite needs about thirty. Each heavy module-scoped
fixture is a plain function `build(root: Path) -> dict` (picklable result) registered in JOBS
(tests/prefetch_plan.py, with the fixtures that ask for each job and the order of the modules).
When the session starts, the jobs the collected tests need are queued by critical path (a job's
cost plus its longest chain of dependent jobs) and LANES long-lived worker processes
(`python -m tests.prefetch --serve`) take them one after another. A worker imports the pipeline,
Dagster and great-expectations once (~8 s of CPU a process) and runs each job on its own empty
folder, with its own fresh home; the environment and working directory are restored after each
job. The modules that use these fixtures run last, in the order their jobs are queued (see
`order_items`), so the light tests share the cores with the workers meanwhile.

A fixture asks for its value with `result(name)`. If the job is done, the result is read back;
while it runs in a worker, the fixture waits; if it has not started yet (every worker busy), the
fixture's own process runs it right away, in-process, rather than idle. Every refresh is still the
real `execute_refresh` on its own inputs and its own fresh home; only where (which process) and
when it runs changes. Each job has its own home, so DuckDB's one writer per file is never shared.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import pickle
import resource
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.prefetch_plan import JOBS, critical_path

REPO = Path(__file__).resolve().parent.parent

# Worker processes. The machine has two cores; the pytest process itself runs the light tests meanwhile.
LANES = 2


def _call(target: str, root: Path, deps: dict[str, dict]) -> dict:
    module, func = target.split(":")
    return getattr(importlib.import_module(module), func)(root, **deps)


def cpu_seconds() -> float:
    """User + system CPU of this process and of its children that were waited for (dbt, the CLI)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _run_job(target: str, root: Path, deps: dict[str, dict]) -> tuple[str, object, float]:
    """One job on its own empty folder `root/work`; ("ok", result, cpu s) or ("error", traceback, cpu s).
    The process environment and working directory are put back afterwards (jobs share a worker)."""
    work = root / "work"  # the builder's own empty folder (the job's bookkeeping stays outside it)
    work.mkdir()
    env, cwd = dict(os.environ), os.getcwd()
    cpu = cpu_seconds()
    try:
        return "ok", _call(target, work, deps), cpu_seconds() - cpu
    except BaseException:  # noqa: BLE001 - reported to the fixture that asks for it
        return "error", traceback.format_exc(), cpu_seconds() - cpu
    finally:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)


# What every job imports: loaded when the worker starts, which is while pytest collects (`prestart`).
PRELOAD = ("pipelines.cli", "pipelines.definitions", "great_expectations")


def _serve(done_fd: int) -> None:
    """Worker entry point (`python -m tests.prefetch --serve FD`): one JSON job a line on stdin
    ([target, root, out, deps_file]); the payload is pickled to `out`, then "done" is written to FD."""
    # The cyclic collector off while importing (the stack's import took 9.0-9.3 CPU s with it, 7.5-7.7 without),
    # then what the imports left frozen out of its sight: it lives as long as the worker.
    gc.disable()
    for module in PRELOAD:
        # A failed import is not lost: the job that needs the module imports it again and reports the error.
        with contextlib.suppress(Exception):
            importlib.import_module(module)
    gc.collect()
    gc.freeze()
    gc.enable()
    done = os.fdopen(done_fd, "wb", buffering=0)
    for line in sys.stdin:
        target, root, out, deps_file = json.loads(line)
        with open(deps_file, "rb") as fh:
            deps = pickle.load(fh)
        payload = _run_job(target, Path(root), deps)
        tmp = Path(out + ".part")
        with open(tmp, "wb") as fh:
            pickle.dump(payload, fh)
        tmp.replace(out)
        done.write(b"done\n")


@dataclass
class _Job:
    name: str
    target: str
    deps: tuple[str, ...]
    root: Path
    state: str = "pending"  # pending -> running -> done
    payload: tuple | None = field(default=None, repr=False)
    where: str = ""  # "lane0", "lane1" or "pytest" (the test process itself)
    began: float = 0.0
    ended: float = 0.0

    @property
    def cpu(self) -> float | None:
        """CPU s the job took where it ran (None while it runs or if its worker died)."""
        return self.payload[2] if self.payload else None


class _Lane:
    """One long-lived worker process; started on first use, restarted if it dies."""

    def __init__(self, base: Path, index: int) -> None:
        self.name = f"lane{index}"
        self.log = base / f"lane{index}.log"
        self.proc: subprocess.Popen | None = None
        self.done = None

    def start(self) -> None:
        env = {**os.environ,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        read_fd, write_fd = os.pipe()
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                # `-m`, not `-c`: pyspark (imported by great-expectations) takes a __main__ without
                # __spec__ or __file__ for its own doctest runner and calls sys.exit(0).
                [sys.executable, "-m", "tests.prefetch", "--serve", str(write_fd)],
                cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, pass_fds=(write_fd,))
        os.close(write_fd)
        self.done = os.fdopen(read_fd, "rb")

    def run(self, job: _Job, deps_file: Path, out: Path) -> tuple:
        """Run `job` in this worker and return its payload (an error payload if the worker died)."""
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None and self.done is not None
        try:
            self.proc.stdin.write((json.dumps([job.target, str(job.root), str(out), str(deps_file)]) + "\n").encode())
            self.proc.stdin.flush()
            finished = self.done.readline() == b"done\n"
        except (BrokenPipeError, OSError):
            finished = False
        if finished and out.exists():
            with open(out, "rb") as fh:
                return pickle.load(fh)
        returncode = self.proc.wait()
        self.proc = None
        tail = self.log.read_text(errors="replace")[-5000:]
        return "error", f"{job.name}: worker process exited {returncode}:\n{tail}", None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


class Prefetcher:
    def __init__(self, base: Path, names: list[str], lanes: list[_Lane] | None = None) -> None:
        self.base = base
        self.cond = threading.Condition()
        self.jobs: dict[str, _Job] = {}
        self.order: list[str] = []
        for name in names:
            self._add(name)
        path = critical_path(self.order)
        self.order.sort(key=lambda n: -path[n])  # stable: ties keep the tests' order
        self.lanes = lanes or [_Lane(base, i) for i in range(LANES)]
        self.threads: list[threading.Thread] = []
        self.started = time.monotonic()

    def stop(self) -> None:
        """End of session: stop the workers (a job still running only after an interrupted run)."""
        with self.cond:
            for job in self.jobs.values():
                if job.state == "pending":
                    job.state, job.payload = "done", ("error", "session ended", None)
            self.cond.notify_all()
        for lane in self.lanes:
            lane.stop()

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

    def _execute(self, job: _Job, lane: _Lane | None) -> None:
        """Run one job (already marked running) in `lane`, or in this process; record its payload."""
        job.where, job.began = (lane.name if lane else "pytest"), time.monotonic()
        try:
            deps = {d: self._value(d) for d in job.deps}
            if lane is None:
                payload = _run_job(job.target, job.root, deps)
            else:
                deps_file, out = job.root / "deps.pickle", job.root / "result.pickle"
                with open(deps_file, "wb") as fh:
                    pickle.dump(deps, fh)
                payload = lane.run(job, deps_file, out)
        except BaseException:  # noqa: BLE001 - never leave a job 'running' for ever
            payload = ("error", traceback.format_exc(), None)
        with self.cond:
            job.payload, job.state, job.ended = payload, "done", time.monotonic()
            self.cond.notify_all()

    def timeline(self, dbt: Sequence[dict] = ()) -> list[str]:
        """One line per job that ran: where, start and end (s after the session's start), CPU s, the CPU s
        of the warm dbt server's commands run in the job's folder (`dbt`: tests/dbt_server.py `commands`),
        name.

        CPU is the job's process and the children it waited for (a refresh's dbt, the kill sequence's
        CLI runs); what their own children leave running, such as Spark's JVM, is not in it. The dbt
        column holds the dbt commands handed to the session's warm server (Spark's driver JVM included)."""
        ran = sorted((j for j in self.jobs.values() if j.ended), key=lambda j: j.began)
        lines = []
        for j in ran:
            cpu = j.cpu if j.cpu is not None else float("nan")
            inside = str(j.root) + os.sep
            in_dbt = sum(c["cpu_s"] for c in dbt if str(c["cwd"]).startswith(inside))
            lines.append(f"{j.where:<7}{j.began - self.started:7.1f}{j.ended - self.started:8.1f}{cpu:8.1f}"
                         f"{in_dbt:8.1f}  {j.name}" + ("" if j.payload and j.payload[0] == "ok" else "  (failed)"))
        return lines

    def _worker(self, lane: _Lane) -> None:
        while True:
            with self.cond:
                job = self._runnable()
                while job is None:
                    if all(j.state != "pending" for j in self.jobs.values()):
                        lane.stop()
                        return
                    self.cond.wait()
                    job = self._runnable()
                job.state = "running"
            self._execute(job, lane)

    def start(self) -> None:
        self.started = time.monotonic()
        if self.jobs:
            from pipelines.dbt_project import parse_manifest

            parse_manifest()  # once, here: concurrent refreshes must not each re-parse into dbt/target
            for lane in self.lanes:
                thread = threading.Thread(target=self._worker, args=(lane,), name="prefetch", daemon=True)
                thread.start()
                self.threads.append(thread)

    def _value(self, name: str) -> dict:
        status, value, _cpu = self.jobs[name].payload
        if status != "ok":
            raise RuntimeError(f"building fixture {name!r} failed:\n{value}")
        return value

    def result(self, name: str) -> dict:
        """The job's result: waits while a worker runs it; runs it here if it has not started."""
        self._add_late(name)
        while True:
            with self.cond:
                target = self.jobs[name]
                if target.state == "done":
                    break
                ready = target.state == "pending" and all(self.jobs[d].state == "done" for d in target.deps)
                job = target if ready else None
                if job is None and not any(t.is_alive() for t in self.threads):
                    job = self._runnable()  # workers gone (a late job's dependency): run it here
                if job is None:
                    self.cond.wait()
                    continue
                job.state = "running"
            self._execute(job, None)
        return self._value(name)

    def _add_late(self, name: str) -> None:
        with self.cond:
            if name not in self.jobs:  # not foreseen at collection (e.g. -p no:... or odd selection)
                self._add(name)
                self.cond.notify_all()


_PREFETCHER: Prefetcher | None = None
_EARLY: list[_Lane] = []  # workers started before collection (`prestart`)


def prestart(base: Path) -> None:
    """Start the workers now, so that they import the pipeline (PRELOAD) while pytest collects: one
    core is mostly idle during the ~13 s of collection otherwise. `configure` hands them
    their jobs; with no job to run they are stopped then."""
    for index in range(LANES):
        lane = _Lane(base, index)
        lane.start()
        _EARLY.append(lane)


def configure(base: Path, names: list[str]) -> Prefetcher:
    """The session's prefetcher for `names` (in the workers `prestart` started, if any)."""
    global _PREFETCHER
    lanes, _EARLY[:] = list(_EARLY), []
    if not names:
        for lane in lanes:
            lane.stop()
        lanes = []
    _PREFETCHER = Prefetcher(base, names, lanes)
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
    for lane in _EARLY:  # started, never configured (the session ended before its collection did)
        lane.stop()
    _EARLY.clear()


def lane_cpu_seconds() -> float:
    """CPU s of the jobs the lane workers ran (their CLI children included; not the dbt commands the session's
    warm dbt server ran for them, nor Spark's JVM)."""
    if _PREFETCHER is None:
        return 0.0
    return sum(j.cpu for j in _PREFETCHER.jobs.values() if j.where.startswith("lane") and j.cpu is not None)


def timeline(dbt: Sequence[dict] = ()) -> list[str]:
    """The session's jobs: where each ran, when, their CPU s (see Prefetcher.timeline)."""
    return _PREFETCHER.timeline(dbt) if _PREFETCHER is not None else []


if __name__ == "__main__":
    if sys.argv[1:2] != ["--serve"]:
        sys.exit("usage: python -m tests.prefetch --serve FD (started by the test session)")
    _serve(int(sys.argv[2]))
