"""Price models end to end: the real Karpenter AWS history becomes validity intervals, and a
history re-landed as a new file (new bytes, same observations) adds no interval."""

import shutil
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import execute_refresh
from tests import prefetch
from tests.conftest import SAMPLES

pytestmark = pytest.mark.e2e
KARPENTER_AWS = "karpenter_aws_ondemand_gpu_prices_history.csv"
HISTORY_COLUMNS = "provider, sku, region, pricing_category, currency, price_per_hour, valid_from, valid_to, observations"


def _published(home: Path) -> dict:
    con = duckdb.connect(str(home / "serving.duckdb"), read_only=True)
    try:
        return {
            "history": con.execute(f"select {HISTORY_COLUMNS} from fct_gpu_price_history order by all").fetchall(),
            "p5": con.execute(
                "select price_per_hour, gpu_count, price_per_gpu_hour, valid_from, valid_to, is_current "
                "from fct_gpu_price_history where provider = 'aws' and sku = 'p5.48xlarge' "
                "and region = 'us-east-1' and pricing_category = 'on-demand' and currency = 'USD' "
                "order by valid_from").fetchall(),
            "offers": con.execute("select count(*) from fct_gpu_offers_current").fetchone()[0],
            "dim_gpu": con.execute("select count(*), count(cheapest_on_demand_usd_per_gpu_hour) from dim_gpu").fetchone(),
        }
    finally:
        con.close()


def build_price_runs(base: Path) -> dict:
    """Two refreshes of one home: the prices sample, then the same AWS history re-landed (a tests/prefetch.py job)."""
    inputs, home = base / "inputs", base / "home"
    shutil.copytree(SAMPLES / "prices", inputs / "prices")
    shutil.copytree(SAMPLES / "registry", inputs / "registry")
    ok, _, reason = execute_refresh(home, inputs, docs=False)
    assert ok, reason
    first = _published(home)
    # A later download of the same history: identical rows, one line repeated, so different bytes
    # and a new landed file whose observations all exist already.
    original = (inputs / "prices" / KARPENTER_AWS).read_bytes()
    last_line = original.splitlines(keepends=True)[-1]  # with its own CRLF: the parser is strict
    (inputs / "prices" / "karpenter_aws_history_redownloaded.csv").write_bytes(original + last_line)
    ok, _, reason = execute_refresh(home, inputs, docs=False)
    assert ok, reason
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        files = con.execute(
            "select count(distinct _file_hash) from raw.gpu_price_observations where source_format = ?",
            ["karpenter_aws_pricing_history"]).fetchone()[0]
    finally:
        con.close()
    return {"first": first, "second": _published(home), "karpenter_aws_files": files}


@pytest.fixture(scope="module")
def price_runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Two refreshes of one home (build_price_runs), built ahead by tests/prefetch.py."""
    return prefetch.result("price_runs", tmp_path_factory)


def test_p5_us_east_1_on_demand_has_two_intervals(price_runs: dict) -> None:
    assert price_runs["first"]["p5"] == [
        (Decimal("98.32"), Decimal(8), Decimal("12.29"), datetime(2023, 7, 31, 13, 9, 33),
         datetime(2025, 6, 23, 13, 18, 30), False),
        (Decimal("55.04"), Decimal(8), Decimal("6.88"), datetime(2025, 6, 23, 13, 18, 30), None, True),
    ]


def test_relanded_history_adds_no_interval(price_runs: dict) -> None:
    assert price_runs["karpenter_aws_files"] == 2  # the re-landed file really was loaded
    assert price_runs["second"]["history"] == price_runs["first"]["history"]
    assert price_runs["second"]["p5"] == price_runs["first"]["p5"]


def test_every_gpu_has_a_row_and_most_have_a_current_price(price_runs: dict) -> None:
    offers = price_runs["first"]["offers"]
    gpus, priced = price_runs["first"]["dim_gpu"]
    assert offers > 0
    assert gpus == sum(1 for _ in open(Path(__file__).resolve().parents[2] / "dbt" / "seeds" / "gpu_catalog.csv")) - 1
    assert priced >= 20
