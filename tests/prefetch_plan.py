"""Which heavy fixtures (tests/prefetch.py jobs) the collected tests need, and in what order they run.

JOBS registers each job's builder, the jobs it needs first and its rough cost; FIXTURES maps the fixtures
that ask for a job to it. `order_items` moves the modules that need a job after the light ones, in the
order the workers will finish their jobs, and returns the jobs to queue; the workers take them by
critical path (`critical_path`).
"""

from __future__ import annotations

# name -> (builder "module:function", jobs it needs first, rough cost in full refreshes, from the
# session timeline: a sample refresh ~1, the Spark build ~8, the kill sequence's three CLI runs ~4). The builder
# gets its own empty folder (and, for dependent jobs, the results of its dependencies as keyword
# arguments). The workers take the longest critical path first, so that the last job to finish is a
# short one; the tests take (and run themselves) whatever they need that has not started yet.
JOBS: dict[str, tuple[str, tuple[str, ...], float]] = {
    "catalogue_run": ("tests.bad_inputs.test_catalogue:build_catalogue_run", (), 1),
    "billing_commitments": ("tests.dbt.test_billing_commitments:build_runs", (), 2),
    "price_runs": ("tests.dbt.test_prices_models:build_price_runs", (), 2),
    "sample_run": ("tests.conftest:build_sample_run", (), 1.2),
    "focus_home": ("tests.conftest:build_focus_home", (), 1),
    "kill_sequence": ("tests.faults.test_kill:build_kill_sequence", ("focus_home",), 4),
    "e2e_doctored": ("tests.pipeline.test_e2e:build_doctored", ("focus_home",), 0.8),
    "refresh_lock": ("tests.faults.test_refresh_lock:build_two_refreshes", ("focus_home",), 1),
    "e2e_unreadable": ("tests.pipeline.test_e2e:build_unreadable", (), 1),
    "incremental": ("tests.pipeline.test_incremental:build_refreshes", (), 4),
    "usage_chain": ("tests.pipeline.test_incremental_usage_chain:build_usage_chain", (), 9),
    "secret_run": ("tests.security.test_secrets:build_secret_run", (), 1),
    "spark_run": ("tests.spark.test_spark_lane:build_spark_run", ("sample_run",), 8),
    "chargeback_basis": ("tests.dbt.test_chargeback_basis:build_home", (), 1),
    "showback_bridge": ("tests.dbt.test_showback_bridge:build_showback_home", (), 1),
    "golden": ("tests.dbt.test_golden_ledger:build_golden", (), 1),
    "golden_physical": ("tests.dbt.test_golden_physical:build_golden_physical", (), 1),
    "time_slicing": ("tests.dbt.test_time_slicing:build_time_slicing", (), 1),
    "golden_decision": ("tests.dbt.test_golden_decision:build_golden_decision", (), 1),
    "golden_focus": ("tests.dbt.test_golden_focus:build_golden_focus", (), 1),
    "golden_fx": ("tests.dbt.test_golden_fx:build_golden_fx", (), 1),
    "unpriced": ("tests.dbt.test_unpriced_usage:build_unpriced", (), 1),
    "focus_export": ("tests.pipeline.test_focus_export:build_focus_export", (), 1),
    "alert_runs": ("tests.pipeline.test_alerts:build_alert_runs", (), 1.7),
    "zero_config_bare": ("tests.dbt.test_billing_zero_config:build_bare", (), 1),
    "zero_config_teams": ("tests.dbt.test_billing_zero_config:build_teams_only", (), 1),
    "absurd_run": ("tests.security.test_absurd_inputs:build_absurd_run", (), 1.5),
    "public_slices": ("tests.sources.test_public_focus_slices:build_slices_run", (), 1),
    "slices_round_trip": ("tests.sources.test_public_focus_slices:build_slices_round_trip", ("public_slices",), 1),
    "focus13": ("tests.sources.test_billing_focus13:build_focus13_run", (), 1),
    "round_trip_parquet": ("tests.pipeline.test_focus_export:build_round_trip_parquet", ("sample_run",), 1),
    "provider_allocation": ("tests.pipeline.test_focus_export:build_provider_home", (), 1),
    "incremental_selection": ("tests.pipeline.test_incremental_selection:build_runs", ("sample_run",), 1.7),
    "no_new_data": ("tests.pipeline.test_no_new_data:build_sequence", ("focus_home",), 1.5),
    "golden_focus_round_trip": ("tests.dbt.test_golden_focus:build_golden_focus_round_trip", ("golden_focus",), 1),
    # dbt runs on copies of the sample ledger, not refreshes: nights and full rebuilds of the cost models (a late
    # file, a restated bill, a run crossing into the month before), one run of the 14 models with a history pre-hook
    "cost_months": ("tests.dbt.test_cost_months_incremental:build_steps", ("sample_run",), 1),
    "history_new_columns": ("tests.dbt.test_history_new_columns:build_upgrade", ("sample_run",), 0.5),
    "cost_months_reach": ("tests.dbt.test_cost_months_reach:build_steps", ("sample_run",), 0.5),
}

