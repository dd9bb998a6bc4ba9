"""Detection figures of the anomaly model on generated series.

Runs the real dbt SQL of dbt/models/intermediate/anomalies/int_anomaly_daily_scored.sql (refs and the
money macro substituted, default policy) in DuckDB over generated daily cost series:

- steady: a level (50-5000) with multiplicative noise (cv 3-15 %), nothing injected
- spike / drop: one day x 1.5-4 (spike) or x 0.0-0.6 (drop); below x 1.5 / above x 0.5 the policy's
  min_pct (0.5) says it is no anomaly, so those near the edge are expected misses
- level shift: from one day on, x 1.5-3 (up) or x 0.3-0.6 (down)

An injected event counts as detected when a day within [event day, event day + 2] is flagged in its
direction ('clear': events of x >= 2 or x <= 0.4, well past the policy's min_pct). A flag on any other day (for a level shift: outside [shift day, shift day + 14), while the
trailing median catches up) is a false alarm, counted per 1,000 scored series-days.

    .venv/bin/python perf/bench_anomalies.py [--series 1200] [--days 60] [--seed 21]
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "dbt" / "models" / "intermediate" / "anomalies" / "int_anomaly_daily_scored.sql"
KINDS = ("steady", "spike", "drop", "shift_up", "shift_down")


def scored_sql() -> str:
    sql = MODEL.read_text()
    sql = re.sub(r"\{\{\s*ref\('(\w+)'\)\s*\}\}", r"\1", sql)
    sql = re.sub(r"\{\{\s*money\('(.*?)'\)\s*\}\}", r"cast(\1 as decimal(38, 12))", sql, flags=re.DOTALL)
    assert "{{" not in sql and "{%" not in sql, sql
    return sql


def generate(n_series: int, n_days: int, rng: random.Random) -> tuple[list[tuple], dict]:
    rows, events = [], {}
    for i in range(n_series):
        kind = KINDS[i % len(KINDS)]
        level, cv = rng.uniform(50, 5000), rng.uniform(0.03, 0.15)
        event_day = rng.randint(21, n_days - 5)
        factor = {"spike": rng.uniform(1.5, 4), "drop": rng.uniform(0.0, 0.6), "shift_up": rng.uniform(1.5, 3),
                  "shift_down": rng.uniform(0.3, 0.6)}.get(kind, 1.0)
        for d in range(n_days):
            value = level * max(0.0, rng.gauss(1.0, cv))
            if (kind in ("spike", "drop") and d == event_day) or (kind.startswith("shift") and d >= event_day):
                value *= factor
            rows.append((f"s{i}", d, round(value, 2)))
        events[f"s{i}"] = (kind, event_day, factor)
    return rows, events


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--series", type=int, default=1200)
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--seed", type=int, default=21)
    args = parser.parse_args()
    rows, events = generate(args.series, args.days, random.Random(args.seed))

    con = duckdb.connect()
    con.execute("create table raw (series string, d integer, actual decimal(38, 12))")
    con.executemany("insert into raw values (?, ?, ?)", rows)
    con.execute("""create table int_anomaly_daily_series as
                   select 'bench' as dimension, series as dimension_value, 'USD' as currency,
                          date '2025-01-01' + d as day, actual from raw""")
    con.execute("""create table int_anomaly_policy as select 7 as min_history_days, 28 as window_days,
                   cast(10 as decimal(38, 12)) as min_abs_impact, 0.5 as min_pct, 4.0 as k, 0.05 as mad_floor_pct,
                   cast(0 as decimal(38, 12)) as min_unit_cost_impact""")
    flags = con.execute(f"""select dimension_value, cast(day - date '2025-01-01' as integer), impact_abs > 0, has_history
                            from ({scored_sql()}) where has_history""").fetchall()

    detected: dict[str, bool] = {}
    false_alarms, scored_days = {k: 0 for k in KINDS}, {k: 0 for k in KINDS}
    for series, _day, _up, _ in flags:
        scored_days[events[series][0]] += 1
    anomalies = con.execute(f"""select dimension_value, cast(day - date '2025-01-01' as integer), impact_abs > 0
                                from ({scored_sql()}) where is_anomaly""").fetchall()
    for series, day, up in anomalies:
        kind, event_day, _factor = events[series]
        expected_up = kind in ("spike", "shift_up")
        in_event = (kind in ("spike", "drop") and event_day <= day <= event_day + 2) or \
                   (kind.startswith("shift") and event_day <= day < event_day + 14)
        if kind != "steady" and in_event and up == expected_up:
            if day <= event_day + 2:
                detected[series] = True
        elif not in_event:
            false_alarms[kind] += 1

    print(f"{args.series} series x {args.days} days, default policy (min_history_days 7, window 28, k 4, "
          f"min_abs_impact 10, min_pct 0.5)")
    print(f"{'kind':<11} {'series':>6} {'recall':>7} {'clear':>7} {'false alarms':>13} {'per 1,000 series-days':>22}")
    total_fa = total_days = 0
    for kind in KINDS:
        n = sum(1 for k, *_ in events.values() if k == kind)
        hit = sum(1 for s, (k, *_) in events.items() if k == kind and detected.get(s))
        recall = "-" if kind == "steady" else f"{hit / n:.1%}"
        clear_set = [s for s, (k, _, f) in events.items() if k == kind and (f >= 2 or f <= 0.4)]
        clear = "-" if not clear_set else f"{sum(1 for s in clear_set if detected.get(s)) / len(clear_set):.1%}"
        rate = 1000 * false_alarms[kind] / max(scored_days[kind], 1)
        total_fa += false_alarms[kind]
        total_days += scored_days[kind]
        print(f"{kind:<11} {n:>6} {recall:>7} {clear:>7} {false_alarms[kind]:>13} {rate:>22.2f}")
    injected = [s for s, (k, *_) in events.items() if k != "steady"]
    clear_all = [s for s, (k, _, f) in events.items() if k != "steady" and (f >= 2 or f <= 0.4)]
    print(f"{'all':<11} {len(events):>6} {sum(1 for s in injected if detected.get(s)) / len(injected):>7.1%} "
          f"{sum(1 for s in clear_all if detected.get(s)) / len(clear_all):>7.1%} {total_fa:>13} {1000 * total_fa / max(total_days, 1):>22.2f}")


if __name__ == "__main__":
    main()
