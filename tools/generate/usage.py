"""GPU usage: DCGM 1-minute series (`dcgm_csv`, one file per day) and Slurm sacct dumps.

Both come from the fleet's job schedule. Each GPU's up-time is cut into busy intervals (a
Slurm job holds the GPU) and idle intervals; DuckDB expands the intervals to one row per GPU
and minute (`range(start, end)`), with hash-based jitter (deterministic: no random()) and an
energy counter that integrates the interval's mean power. Nothing is sampled while a spot
instance is reclaimed. sacct dumps: `|`-delimited with a header, one file per day of job end,
job lines plus `.batch`/`.extern` step lines carrying gres/gpuutil and gres/gpumem.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path

import duckdb
import pyarrow as pa

from tools.generate.common import copy_sql, sha1_guid
from tools.generate.fleet import MIN_PER_DAY, Fleet, up_segments

DCGM_COLUMNS = (
    "timestamp", "hostname", "gpu", "uuid", "modelName", "GPU_I_PROFILE", "GPU_I_ID", "namespace", "pod",
    "container", "job_id", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE",
    "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_GPU_TEMP",
)
SACCT_COLUMNS = (
    "JobID", "JobName", "User", "Account", "Partition", "NodeList", "NNodes", "NCPUs", "State", "Submit",
    "Start", "End", "Elapsed", "Timelimit", "AllocTRES", "TRESUsageInMax", "ExitCode", "Comment",
)


def gpu_uuid(host: str, index: int) -> str:
    return "GPU-" + sha1_guid(f"{host}/{index}")


def intervals(fleet: Fleet) -> pa.Table:
    """One row per (GPU, busy-or-idle interval) covering each GPU's up-time exactly."""
    by_gpu: dict[tuple[int, int], list] = {}
    for job in fleet.jobs:
        for g in job.gpu_indices:
            by_gpu.setdefault((job.node, g), []).append(job)
    cols: dict[str, list] = {k: [] for k in (
        "node", "host", "gpu", "uuid", "model", "fb_total", "idle_w", "max_w", "start", "end", "job_id",
        "namespace", "pod", "level", "fb_used", "energy0", "mean_w")}
    for node in fleet.nodes:
        nt = node.type
        segs = up_segments(node, fleet.minutes)
        for g in range(nt.gpus):
            uid = gpu_uuid(node.name, g)
            energy = int(hashlib.sha1(uid.encode()).hexdigest()[:8], 16) * 1000  # counter since boot, mJ
            jobs = sorted(by_gpu.get((node.idx, g), []), key=lambda j: j.start)
            pieces: list[tuple[int, int, object]] = []
            for s, e in segs:
                cur = s
                for j in jobs:
                    if j.end <= s or j.start >= e:
                        continue
                    if j.start > cur:
                        pieces.append((cur, j.start, None))
                    pieces.append((max(j.start, s), min(j.end, e), j))
                    cur = min(j.end, e)
                if cur < e:
                    pieces.append((cur, e, None))
            for s, e, j in pieces:
                if e <= s:
                    continue
                level = j.util if j is not None else 0
                mean_w = nt.idle_w + (nt.max_w - nt.idle_w) * level / 100.0
                fb_used = int(nt.fb_total_mib * (0.55 + 0.4 * level / 100.0)) if j is not None else 4
                cols["node"].append(node.idx)
                cols["host"].append(node.name)
                cols["gpu"].append(g)
                cols["uuid"].append(uid)
                cols["model"].append(nt.dcgm_model)
                cols["fb_total"].append(nt.fb_total_mib)
                cols["idle_w"].append(nt.idle_w)
                cols["max_w"].append(nt.max_w)
                cols["start"].append(s)
                cols["end"].append(e)
                cols["job_id"].append(str(j.job_id) if j is not None else None)
                cols["namespace"].append(j.team if j is not None else None)
                cols["pod"].append(f"{j.workload}-{j.job_id}" if j is not None else None)
                cols["level"].append(level)
                cols["fb_used"].append(fb_used)
                cols["energy0"].append(energy)
                cols["mean_w"].append(mean_w)
                energy += int(mean_w * (e - s) * 60 * 1000)
    return pa.table(cols)