# Fixture name -> job (or jobs: one per parameter of a parametrized fixture); a test that (transitively)
# uses one of these fixtures needs that job.
FIXTURES: dict[str, str | tuple[str, ...]] = {
    "catalogue_run": "catalogue_run",
    "commitment_runs": "billing_commitments",
    "price_runs": "price_runs",
    "sample_run": "sample_run",
    "focus_home": "focus_home",
    "kill_sequence": "kill_sequence",
    "e2e_doctored": "e2e_doctored",
    "two_refreshes": "refresh_lock",
    "e2e_unreadable": "e2e_unreadable",
    "refreshes": "incremental",
    "chain": "usage_chain",
    "secret_run": "secret_run",
    "spark_run": "spark_run",
    "chargeback_basis_run": "chargeback_basis",
    "anomalies_run": "alert_runs",  # the first of its two refreshes (tests/dbt/test_anomalies.py)
    "showback_bridge_run": "showback_bridge",
    "golden_run": "golden",
    "golden_physical_run": "golden_physical",
    "time_slicing_run": "time_slicing",
    "golden_decision_run": "golden_decision",
    "golden_focus_run": "golden_focus",
    "golden_fx_run": "golden_fx",
    "unpriced_run": "unpriced",
    "focus_export_run": "focus_export",
    "alert_runs": "alert_runs",
    "zero_config_bare_run": "zero_config_bare",
    "zero_config_teams_run": "zero_config_teams",
    "absurd_run": "absurd_run",
    "public_slices_run": "public_slices",
    "slices_round_trip": "slices_round_trip",
    "focus13_run": "focus13",
    "export_round_trip": "round_trip_parquet",
    "provider_home": "provider_allocation",
    "late_runs": "incremental_selection",
    "nothing_new": "no_new_data",
    "golden_focus_round_trip": "golden_focus_round_trip",
    "cost_month_steps": "cost_months",
    "upgrade": "history_new_columns",
    "reach_steps": "cost_months_reach",
}


def critical_path(names: list[str]) -> dict[str, float]:
    """Each job's cost plus the longest chain of queued jobs that wait for it."""
    dependents: dict[str, list[str]] = {n: [] for n in names}
    for name in names:
        for dep in JOBS[name][1]:
            if dep in dependents:
                dependents[dep].append(name)
    memo: dict[str, float] = {}

    def length(name: str) -> float:
        if name not in memo:
            memo[name] = JOBS[name][2] + max((length(d) for d in dependents[name]), default=0.0)
        return memo[name]

    return {n: length(n) for n in names}


def _skipped(item) -> bool:
    if item.get_closest_marker("skip"):
        return True
    return any(m.args and all(isinstance(a, bool) and a for a in m.args[:1]) for m in item.iter_markers("skipif"))


def jobs_for(item) -> list[str]:
    if _skipped(item):
        return []
    found: list[str] = []
    for fixture in getattr(item, "fixturenames", ()):
        jobs = FIXTURES.get(fixture, ())
        found.extend((jobs,) if isinstance(jobs, str) else jobs)
    return found


def _module(item) -> str:
    return getattr(getattr(item, "module", None), "__name__", item.nodeid.split("::")[0])


def order_items(items: list) -> list[str]:
    """Move every module that needs a heavy job after the others, in the order the workers will
    finish their jobs (tests keep their order within a module); returns the jobs to queue."""
    heavy_modules = {_module(item) for item in items if jobs_for(item)}
    light = [i for i in items if _module(i) not in heavy_modules]
    heavy = [i for i in items if _module(i) in heavy_modules]
    names: list[str] = []
    for item in heavy:
        for name in jobs_for(item):
            if name not in names:
                names.append(name)
    closure: list[str] = []

    def add(name: str) -> None:
        if name not in closure:
            for dep in JOBS[name][1]:
                add(dep)
            closure.append(name)

    for name in names:
        add(name)
    path = critical_path(closure)
    rank = {n: i for i, n in enumerate(sorted(closure, key=lambda n: -path[n]))}
    ready_at: dict[str, int] = {}  # a module can run through once the last of its jobs is done
    for item in heavy:
        ready_at[_module(item)] = max([ready_at.get(_module(item), -1), *(rank[j] for j in jobs_for(item))])
    heavy.sort(key=lambda i: ready_at[_module(i)])  # stable: a module's tests keep their order
    items[:] = light + heavy
    return names
