"""Shared reference lists: written once in the `reference` package, generated into dbt by
warehouse/reference.py.

Fails when a generated dbt file and the reference disagree (an edit to one side only), when a
parser keeps its own copy of a list, when the GPU name rules mean something else in DuckDB
than in Python, or when the MIG profile table's H200 rows stop matching the real H200 capture.
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

from reference import mig as reference_mig
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


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    return imported


def test_reference_is_pure_data() -> None:
    """stdlib only: every layer may import the `reference` package without pulling in the database
    layer; warehouse/reference.py (the dbt generator) adds nothing heavy to it."""
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    for path in sorted((REPO / "reference").glob("*.py")):
        assert {m.split(".")[0] for m in _imports(path)} <= stdlib | {"reference"}, path.name
    imported = _imports(REPO / "warehouse" / "reference.py") - {"warehouse"}
    assert {m.split(".")[0] for m in imported} <= stdlib | {"reference"}
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


# --- MIG profiles --------------------------------------------------------------------------------

H200_CAPTURE = REPO / "tests" / "data" / "public" / "usage" / "h200_capture"
# `|   0  MIG 1g.18gb         19     7/7        16.00      No     16     1     0   |`
LGIP_ROW = re.compile(r"^\|\s+\d+\s+MIG (\S+)\s+(\d+)\s+\d+/(\d+)\s+([\d.]+)\s+\w+\s+(\d+)\s")
# `GPU  0 Profile ID 15 Placements: {0,2,4,6}:2` (one placement: `Placement :`)
LGIPP_ROW = re.compile(r"^GPU\s+\d+ Profile ID\s+(\d+) Placements?\s*:\s*\{([\d,]+)\}:(\d+)$")


def _h200_capture() -> dict[str, tuple]:
    """profile -> (compute slices, memory slices, memory GiB, SMs, instances) as the capture reports them."""
    lgip = (H200_CAPTURE / "nvidia_smi_mig_lgip_h200.txt").read_text().splitlines()
    placements = {}
    for line in (H200_CAPTURE / "nvidia_smi_mig_lgipp_h200.txt").read_text().splitlines():
        m = LGIPP_ROW.match(line)
        assert m, line  # every line of the capture is a placement line
        placements[int(m[1])] = (len(m[2].split(",")), int(m[3]))
    found = {}
    for m in filter(None, map(LGIP_ROW.match, lgip)):
        name, profile_id, total, gib, sms = m[1], int(m[2]), int(m[3]), float(m[4]), int(m[5])
        starts, size = placements[profile_id]
        assert starts >= total  # a placement for every instance the profile allows
        found[name] = (int(name.split("g.", 1)[0]), size, gib, sms, total)
    return found


def test_h200_rows_are_the_real_capture() -> None:
    """The H200 rows are what `nvidia-smi mig -lgip` / `-lgipp` printed on a real H200: names, compute
    slices, memory slices (the `:N` of the placements), GiB, SMs and instance counts."""
    captured = _h200_capture()
    assert len(captured) == 7
    rows = {p.profile: (p.compute_slices, p.memory_slices, p.memory_gib, p.sm_count, p.max_instances)
            for p in ref.MIG_PROFILES if p.gpu_model == "H200-SXM-141GB"}
    assert rows == captured
    assert all(p.compute_slices_per_gpu == 7 and p.memory_slices_per_gpu == 8 and "h200_capture" in p.source
               for p in ref.MIG_PROFILES if p.gpu_model == "H200-SXM-141GB")
    # the placements cover the GPU's 8 memory slices: the full profile takes all of them from slot 0
    assert captured["7g.141gb"][1] == 8


def test_h200_capture_keeps_its_provenance() -> None:
    assert (H200_CAPTURE / "PROVENANCE.md").read_text().startswith("# PROVENANCE - usage/h200_capture")


def test_mig_seed_is_the_reference_table() -> None:
    with (REPO / "dbt" / "seeds" / "mig_profiles.csv").open(newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == ref.MIG_COLUMNS
        rows = list(reader)
    assert [(r["gpu_model"], r["profile"]) for r in rows] == [p[:2] for p in ref.MIG_PROFILES]
    for r, p in zip(rows, ref.MIG_PROFILES, strict=True):
        assert float(r["memory_gib"]) == p.memory_gib if r["memory_gib"] else p.memory_gib is None
        assert int(r["sm_count"]) == p.sm_count if r["sm_count"] else p.sm_count is None
        assert int(r["compute_slices"]) == p.compute_slices and int(r["memory_slices"]) == p.memory_slices


def test_mig_profiles_cover_the_catalogued_mig_gpus() -> None:
    with (REPO / "dbt" / "seeds" / "gpu_catalog.csv").open(newline="") as f:
        catalog = {r["gpu_model"] for r in csv.DictReader(f)}
    models = {p.gpu_model for p in ref.MIG_PROFILES}
    assert models <= catalog
    assert models == {"B200-180GB", "H200-SXM-141GB", "H100-SXM-80GB", "H100-NVL-94GB", "H100-PCIe-80GB",
                      "A100-80GB", "A100-40GB", "GH200-96GB"}
    for model in models:  # the seven GPU-instance profiles of a 7/8-slice GPU, one of them +me
        names = [p.profile for p in ref.MIG_PROFILES if p.gpu_model == model]
        assert len(names) == 7 and sum(n.endswith("+me") for n in names) == 1, model
        slices = sorted(p.compute_slices for p in ref.MIG_PROFILES if p.gpu_model == model)
        assert slices == [1, 1, 1, 2, 3, 4, 7], model


def test_mig_fraction_compute_and_memory_rules() -> None:
    assert ref.mig_fraction("1g.18gb", "H200-SXM-141GB") == pytest.approx(1 / 7)
    assert ref.mig_fraction("1g.18gb", "H200-SXM-141GB", "memory") == pytest.approx(1 / 8)
    # the 1g with double memory takes two memory slices
    assert ref.mig_fraction("1g.35gb", "H200-SXM-141GB", "memory") == pytest.approx(2 / 8)
    assert ref.mig_fraction("3g.40gb", "H100-SXM-80GB", "memory") == pytest.approx(4 / 8)
    assert ref.mig_fraction("3g.40gb", "H100-SXM-80GB") == pytest.approx(3 / 7)
    assert ref.mig_fraction("7g.180gb", "B200-180GB", "memory") == 1.0
    # spellings tools use for the same profile
    assert ref.mig_fraction("MIG 2g.20gb", "A100-80GB", "memory") == pytest.approx(2 / 8)
    assert ref.mig_fraction(" nvidia.com/mig-1g.10gb.me ", "A100-80GB", "memory") == pytest.approx(1 / 8)
    assert reference_mig.mig_profile_name("nvidia.com/mig-1g.10gb.me") == "1g.10gb+me"


def test_mig_fraction_falls_back_to_compute_slices_of_seven() -> None:
    """A model or profile the table lacks counts `<n>g` of 7 under either rule (as dbt does)."""
    assert ref.mig_fraction("2g.35gb", None) == pytest.approx(2 / 7)
    assert ref.mig_fraction("2g.35gb", "B300-288GB", "memory") == pytest.approx(2 / 7)
    # an A100/H100 name on an H200: not one of its profiles
    assert ref.mig_fraction("1g.10gb", "H200-SXM-141GB", "memory") == pytest.approx(1 / 7)
    for not_mig in ("", "gpu", "a100", "1c.3g.20gb", "8g.80gb", "0g.5gb", "3g"):
        assert ref.mig_fraction(not_mig, "A100-80GB") is None, not_mig
    with pytest.raises(ValueError):
        ref.mig_fraction("1g.10gb", "A100-80GB", "sm")


def test_sm_counts_are_not_proportional_to_slices() -> None:
    """Why the fraction rule is a stated choice: 1g is 16 of 132 SMs on the H200, not 1/7."""
    h200 = {p.profile: p for p in ref.MIG_PROFILES if p.gpu_model == "H200-SXM-141GB"}
    assert h200["1g.18gb"].sm_count / h200["7g.141gb"].sm_count == pytest.approx(0.121, abs=5e-4)
    assert h200["1g.18gb"].sm_count / h200["7g.141gb"].sm_count != pytest.approx(1 / 7, abs=1e-3)


@pytest.mark.parametrize(("change", "message"), [
    (lambda rows: (*rows, rows[0]), "appears twice"),
    (lambda rows: (rows[0]._replace(memory_slices=9), *rows[1:]), "memory slices"),
    (lambda rows: (rows[0]._replace(compute_slices=0, profile="0g.18gb"), *rows[1:]), "lower-case name"),
    (lambda rows: (rows[0]._replace(source=""), *rows[1:]), "no source"),
])
def test_mig_invariants_catch_a_bad_row(monkeypatch: pytest.MonkeyPatch, change, message: str) -> None:
    monkeypatch.setattr(reference_mig, "MIG_PROFILES", change(reference_mig.MIG_PROFILES))
    with pytest.raises(AssertionError, match=message):
        ref._check_lists()
