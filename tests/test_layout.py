"""The house rules, checked on the code itself (each can fail on a change that breaks one)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PRODUCT = ("reference", "pipelines", "sources", "dashboards", "warehouse", "reporting")
MAX_LINES = 400


def _modules(*packages: str) -> list[Path]:
    return sorted(p for pkg in packages for p in (REPO / pkg).rglob("*.py"))


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_warehouse_is_a_package_without_dagster() -> None:
    assert (REPO / "warehouse" / "__init__.py").is_file()
    offenders = [f"{p.relative_to(REPO)}: {m}" for p in _modules("warehouse", "reporting")
                 for m in _imports(p) if m.split(".")[0] in ("dagster", "dagster_dbt", "pipelines", "dashboards")]
    assert offenders == []


@pytest.mark.parametrize(("package", "forbidden"), [
    ("pipelines", ("dashboards",)),
    ("sources", ("dagster", "pipelines", "dashboards", "reporting")),
    ("reporting", ("dashboards", "pipelines")),
])
def test_layers_point_one_way(package: str, forbidden: tuple[str, ...]) -> None:
    offenders = [f"{p.relative_to(REPO)}: {m}" for p in _modules(package)
                 for m in _imports(p) if m.split(".")[0] in forbidden]
    assert offenders == []


def test_sources_never_import_the_warehouse() -> None:
    """The shared facts sit one floor down, in `reference`: `warehouse` imports `sources`, never the reverse."""
    used = {f"{p.relative_to(REPO)}: {m}" for p in _modules("sources") for m in _imports(p)
            if m.split(".")[0] == "warehouse"}
    assert used == set()


def test_reference_is_the_bottom_floor() -> None:
    """`reference` imports the standard library and itself only: every layer may import it."""
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    offenders = {f"{p.relative_to(REPO)}: {m}" for p in _modules("reference") for m in _imports(p)
                 if m.split(".")[0] not in stdlib | {"reference"}}
    assert offenders == set()
    assert len(_modules("reference")) >= 5  # __init__, bounds, instances, mig, tags


def test_no_product_module_writes_the_environment() -> None:
    offenders = []
    for path in _modules(*PRODUCT):
        for node in ast.walk(ast.parse(path.read_text())):
            target = None
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                target = next((t for t in targets if isinstance(t, ast.Subscript)
                               and ast.unparse(t.value) == "os.environ"), None)
            elif isinstance(node, ast.Call) and ast.unparse(node.func) in (
                    "os.environ.update", "os.environ.setdefault", "os.putenv", "os.environ.pop"):
                target = node
            if target is not None:
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert offenders == []


def test_no_product_module_exceeds_the_size_limit() -> None:
    sizes = {str(p.relative_to(REPO)): len(p.read_text().splitlines()) for p in _modules(*PRODUCT)}
    assert {k: v for k, v in sizes.items() if v > MAX_LINES} == {}


def test_nothing_reads_outside_the_clone() -> None:
    sibling = "/".join(("..", "shared"))  # spelled so this file does not match itself
    offenders = [str(p.relative_to(REPO)) for p in _modules(*PRODUCT, "tests", "tools", "perf")
                 if sibling in p.read_text() or "/work" + "/shared" in p.read_text()]
    assert offenders == []


def test_importing_the_definitions_starts_no_subprocess(definitions_probe: subprocess.CompletedProcess) -> None:
    """`dagster dev` imports pipelines.definitions: that must not run dbt parse (or another program of ours).
    The probe (tests/conftest.py) refuses every subprocess until the import is done."""
    out = definitions_probe.stdout + definitions_probe.stderr
    assert "subprocess at import" not in out, out[-2000:]
    counts = [line.split()[1] for line in definitions_probe.stdout.splitlines() if line.startswith("assets ")]
    assert counts and int(counts[0]) > 50, out[-2000:]


def test_the_manifest_parse_needs_no_dagster() -> None:
    """`gpu-ledger prepare` (the first step of `make test`) parses dbt without importing Dagster, and finds
    the manifest where dagster-dbt's DbtProject reads it."""
    probe = ("import sys\nimport pipelines.dbt_parse as p\n"
             "print(sorted(m for m in ('dagster', 'dagster_dbt') if m in sys.modules), p.MANIFEST)\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    from pipelines.dbt_project import ledger_dbt

    assert done.stdout.strip() == f"[] {ledger_dbt.manifest_path}"


# A citation of a ticket or work period (the word "issue" or "session", then its number): the text should
# say the reason itself. Only a number right after the word counts, so "a known issue" and "8 sessions" pass.
CITATION = re.compile(r"\b(?:issues?|session)[ #-]?#?\d+", re.IGNORECASE)
# Verbatim third-party files (provider exports, benchmark logs, public fixtures) are not our wording and may
# cite their own trackers; the notes we write beside them (*.md) are checked like everything else.
THIRD_PARTY = ("samples/", "tests/data/")


def citations(text: str) -> list[int]:
    """Line numbers (1-based) of `text` that cite an issue or session number."""
    return [n for n, line in enumerate(text.splitlines(), 1) if CITATION.search(line)]


def test_no_text_cites_an_issue_or_session_number() -> None:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    offenders = []
    for name in filter(None, listed.decode().split("\0")):
        path = REPO / name
        if name.startswith(THIRD_PARTY) and not name.endswith(".md") or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:  # binary (images, Parquet, DuckDB files)
            continue
        offenders += [f"{name}:{n}" for n in citations(data.decode("utf-8", errors="replace"))]
    assert offenders == [], "cite the reason, not an issue or session number:\n" + "\n".join(offenders)


def test_the_citation_check_is_not_vacuous() -> None:
    word = "is" + "sue"  # spelled apart so this file does not cite one itself
    cited = f"a ({word} 23) b\nfine\nsee {word.title()} #7\n{word}s 19 and 22\nSes" + "sion 14's figure\n"
    assert citations(cited) == [1, 3, 4, 5]
    assert citations(f"a known {word}\n8 sessions need 1 replica\nthe {word}, 3 times over\n") == []


CHECK_NAME = re.compile(r"\bassert_[a-z0-9_]+[a-z0-9]")


def cited_checks(text: str) -> set[str]:
    """The singular dbt checks (`assert_<rule>`) a text names."""
    return set(CHECK_NAME.findall(text))


def test_every_check_a_text_cites_exists() -> None:
    """A comment, yml description or doc that names a singular dbt check names one that runs: a renamed or
    merged check left behind in prose promises a guard that is not there."""
    tests = {p.stem for p in (REPO / "dbt" / "tests").glob("*.sql")}
    texts = [REPO / "README.md", REPO / "BENCHMARKS.md", *(REPO / "docs").rglob("*.md"),
             *(REPO / "dbt" / "models").rglob("*.sql"), *(REPO / "dbt" / "models").rglob("*.yml"),
             *(REPO / "dbt" / "macros").rglob("*.sql"), *(REPO / "dbt" / "tests").glob("*.sql")]
    missing = sorted(f"{p.relative_to(REPO)}: {name}" for p in texts for name in cited_checks(p.read_text())
                     if name not in tests)
    assert missing == [], "these checks do not exist in dbt/tests:\n" + "\n".join(missing)


def test_the_cited_check_rule_is_not_vacuous() -> None:
    assert cited_checks("see assert_gpu_idle_identity, and assert_foo_bar (blocking).") == {
        "assert_gpu_idle_identity", "assert_foo_bar"}
    assert cited_checks("assert x == 1; assertion; an_assert_") == set()
