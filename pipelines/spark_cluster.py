"""A Spark standalone cluster on this machine, from the pyspark distribution the project locks.

`python -m pipelines.spark_cluster <folder>` (and the Spark test lane) starts one master and N worker processes with
the `spark-class` launcher that ships inside the `pyspark` package (no separate Spark download),
every port on 127.0.0.1 and picked free, and waits until every worker has registered with the
master. A refresh then runs its dbt build as an application of that cluster:
`gpu-ledger run --engine spark --spark-master spark://127.0.0.1:<port>` (docs/spark.md).

On a real cluster the master and workers are the cluster's own; only `--spark-master` is needed,
and the lake and the Spark warehouse must be on storage every worker reads (docs/spark.md).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

LOOPBACK = "127.0.0.1"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


class ClusterError(RuntimeError):
    """The cluster did not come up (the message names the process and ends with its log)."""


def spark_home() -> Path:
    """The Spark distribution inside the installed pyspark package (bin/spark-class, jars/)."""
    import pyspark  # the `spark` dependency group

    home = Path(pyspark.__file__).resolve().parent
    if not (home / "bin" / "spark-class").exists():
        raise ClusterError(f"pyspark at {home} has no bin/spark-class")
    return home


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


@dataclass
class SparkCluster:
    """A running standalone cluster: its master URL, its web UI, and the processes to stop."""

    folder: Path
    master_url: str
    ui_url: str
    processes: list[subprocess.Popen] = field(default_factory=list)

    def state(self) -> dict:
        """The master's own view (its web UI's /json): workers, cores, running applications."""
        with urllib.request.urlopen(f"{self.ui_url}/json/", timeout=5) as response:
            return json.loads(response.read())

    def alive_workers(self) -> int:
        """Workers registered with the master and alive (0 while the master is not answering, or answers
        its web UI before it serves the JSON: an empty body)."""
        try:
            return sum(1 for w in self.state().get("workers", []) if w.get("state") == "ALIVE")
        except (OSError, ValueError):  # json.JSONDecodeError is a ValueError
            return 0

    def stop(self, grace_s: float = 20.0) -> None:
        """Stop the workers (each stops its executors), then the master; SIGKILL after `grace_s`."""
        for proc in reversed(self.processes):
            _signal(proc, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for proc in reversed(self.processes):
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal(proc, signal.SIGKILL)
                proc.wait()
        self.processes.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _signal(proc: subprocess.Popen, sig: int) -> None:
    if proc.poll() is None:
        try:
            proc.send_signal(sig)  # spark-class execs the JVM: the pid is the daemon itself
        except ProcessLookupError:
            pass


def _daemon_env(folder: Path) -> dict[str, str]:
    """The launcher's environment: this pyspark's Spark, loopback only, small daemon heaps."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    env.update({
        "SPARK_HOME": str(spark_home()),
        "SPARK_LOCAL_IP": LOOPBACK,  # every listener (RPC, web UIs, executors' block managers) on loopback
        "SPARK_CONF_DIR": str(folder / "conf"),  # empty: no spark-defaults.conf from elsewhere applies
        "SPARK_DAEMON_MEMORY": "256m",  # master and workers only route; executors get their own heap
        # The same JIT and collector as the driver and executors (dbt/profiles.yml): a daemon that lives
        # for one build gains nothing from C2 compiles or parallel GC threads.
        "SPARK_DAEMON_JAVA_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        "SPARK_NO_DAEMONIZE": "1",
        # The master's REST submission server would listen on the fixed port 6066: two clusters collide.
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
    })
    return env


def _launch(folder: Path, name: str, args: list[str], env: dict[str, str]) -> subprocess.Popen:
    """One daemon, in the caller's process group: whatever stops the caller's group (Ctrl-C, a test
    runner ending its workers) stops the cluster too, even when `stop` never runs."""
    log = open(folder / f"{name}.log", "ab")  # noqa: SIM115 - the child keeps it; closed below
    try:
        return subprocess.Popen([str(spark_home() / "bin" / "spark-class"), *args], cwd=folder, env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    finally:
        log.close()


def start_cluster(folder: Path, workers: int = 2, cores: int = 1, memory: str = "2g",
                  timeout_s: float = 180.0) -> SparkCluster:
    """Start a master and `workers` workers (each `cores` cores, `memory` for executors) under
    `folder` (logs, the workers' scratch); return once all have registered. Stops what it started
    if they do not within `timeout_s`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "conf").mkdir(exist_ok=True)
    env = _daemon_env(folder)
    port, ui_port = free_port(), free_port()
    cluster = SparkCluster(folder, f"spark://{LOOPBACK}:{port}", f"http://{LOOPBACK}:{ui_port}")
    try:
        cluster.processes.append(_launch(folder, "master", [
            MASTER_CLASS, "--host", LOOPBACK, "--port", str(port), "--webui-port", str(ui_port)], env))
        for i in range(workers):
            work = folder / f"worker-{i}"
            work.mkdir(exist_ok=True)
            cluster.processes.append(_launch(folder, f"worker-{i}", [
                WORKER_CLASS, "--host", LOOPBACK, "--port", str(free_port()), "--webui-port", str(free_port()),
                "--cores", str(cores), "--memory", memory, "--work-dir", str(work), cluster.master_url], env))
        deadline = time.monotonic() + timeout_s
        while cluster.alive_workers() < workers:
            for proc, name in zip(cluster.processes, ["master", *(f"worker-{i}" for i in range(workers))]):
                if proc.poll() is not None:
                    raise ClusterError(f"spark {name} exited {proc.returncode}:\n{_tail(folder / f'{name}.log')}")
            if time.monotonic() > deadline:
                raise ClusterError(f"{cluster.alive_workers()} of {workers} workers registered in {timeout_s:.0f} s:\n"
                                   f"{_tail(folder / 'master.log')}")
            time.sleep(0.5)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _tail(path: Path, chars: int = 3000) -> str:
    return path.read_text(errors="replace")[-chars:] if path.exists() else "(no log)"


def main(argv: list[str] | None = None) -> None:
    """`python -m pipelines.spark_cluster [FOLDER] [--workers N]`: a cluster in the foreground until Ctrl-C or SIGTERM."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m pipelines.spark_cluster", description=main.__doc__)
    parser.add_argument("folder", nargs="?", type=Path, default=Path("spark-cluster"), help="logs and scratch")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cores", type=int, default=1, help="cores each worker offers")
    parser.add_argument("--memory", default="2g", help="memory each worker offers its executors")
    args = parser.parse_args(argv)
    # `kill` (a service manager, a script) stops the cluster as Ctrl-C does, not only this process.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with start_cluster(args.folder.resolve(), args.workers, args.cores, args.memory) as cluster:
        print(f"{cluster.master_url} ({args.workers} workers; web UI {cluster.ui_url}); Ctrl-C or kill stops it", flush=True)
        print(f"gpu-ledger run --engine spark --spark-master {cluster.master_url}", flush=True)
        try:
            while all(p.poll() is None for p in cluster.processes):
                time.sleep(1)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
