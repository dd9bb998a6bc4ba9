"""The bundled samples under the physical-GPU rules (docs/cost_model.md, "Physical GPUs"): every GPU
gives at most one GPU-hour per hour, the owned Hábrók cluster is priced in full and shows in the bridge,
and every registered team with GPU use is shown back.

Hand derivation of the Hábrók figures (samples/inputs):
- `usage/hb_jobinfo_scontrol_nodes_tres.txt` lists 6 nodes with `gres/gpu:a100=4` (24 A100-80GB) and
  34 nodes with `gres/gpu:v100=1` (34 V100-32GB); no Cluster anywhere, so all are `slurm:(default)`,
  the pool the registry's owned site `habrok` matches.
- `usage/hb_jobinfo_sacct_snowman_delim.txt`: the jobs holding `gres/gpu` start on 2024-04-03 and end
  on 2024-04-19 (UTC), so the pool was observed on 17 whole days: 17 x 24 = 408 hours per GPU.
  Capacity: A100 24 x 408 = 9,792 GPU-hours; V100 34 x 408 = 13,872 GPU-hours.
- `registry/teams.yaml` owned_hardware: capex A100-80GB 15,000 and V100-32GB 8,000 over 36 months of
  730 h, electricity 0.12 /kWh at PUE 1.3 with the catalog TDP (A100 400 W, V100 300 W), operations
  350 per GPU-month (/ 730 h):
    A100 rate = 15000 / 26280 + 0.4 x 1.3 x 0.12 + 350 / 730
    V100 rate =  8000 / 26280 + 0.3 x 1.3 x 0.12 + 350 / 730
  and the site's April 2024 cost = 9,792 x A100 rate + 13,872 x V100 rate, all of it in the showback
  (source 'owned hardware') and in the bridge step 'Owned hardware'.
"""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pytest

pytestmark = pytest.mark.e2e

CENT = Decimal("0.01")
A100_RATE = Decimal(15000) / Decimal(26280) + Decimal("0.4") * Decimal("1.3") * Decimal("0.12") + Decimal(350) / Decimal(730)
V100_RATE = Decimal(8000) / Decimal(26280) + Decimal("0.3") * Decimal("1.3") * Decimal("0.12") + Decimal(350) / Decimal(730)
HOURS = 17 * 24


@pytest.fixture(scope="module")
def con(sample_run: dict):
    assert sample_run["ok"], sample_run["reason"]
    con = duckdb.connect(str(sample_run["home"] / "serving.duckdb"), read_only=True)
    yield con
    con.close()


def test_no_physical_gpu_gives_more_than_24_gpu_hours_a_day(con) -> None:
    # Per pool and day, the capacity of every source is at most 24 h x the pool's physical GPUs.
    over = con.execute("""
        with gpus as (select pool_id, count(*) as n from dim_physical_gpu group by pool_id)
        select idle.pool_id, idle.day, sum(idle.billed_gpu_hours) as capacity, any_value(gpus.n) as gpus
        from fct_gpu_idle_daily as idle
        left join gpus on gpus.pool_id = idle.pool_id
        group by idle.pool_id, idle.day
        having sum(idle.billed_gpu_hours) > 24 * coalesce(any_value(gpus.n), 0) + 1e-6
    """).fetchall()
    assert over == []
    # And each GPU of the inventory existed at most 24 h a day of its own span.
    too_long = con.execute("""
        select physical_gpu_id from dim_physical_gpu
        where capacity_gpu_hours > 24 * (date_diff('day', first_hour, last_hour) + 1) + 1e-6
    """).fetchall()
    assert too_long == []


def test_habrok_inventory_is_the_scontrol_nodes(con) -> None:
    got = dict(con.execute("""
        select gpu_model, count(*) from dim_physical_gpu where site = 'habrok' group by gpu_model
    """).fetchall())
    assert got == {"A100-80GB": 24, "V100-32GB": 34}


def test_habrok_capacity_is_priced_in_full(con) -> None:
    rows = {r[0]: r[1:] for r in con.execute("""
        select gpu_model, sum(capacity_gpu_hours), sum(capacity_cost), sum(allocated_cost) + sum(idle_cost),
               count(*) filter (where unpriced_reason is not null)
        from fct_owned_capacity_daily where site = 'habrok' group by gpu_model
    """).fetchall()}
    assert set(rows) == {"A100-80GB", "V100-32GB"}
    for model, gpus, rate in (("A100-80GB", 24, A100_RATE), ("V100-32GB", 34, V100_RATE)):
        capacity, cost, parts, unpriced = rows[model]
        assert capacity == gpus * HOURS
        assert unpriced == 0
        expected = (gpus * HOURS * rate).quantize(CENT)
        assert Decimal(cost).quantize(CENT) == expected, model
        assert Decimal(parts).quantize(CENT) == expected, model


def test_owned_hardware_reaches_showback_and_bridge(con) -> None:
    site_month = (9792 * A100_RATE + 13872 * V100_RATE).quantize(CENT)
    showback = con.execute("""
        select sum(amount) from fct_showback_monthly
        where source = 'owned hardware' and period = date '2024-04-01' and currency = 'USD'
    """).fetchone()[0]
    assert Decimal(showback).quantize(CENT) == site_month
    bridge = con.execute("""
        select amount from fct_cost_bridge
        where step = 'Owned hardware' and period = date '2024-04-01' and currency = 'USD'
    """).fetchone()[0]
    assert Decimal(bridge).quantize(CENT) == site_month
    # Under idle_policy separate the hours nobody held are the '(idle)' team's line.
    idle_team = con.execute("""
        select sum(amount) from fct_showback_monthly
        where team_id = '(idle)' and component = 'idle_capacity' and source = 'owned hardware'
    """).fetchone()[0]
    assert Decimal(0) < Decimal(idle_team) < site_month


def test_every_registered_team_with_gpu_use_is_shown_back(con) -> None:
    missing = con.execute("""
        select distinct u.team_id from fct_gpu_utilisation_daily as u
        inner join dim_team as t on t.team_id = u.team_id
        where u.allocated_gpu_hours > 0
          and not exists (select 1 from fct_showback_monthly as s where s.team_id = u.team_id)
    """).fetchall()
    assert missing == []