def dcgm_day_sql(fleet: Fleet, day: int) -> str:
    d0, d1 = day * MIN_PER_DAY, (day + 1) * MIN_PER_DAY
    seed = fleet.seed
    return f"""
    select timestamp '{fleet.start.isoformat()} 00:00:00' + to_minutes(m) as "timestamp",
           host as hostname, gpu, uuid, model as modelName,
           null as GPU_I_PROFILE, null as GPU_I_ID, namespace, pod,
           case when job_id is not null then 'main' end as container, job_id,
           u as DCGM_FI_DEV_GPU_UTIL,
           round(u * 0.0097, 4) as DCGM_FI_PROF_GR_ENGINE_ACTIVE,
           round(u * 0.0085, 4) as DCGM_FI_PROF_SM_ACTIVE,
           fb_used as DCGM_FI_DEV_FB_USED, fb_total - fb_used as DCGM_FI_DEV_FB_FREE,
           round(idle_w + (max_w - idle_w) * u / 100.0 + (cast(hash(m, gpu, node, {seed} + 1) % 50 as integer) - 25) / 10.0, 3)
               as DCGM_FI_DEV_POWER_USAGE,
           energy0 + cast((m - "start") * 60000 * mean_w as bigint) as DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION,
           cast(31 + u * 0.45 + cast(hash(m, node, {seed}) % 3 as integer) as integer) as DCGM_FI_DEV_GPU_TEMP
    from (
        select *,
               case when job_id is null then cast(hash(m, gpu, node, {seed}) % 3 as integer)
                    else greatest(0, least(100, level + cast(hash(m, gpu, node, {seed}) % 17 as integer) - 8))
               end as u
        from (
            select i.*, unnest(range(greatest(i."start", {d0}), least(i."end", {d1}))) as m
            from ivals i
            where i."start" < {d1} and i."end" > {d0}
        )
    )
    order by m, node, gpu
    """


def write_dcgm(fleet: Fleet, out: Path, threads: int | None = None) -> dict[str, int]:
    """usage/dcgm_<date>.csv per day; returns rows per file."""
    out.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    try:
        con.execute("set enable_progress_bar = false")
        if threads:
            con.execute(f"set threads = {int(threads)}")
        con.register("ivals_arrow", intervals(fleet))
        con.execute("create table ivals as select * from ivals_arrow")
        counts = {}
        for d in range(fleet.days):
            day = fleet.start + timedelta(days=d)
            path = out / f"dcgm_{day.isoformat()}.csv"
            con.execute(copy_sql(dcgm_day_sql(fleet, d), path,
                                 "format csv, header true, timestampformat '%Y-%m-%dT%H:%M:%SZ'"))
            counts[path.name] = con.execute(
                f"select coalesce(sum(least(\"end\", {(d + 1) * MIN_PER_DAY}) - greatest(\"start\", {d * MIN_PER_DAY})), 0) "
                f"from ivals where \"start\" < {(d + 1) * MIN_PER_DAY} and \"end\" > {d * MIN_PER_DAY}").fetchone()[0]
        return counts
    finally:
        con.close()


def _dur(minutes: int) -> str:
    s = minutes * 60
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return (f"{d}-" if d else "") + f"{h:02d}:{m:02d}:{s:02d}"


def write_sacct(fleet: Fleet, out: Path) -> dict[str, int]:
    """usage/sacct_<date>.txt per day of job end (header, `|`); returns jobs per file."""
    out.mkdir(parents=True, exist_ok=True)
    fmt = "%Y-%m-%dT%H:%M:%S"
    per_day: dict[int, list[str]] = {}
    nodes = fleet.nodes
    for j in sorted(fleet.jobs, key=lambda j: j.job_id):
        node = nodes[j.node]
        nt = node.type
        gtype = nt.gpu_class.lower()
        cpus = 12 * j.gpus
        mem = 120 * j.gpus
        alloc = f"billing={cpus},cpu={cpus},gres/gpu:{gtype}={j.gpus},gres/gpu={j.gpus},mem={mem}G,node=1"
        state = {"CANCELLED": f"CANCELLED by {1000 + fleet.teams.index(j.team)}"}.get(j.state, j.state)
        limit = _dur(max(60, ((j.end - j.start) // 60 + 2) * 60)) if j.state != "TIMEOUT" else _dur(j.end - j.start)
        base = [
            str(j.job_id), f"{j.workload}", j.user, j.team, gtype, node.name, "1", str(cpus), state,
            fleet.t(j.submit).strftime(fmt), fleet.t(j.start).strftime(fmt), fleet.t(j.end).strftime(fmt),
            _dur(j.end - j.start), limit, alloc, "", j.exit_code, f"workload={j.workload}",
        ]
        gpumem = int(nt.fb_total_mib * (0.55 + 0.4 * j.util / 100.0))
        usage = f"cpu=00:{j.util % 60:02d}:00,gres/gpumem={gpumem}M,gres/gpuutil={j.util},mem={mem // 2}G"
        batch = [f"{j.job_id}.batch", "batch", "", j.team, "", node.name, "1", str(cpus), base[8].split(" ")[0],
                 base[9], base[10], base[11], base[12], "", alloc, usage, j.exit_code, ""]
        extern = [f"{j.job_id}.extern", "extern", "", j.team, "", node.name, "1", str(cpus), "COMPLETED",
                  base[9], base[10], base[11], base[12], "", alloc, "cpu=00:00:00,mem=0", "0:0", ""]
        day = min((j.end - 1) // MIN_PER_DAY, fleet.days - 1)
        per_day.setdefault(day, []).extend("|".join(r) for r in (base, batch, extern))
    counts = {}
    for d in range(fleet.days):
        path = out / f"sacct_{(fleet.start + timedelta(days=d)).isoformat()}.txt"
        lines = per_day.get(d, [])
        path.write_text("|".join(SACCT_COLUMNS) + "\n" + "".join(line + "\n" for line in lines), encoding="utf-8")
        counts[path.name] = len(lines) // 3
    return counts
