"""Shared reference lists (issue 15): written once in warehouse/reference.py, generated into dbt.

Fails when a generated dbt file and the reference disagree (an edit to one side only), when a
parser keeps its own copy of a list, or when the GPU name rules mean something else in DuckDB
than in Python.
"""

from __future__ import annotations

import ast
import csv
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from warehouse import reference as ref

REPO = Path(__file__).resolve().parent.parent


# --- generated files ---------------------------------------------------------------------------


@pytest.mark.parametrize("rel", sorted(ref.GENERATED))
def test_generated_file_is_what_the_reference_writes_now(rel: str) -> None:
    on_disk = (REPO / rel).read_text(encoding="utf-8")
    assert on_disk == ref.GENERATED[rel](), (
        f"{rel} is stale or was edited by hand: run `.venv/bin/python -m warehouse.reference --write`")


def test_generated_files_say_so() -> None:
    for rel in ref.GENERATED:
        if rel.endswith(".sql"):
            assert ref.HEADER in (REPO / rel).read_text().splitlines()[0]
    readme = (REPO / "dbt" / "seeds" / "README.md").read_text()
    for rel in ref.GENERATED:
        if rel.endswith(".csv"):
            assert Path(rel).name in readme and ref.HEADER in readme


def test_check_command_reports_up_to_date() -> None:
    done = subprocess.run([sys.executable, "-m", "warehouse.reference", "--check"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_lists_are_well_formed() -> None:
    ref._check_lists()
    assert len(ref.ISO_4217_CODES) == 155
    assert ref.CURRENCIES == tuple(sorted({*ref.ISO_4217_CODES, "XXX"}))


def test_known_currencies_macro_lists_exactly_the_reference() -> None:
    macro = (REPO / "dbt" / "macros" / "known_currencies.sql").read_text()
    assert re.findall(r"'([A-Z]{3})'", macro) == list(ref.CURRENCIES)
    assert "{% macro known_currencies() -%}" in macro


def test_gpu_alias_seed_is_the_reference_list() -> None:
    with (REPO / "dbt" / "seeds" / "gpu_aliases.csv").open(newline="") as f:
        rows = [(r["alias"], r["gpu_model"], r["note"]) for r in csv.DictReader(f)]
    assert rows == list(ref.GPU_ALIASES)


# --- one list, no copies -----------------------------------------------------------------------


def test_sources_use_the_reference_lists() -> None:
    from sources.api_spend import _common as api_common
    from sources.billing import mappings
    from sources.prices import _gpus, _rows

    assert _rows.CURRENCIES is ref.ISO_4217_SET
    assert api_common.KNOWN_CURRENCIES is ref.ISO_4217_SET
    assert mappings.FOCUS_ENUMS is ref.FOCUS_ENUMS
    assert _gpus.GPU_NAME_RULES is ref.GPU_NAME_RULES


def test_no_model_joins_the_alias_seed_by_hand() -> None:
    """Every model reaches gpu_aliases through join_gpu_alias (one key: lower(trim(name)))."""
    offenders = [str(p.relative_to(REPO)) for p in (REPO / "dbt" / "models").rglob("*.sql")
                 if re.search(r"ref\(\s*['\"]gpu_aliases['\"]\s*\)", p.read_text())]
    assert offenders == []
    users = [p for p in (REPO / "dbt" / "models").rglob("*.sql") if "join_gpu_alias(" in p.read_text()]
    assert len(users) >= 9


def test_reference_is_pure_data() -> None:
    """stdlib only: sources/ may import it without pulling in the database layer."""
    path = REPO / "warehouse" / "reference.py"
    tree = ast.parse(path.read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert {m.split(".")[0] for m in imported} - {"__future__"} <= set(sys.stdlib_module_names)
    probe = ("import sys, warehouse.reference\n"
             "heavy = [m for m in sys.modules if m.split('.')[0] in "
             "('duckdb', 'dagster', 'pandas', 'pyarrow', 'dbt', 'sources', 'pipelines')]\n"
             "heavy += [m for m in sys.modules if m.startswith('warehouse.') and m != 'warehouse.reference']\n"
             "print(heavy)\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# --- semantics ---------------------------------------------------------------------------------


def test_api_spend_accepts_every_iso_code_such_as_sek() -> None:
    from sources.api_spend._common import RowError, currency_code

    assert currency_code("SEK") == "SEK"
    assert currency_code(" sek ") == "SEK"
    assert currency_code("usd") == "USD"
    with pytest.raises(RowError) as err:
        currency_code("XYZ")
    assert err.value.rule == "unknown_currency"


def test_price_currency_check() -> None:
    from sources.prices._rows import check_currency

    assert check_currency("sek", 1) == ("SEK", None)
    for bad in ("XYZ", "XXX", ""):  # XXX is the warehouse's "no currency", not a source's
        code, reject = check_currency(bad, 1)
        assert code is None and reject.rule == "unknown_currency"


#: Names as the bundled samples write them (samples/inputs/usage, samples/inputs/benchmarks) -> id.
SAMPLE_NAMES = {
    "NVIDIA H100 80GB HBM3": "H100-SXM-80GB",  # nvidia_smi_query_gpu_h100-80gb-hbm3_load.csv
    "NVIDIA H200": "H200-SXM-141GB",  # nvidia_smi_query_gpu_h200-mig_load.csv
    "Tesla T4": "T4-16GB",  # DCGM modelName (dcgm_exporter_readme_scrape_*.prom)
    "NVIDIA A10G": "A10G-24GB",  # DCGM modelName (datadog_dcgm_fixture_*.prom)
    "a100": "A100-80GB",  # Slurm gres/gpu:a100 (hb_jobinfo_sacct_snowman_delim.txt): the alias, not the rule
    "v100": "V100-32GB",  # Slurm gres/gpu:v100: the alias (Habrok nodes 32GB), not the rule's 16GB
    "NVIDIA A100-SXM4-40GB": "A100-40GB",  # memory_fit_tests.csv
    "NVIDIA A100-PCIe-80GB": "A100-80GB",  # MLPerf accelerator_model_name
    "NVIDIA A100-SXM-80GB CTS": "A100-80GB",  # MLPerf
    "NVIDIA B200-SXM-180GB": "B200-180GB",  # MLPerf
    "AMD Instinct MI300X-NPS1-SPX-192GB-750W": "MI300X-192GB",  # MLPerf
    "Habana Gaudi2": None,
}


@pytest.mark.parametrize(("name", "expected"), sorted(SAMPLE_NAMES.items()))
def test_sample_gpu_names_resolve(name: str, expected: str | None) -> None:
    assert ref.gpu_model_of(name) == expected
    assert ref.gpu_model_of(f"  {name.upper()} ") == expected  # the alias key ignores case and spaces


def test_rules_alone_for_price_text() -> None:
    from sources.prices._gpus import gpu_model_from_text

    assert gpu_model_from_text("a100") == "A100-40GB"  # clouds rent the 40GB part by default
    assert gpu_model_from_text("Nvidia Tesla P4 GPU running in Americas") == "P4-8GB"
    assert gpu_model_from_text("$32.7726 per On Demand Linux p4d.24xlarge Instance Hour") is None
    assert gpu_model_from_text("NVIDIA_L40S") == "L40S-48GB"
    assert gpu_model_from_text("NVIDIA L4") == "L4-24GB"
    assert gpu_model_from_text("nvidia-tesla-a100") == "A100-40GB"


def test_ids_are_catalogued() -> None:
    with (REPO / "dbt" / "seeds" / "gpu_catalog.csv").open(newline="") as f:
        catalog = {r["gpu_model"] for r in csv.DictReader(f)}
    assert {m for _a, m, _n in ref.GPU_ALIASES} <= catalog
    # P4-8GB is named by GCP price SKUs but has no catalog row (known gap, left as it was).
    assert {m for _p, m in ref.GPU_NAME_RULES} - catalog <= {"P4-8GB"}


def test_name_rules_mean_the_same_in_duckdb() -> None:
    """The generated macro runs the patterns on RE2 (DuckDB); Python runs them on `re`."""
    names = sorted({*SAMPLE_NAMES, *(a for a, _m, _n in ref.GPU_ALIASES),
                    "A100 80GB PCIe", "a100_sxm4_80gb", "RTXPRO6000", "Tesla P40", "NVIDIA L40", "A30",
                    "p4de.24xlarge", "NVIDIA RTX A6000", "nvidia-t4g", "A10", "A100X"})
    case = " ".join(f"when regexp_matches(upper(replace(name, '_', ' ')), '{p}') then '{m}'"
                    for p, m in ref.GPU_NAME_RULES)
    con = duckdb.connect()
    try:
        got = dict(con.execute(f"select name, case {case} end from unnest(?) as t(name)", [names]).fetchall())
    finally:
        con.close()
    assert got == {n: ref.gpu_model_from_name(n) for n in names}
