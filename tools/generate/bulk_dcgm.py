"""A synthetic DCGM sample series in the `dcgm_csv` format (seeded, reproducible), for speed runs.

    python -m tools.generate dcgm --gpus 64 --days 31 --out /tmp/dcgm_month.csv

N GPUs (8 per host, H100 80GB) x D days at 1-minute samples, columns as `usage.DCGM_COLUMNS`.
Utilisation follows per-GPU busy/idle blocks, power follows utilisation, the energy counter
integrates power, and busy blocks carry a Kubernetes pod and an HPC job id. Written by DuckDB
(`range` and `hash` seeded by `seed`, no random()) so even ~3M rows take a few seconds. Unlike
the fleet generator (`usage.py`), the series is not tied to any billing or Slurm file.
"""

from __future__ import annotations

from pathlib import Path

from tools.generate.common import copy_query


def generate(out: Path, gpus: int = 64, days: int = 31, seed: int = 42, start: str = "2026-01-01") -> int:
    """Write the CSV and return the number of data rows."""
    minutes = days * 24 * 60
    # Busy/idle is decided per (GPU, 2-hour block) from a hash, so it is deterministic and cheap.
    copy_query(f"""
          with g as (select range as g from range({gpus})),
          t as (select range as m from range({minutes})),
          s as (
            select g.g, t.m,
                   (hash(g.g * 100003 + t.m // 120 + {seed}) % 100) < 60 as busy,
                   (hash(g.g * 7919 + t.m + {seed}) % 1000) / 1000.0 as jitter,
                   t.m // 120 as block
            from g cross join t
          ),
          v as (
            select *,
              case when busy then 55 + 45 * jitter else 2 * jitter end as util
            from s
          )
          select
            strftime(timestamp '{start}' + to_minutes(m), '%Y-%m-%dT%H:%M:%SZ') as "timestamp",
            'gpu-node-' || lpad((g // 8)::varchar, 3, '0') as hostname,
            (g % 8) as gpu,
            'GPU-' || lpad(printf('%x', g), 8, '0') || '-0000-4000-8000-' || lpad(printf('%x', g), 12, '0') as uuid,
            'NVIDIA H100 80GB HBM3' as modelName,
            '' as GPU_I_PROFILE, '' as GPU_I_ID,
            case when busy then 'team-' || (hash(g * 31 + block) % 6)::varchar else '' end as namespace,
            case when busy then 'train-' || (g * 1000 + block)::varchar else '' end as pod,
            case when busy then 'main' else '' end as container,
            case when busy then (100000 + g * 1000 + block)::varchar else '' end as job_id,
            round(util)::int as DCGM_FI_DEV_GPU_UTIL,
            round(util / 100.0 * 0.95, 6) as DCGM_FI_PROF_GR_ENGINE_ACTIVE,
            round(util / 100.0 * 0.85, 6) as DCGM_FI_PROF_SM_ACTIVE,
            case when busy then 60000 + (jitter * 20000)::int else 520 end as DCGM_FI_DEV_FB_USED,
            81559 - case when busy then 60000 + (jitter * 20000)::int else 520 end as DCGM_FI_DEV_FB_FREE,
            round(70 + util * 6.3, 3) as DCGM_FI_DEV_POWER_USAGE,
            -- counter in mJ: integral of power at 60 s per sample (approximated by mean power)
            (m * 60 * 1000 * (70 + 0.6 * 100 * 6.3 * 0.6))::bigint + g * 1000000 as DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION,
            (30 + util * 0.4)::int as DCGM_FI_DEV_GPU_TEMP
          from v
          order by m, g
        """, out, "header, delimiter ','")
    return gpus * minutes
