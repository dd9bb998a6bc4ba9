"""Shared fixtures: paths to the real public samples and the repository root."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Generator
from pathlib import Path

import pytest

from tests import prefetch, prefetch_plan

REPO = Path(__file__).resolve().parent.parent
PUBLIC_DATA = REPO / "tests" / "data" / "public"


@pytest.fixture(scope="session")
def public_data() -> Path:
    """`tests/data/public`: the real public sample files every parser is tested on (see its PROVENANCE.md files)."""
    assert PUBLIC_DATA.is_dir(), f"real samples missing at {PUBLIC_DATA}"
    return PUBLIC_DATA

SAMPLES = REPO / "samples" / "inputs"


def published_tables(serving: Path) -> dict[str, list[tuple]]:
    """Every published table's rows, sorted, except the per-run bookkeeping tables."""
    import duckdb

    con = duckdb.connect(str(serving), read_only=True)
    try:
        names = [r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()]
        return {n: con.execute(f'select * from "{n}" order by all').fetchall()
                for n in sorted(names) if n not in ("publication", "check_results", "check_failures")}
    finally:
        con.close()


def build_sample_run(root: Path) -> dict:
    """One full refresh of the bundled sample inputs into a fresh home (a tests/prefetch.py job)."""
    from pipelines.cli import execute_refresh

    home = root / "sample_home"
    ok, run_id, reason = execute_refresh(home, SAMPLES)
    return {"home": home, "ok": ok, "run_id": run_id, "reason": reason}


@pytest.fixture(scope="session")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One full refresh of the bundled sample inputs into a temporary home (shared by e2e tests)."""
    return prefetch.result("sample_run", tmp_path_factory)


FOCUS = SAMPLES / "billing" / "focus_1.0_sample_1000_multicloud.csv"


def focus_inputs(root: Path, billing_files: dict[str, bytes | Path]) -> Path:
    """root/inputs: the sample registry and the given billing files (name -> bytes or a file to copy)."""
    inputs = root / "inputs"
    shutil.copytree(SAMPLES / "registry", inputs / "registry")
    (inputs / "billing").mkdir(parents=True)
    for name, content in billing_files.items():
        target = inputs / "billing" / name
        if isinstance(content, Path):
            shutil.copy(content, target)
        else:
            target.write_bytes(content)
    return inputs


def build_focus_home(root: Path) -> dict:
    """A fresh home after one refresh of registry + the FOCUS sample + invoice_totals.csv (a prefetch job).

    Several tests start from exactly this state (tests/pipeline/test_e2e.py, tests/faults/test_kill.py):
    they copy `home` (shutil.copytree) and go on from there, always with these same `inputs`, which
    nobody modifies. `tables` is what that first refresh published.
    """
    from pipelines.cli import execute_refresh

    inputs = focus_inputs(root, {FOCUS.name: FOCUS, "invoice_totals.csv": SAMPLES / "billing" / "invoice_totals.csv"})
    home = root / "home"
    ok, run_id, reason = execute_refresh(home, inputs, docs=False)
    tables = published_tables(home / "serving.duckdb") if ok else {}
    return {"home": home, "inputs": inputs, "ok": ok, "run_id": run_id, "reason": reason, "tables": tables}


@pytest.fixture(scope="session")
def focus_home(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("focus_home", tmp_path_factory)


# One fresh interpreter for two checks (each costs a whole import of the stack, ~8 CPU s): importing
# pipelines.definitions starts no subprocess (tests/test_layout.py), then Dagster's own CLI,
# `dagster definitions validate -m pipelines.definitions` (the `dagster` console script's function), validates
# them (tests/pipeline/test_definitions.py). (The standard library's `platform` module runs `file -b` on the
# interpreter; that one is let through.)
_DEFINITIONS_PROBE = """
import subprocess, sys
real = subprocess.Popen.__init__
def refuse(self, args, *a, **k):
    if 'file' not in str(args[:1]): raise SystemExit('subprocess at import: ' + repr(args))
    real(self, args, *a, **k)
subprocess.Popen.__init__ = refuse
import pipelines.definitions as d
print('assets', len(list(d.defs.resolve_asset_graph().get_all_asset_keys())), flush=True)
subprocess.Popen.__init__ = real
from dagster._cli import main
sys.argv = ['dagster', 'definitions', 'validate', '-m', 'pipelines.definitions']
try:
    main()
    code = 0
except SystemExit as done:
    code = done.code if isinstance(done.code, int) else 1
print('dagster definitions validate exit', code, flush=True)
"""


@pytest.fixture(scope="session")
def definitions_probe() -> subprocess.CompletedProcess:
    """`_DEFINITIONS_PROBE` run once: its return code, stdout and stderr."""
    return subprocess.run([sys.executable, "-c", _DEFINITIONS_PROBE], cwd=REPO, capture_output=True, text=True,
                          timeout=300, check=False)


def copy_home(src: Path, dst: Path, *leave_out: str) -> Path:
    """A private copy of a built home, to go on refreshing it without touching the shared one
    (`leave_out`: names not copied, e.g. the publication a test needs the next run to write)."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(*leave_out) if leave_out else None)
    return dst


def descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of every process below `pid`, from /proc (no psutil here)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, pending = [], [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            try:
                cmd = (Path("/proc") / str(child) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            found.append((child, cmd))
            pending.append(child)
    return found


# The session's warm dbt (tests/dbt_server.py; the caller's side in pipelines/dbt_server.py): every
# `gpu-ledger-dbt` the tests start (the pipeline's dbt build and docs, the dbt tests run by hand), in
# this process, the lane workers and the CLI runs, runs in a child forked from it: the same dbt
# command, ~2 CPU s of start-up less each.
_DBT_SERVER: list[tuple[subprocess.Popen, Path]] = []


_PREFETCH_BASE: list[Path] = []


@pytest.hookimpl(trylast=True)  # after the tmp_path plugin's own configure (config._tmp_path_factory)
def pytest_configure(config: pytest.Config) -> None:
    """Make the dbt manifest current before any test module imports the Dagster definitions
    (the product never parses at import time: `gpu-ledger prepare` / `make setup` do it), start
    the session's warm dbt before any worker or CLI that inherits the variable naming it, then the
    fixture workers, which import the pipeline while pytest collects (tests/prefetch.py `prestart`)."""
    from pipelines.dbt_project import parse_manifest
    from pipelines.dbt_server import ENV_VAR
    from tests import dbt_server

    # Started in the background without job control (`nohup make test &` in a script, some CI runners),
    # this process ignores SIGINT; every Dagster execution the tests run in it (materialize(), ...) then
    # maps SIGTERM to that too, and the servers and CLIs started afterwards inherit an ignored SIGTERM
    # (CI runs 119 and 120: test_dbt_server's SIGTERM cases timed out). The refresh guards itself
    # (pipelines.cli.sigterm_kept); tests calling Dagster directly do not, so the session restores
    # Python's own SIGINT handler: a SIGTERM the tests send then ends what it is sent to.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if not os.environ.get(ENV_VAR) and not config.getoption("collectonly"):
        sock = Path(tempfile.mkdtemp(prefix="gpu-ledger-dbt-")) / "dbt.sock"  # short: a socket path has 107 bytes
        _DBT_SERVER.append((dbt_server.start(sock), sock))
        os.environ[ENV_VAR] = str(sock)
    parse_manifest()
    if not config.getoption("collectonly"):
        _PREFETCH_BASE.append(Path(config._tmp_path_factory.mktemp("prefetch")))
        prefetch.prestart(_PREFETCH_BASE[0])


def pytest_unconfigure(config: pytest.Config) -> None:
    from pipelines.dbt_server import ENV_VAR

    for proc, sock in _DBT_SERVER:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(sock.parent, ignore_errors=True)
        os.environ.pop(ENV_VAR, None)
    _DBT_SERVER.clear()


@pytest.hookimpl(trylast=True)  # after -k/-m deselection: queue only what will run
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    """Run the modules that need full refreshes last, and start building those refreshes now."""
    names = prefetch_plan.order_items(items)
    if not config.getoption("collectonly"):
        base = _PREFETCH_BASE[0] if _PREFETCH_BASE else Path(config._tmp_path_factory.mktemp("prefetch"))
        prefetcher = prefetch.configure(base, names)  # stops the early workers if nothing needs them
        if names:
            prefetcher.start()


# CPU s of this process (and the children it waited for) spent in each test module's setup, calls and
# teardowns: where the pytest process's own share of the suite's CPU goes.
MODULE_CPU: dict[str, float] = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    """Add the CPU s of one test's setup, call and teardown to its module's total (MODULE_CPU)."""
    before = prefetch.cpu_seconds()
    try:
        return (yield)
    finally:
        module = item.nodeid.split("::")[0]
        MODULE_CPU[module] = MODULE_CPU.get(module, 0.0) + prefetch.cpu_seconds() - before


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    prefetch.stop()


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """Where and when each heavy fixture was built (tests/prefetch.py), to see the suite's critical path."""
    from tests import dbt_server

    commands = dbt_server.commands(_DBT_SERVER[0][1]) if _DBT_SERVER else []
    lines = prefetch.timeline(commands)
    if lines:
        terminalreporter.write_sep("-", "prefetch jobs: where, start s, end s, CPU s, dbt CPU s, name")
        for line in lines:
            terminalreporter.write_line(line)
        # What CI waits on is the lanes' jobs plus this process's own tests (by module below). This
        # process's rusage also holds the lane workers it reaped, so its total is not the tests' CPU.
        terminalreporter.write_line(f"jobs in the lane workers, CPU s: {prefetch.lane_cpu_seconds():.1f}; "
                                    f"this process and every child it reaped (lane workers among them): "
                                    f"{prefetch.cpu_seconds():.1f}")
    if _DBT_SERVER:
        # Not in either figure above: the dbt commands ran as the warm server's children.
        ran = dbt_server.stats(_DBT_SERVER[0][1])
        terminalreporter.write_line(f"dbt commands run by the warm dbt server: {ran.get('commands', 0):.0f}, "
                                    f"CPU s: {ran.get('cpu_s', 0.0):.1f} (with the Spark driver JVMs they reaped)")
    if MODULE_CPU:
        # A fixture job the pytest process ran itself counts in the module that first asked for it.
        terminalreporter.write_sep("-", "tests in the pytest process: CPU s by test module (the 15 largest)")
        for module, cpu in sorted(MODULE_CPU.items(), key=lambda kv: -kv[1])[:15]:
            terminalreporter.write_line(f"{cpu:8.1f}  {module}")
        terminalreporter.write_line(f"{sum(MODULE_CPU.values()):8.1f}  all {len(MODULE_CPU)} modules")
