"""Slurm `sacct --parsable` dumps -> raw.gpu_jobs (one row per job; steps folded in).

Read with DuckDB (all text), typed in SQL. Handles:
- any delimiter among `|`, `☃` (U+2603), `,`, tab (the one that splits the first line most);
- header or no header (no header: the 37-column order of NO_HEADER_COLUMNS, the hb-jobinfo
  `sacct` field list) and a trailing delimiter;
- durations `D-HH:MM:SS`, `HH:MM:SS`, `MM:SS.mmm`; `Unknown`/`None` times -> NULL;
- `State` = `CANCELLED by <uid>` -> CANCELLED (raw text kept in state_raw);
- AllocTRES with typed and untyped gres (`gres/gpu:v100=1,gres/gpu=1`): the untyped total is the
  count, the type comes from the typed key(s), never summed twice;
- MIG devices: a typed name ending in a MIG profile (`gres/gpu:nvidia_h100_80gb_hbm3_3g.40gb=1`) sets
  mig_profile (`3g.40gb`); a job holding two profiles gets the one with most devices, and a warning;
- steps (`123.batch`, `123.extern`, `123.0`) folded into job `123`: gpuutil / gpumem are taken
  from the steps' TRESUsageInMax (max over steps) when the job row has none;
- array tasks `5908801_3` (array_job_id `5908801`).
Local times are converted with DEFAULT_SLURM_TZ (UTC until the site registry configures the
cluster's zone; Hábrók is Europe/Amsterdam): `parse_sacct(path, tz=...)`.
A job whose End is before its Start is rejected (period_reversed); so is a line with values but no JobID, and a
job that ran (Elapsed > 0) without a Start, which no hour could hold (missing_value).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text
from sources.usage._shared import MIG_PROFILE_PATTERN

FORMAT_NAME = "slurm_sacct"
DEFAULT_SLURM_TZ = "UTC"
DELIMITERS = ("|", "\u2603", "\t", ",")
NO_HEADER_COLUMNS = (
    "JobID", "JobName", "User", "Partition", "NodeList", "NNodes", "NCPUs", "NTasks", "State",
    "Submit", "Start", "End", "Timelimit", "Elapsed", "TotalCPU", "CPUTime", "UserCPU", "SystemCPU",
    "ReqMem", "MaxRSS", "MaxVMSize", "ReqTRES", "AllocTRES", "TRESUsageInMax", "TRESUsageInTot",
    "TRESUsageOutTot", "MaxDiskRead", "MaxDiskWrite", "MaxRSSNode", "MaxRSSTask", "MaxVMSizeNode",
    "MaxVMSizeTask", "MaxDiskReadNode", "MaxDiskReadTask", "MaxDiskWriteNode", "MaxDiskWriteTask", "Comment",
)
# Normalised states; first word of State, sacct may truncate names ("OUT_OF_ME+").
STATE_MAP = {
    "COMPLETED": "COMPLETED", "FAILED": "FAILED", "CANCELLED": "CANCELLED", "TIMEOUT": "TIMEOUT",
    "NODE_FAIL": "NODE_FAIL", "PREEMPTED": "PREEMPTED", "OUT_OF_MEMORY": "OUT_OF_MEMORY",
    "OUT_OF_ME+": "OUT_OF_MEMORY", "RUNNING": "RUNNING", "PENDING": "PENDING",
    "BOOT_FAIL": "NODE_FAIL", "DEADLINE": "TIMEOUT", "REQUEUED": "PENDING", "SUSPENDED": "RUNNING",
    "RESIZING": "RUNNING", "REVOKED": "CANCELLED", "SPECIAL_EXIT": "FAILED", "COMPLETING": "RUNNING",
}
_JOBID_RE = r"^[0-9]+(_([0-9]+|\[[^]]*\]))?(\+[0-9]+)?(\.[A-Za-z0-9_]+)?$"


def _split_first_line(head: bytes) -> tuple[str, list[str]] | None:
    lines = head_text(head).splitlines()
    if not lines:
        return None
    first = lines[0]
    delim = max(DELIMITERS, key=first.count)
    if first.count(delim) < 5:
        return None
    return delim, first.split(delim)


def _has_header(fields: list[str]) -> bool:
    return any(f.strip().lower() == "jobid" for f in fields)


def detect(path: Path, head: bytes) -> bool:
    """sacct parsable output: a header with JobID and State/AllocTRES, or headerless rows whose
    first field is a job id and whose 9th/10th fields look like a state and a timestamp."""
    split = _split_first_line(head)
    if split is None:
        return False
    _, fields = split
    names = {f.strip().lower() for f in fields}
    if "jobid" in names:
        return bool(names & {"state", "alloctres", "elapsed"})
    import re

    return (
        len(fields) >= len(NO_HEADER_COLUMNS)
        and re.match(_JOBID_RE, fields[0].strip()) is not None
        and fields[8].split(" ")[0].rstrip("+") in {k.rstrip("+") for k in STATE_MAP}
        and re.match(r"^\d{4}-\d\d-\d\dT", fields[9]) is not None
    )


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _dur(col: str) -> str:
    """SQL seconds for a Slurm duration: [D-]HH:MM:SS, MM:SS(.mmm); anything else NULL."""
    p = r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$"
    return (
        f"case when regexp_matches({col}, '{p}') then "
        f"coalesce(try_cast(nullif(regexp_extract({col}, '{p}', 1), '') as double), 0) * 86400 + "
        f"coalesce(try_cast(nullif(regexp_extract({col}, '{p}', 2), '') as double), 0) * 3600 + "
        f"cast(regexp_extract({col}, '{p}', 3) as double) * 60 + "
        f"cast(regexp_extract({col}, '{p}', 4) as double) end"
    )


def _ts(col: str, tz: str) -> str:
    """SQL naive UTC timestamp from Slurm local time text (Unknown/None/empty -> NULL)."""
    local = f"try_strptime({col}, '%Y-%m-%dT%H:%M:%S')"
    if tz == "UTC":
        return local
    return f"timezone('UTC', timezone({_lit(tz)}, {local}))"


def _tres_num(col: str, key: str) -> str:
    """SQL number for `key=<n>` in a TRES string (key is a regex fragment)."""
    return f"try_cast(nullif(regexp_extract({col}, '(?:^|,){key}=([0-9.]+)', 1), '') as double)"


def _tres_mib(col: str, key: str) -> str:
    """SQL MiB for `key=<n>[KMGTP]` (sacct memory units, base 1024; bare number = bytes)."""
    pat = f"(?:^|,){key}=([0-9.]+)([KMGTP]?)"
    num = f"try_cast(nullif(regexp_extract({col}, '{pat}', 1), '') as double)"
    unit = f"regexp_extract({col}, '{pat}', 2)"
    return (
        f"{num} * case {unit} when 'K' then 1.0/1024 when 'M' then 1 when 'G' then 1024 "
        f"when 'T' then 1048576 when 'P' then 1073741824 else 1.0/1048576 end"
    )


def parse_sacct(path: Path, tz: str = DEFAULT_SLURM_TZ) -> ParseOutput:
    """Parse an sacct dump; `tz` is the cluster's local time zone (IANA name)."""
    with open(path, "rb") as fh:
        split = _split_first_line(fh.read(65536))
    if split is None:
        raise UnreadableFile(path, 1, "no sacct delimiter (|, ☃, tab, comma) found on the first line")
    delim, first = split
    header = _has_header(first)
    names = [f.strip() for f in first] if header else list(NO_HEADER_COLUMNS)
    if not header and len(first) < len(names):
        raise UnreadableFile(path, 1, f"headerless sacct dump with {len(first)} fields, expected {len(names)}")
    # A trailing delimiter adds one empty field per line.
    while len(names) < len(first):
        names.append(f"_extra{len(names)}")
    names = [n if n else f"_extra{i}" for i, n in enumerate(names)]
    col_spec = "{" + ", ".join(f"{_lit(n)}: 'VARCHAR'" for n in names) + "}"

    con = duckdb.connect()
    con.execute("set enable_progress_bar = false")
    try:
        con.execute(
            f"""create temp table _raw as select *, ordinality + {1 if header else 0} as _line
            from read_csv({_lit(str(path))}, header = false, skip = {1 if header else 0}, delim = {_lit(delim)},
                quote = '', escape = '', columns = {col_spec}, auto_detect = false, null_padding = true,
                ignore_errors = true, store_rejects = true) with ordinality"""
        )
        bad = con.execute("select line, error_message, csv_line from reject_errors").fetchall()
    except duckdb.Error as exc:
        raise UnreadableFile(path, None, f"cannot read sacct dump: {exc}") from exc
    rejects = [Reject(int(n), "wrong_field_count", str(m)[:200], None, (r or "")[:200]) for n, m, r in bad]

    have = {n.lower(): n for n in names}

    def col(name: str) -> str:
        return f'nullif(trim("{have[name.lower()]}"), \'\')' if name.lower() in have else "cast(null as varchar)"

    jobid = col("JobID")
    state_map = "map {" + ", ".join(f"{_lit(k)}: {_lit(v)}" for k, v in STATE_MAP.items()) + "}"
    con.execute(
        f"""create temp view _rows as select _line,
            {jobid} as jobid_full,
            regexp_extract({jobid}, '^([^.]+)', 1) as job_key,
            contains({jobid}, '.') as is_step,
            {col('TRESUsageInMax')} as umax, {col('TRESUsageInTot')} as utot,
            {col('AllocTRES')} as alloc, {col('State')} as state_raw,
            {col('Start')} as start_raw, {col('End')} as end_raw, {col('Submit')} as submit_raw,
            * exclude (_line)
        from _raw where {jobid} is not null"""
    )
    bad_ids = con.execute(
        f"select _line, jobid_full from _rows where not regexp_matches(jobid_full, {_lit(_JOBID_RE)})"
    ).fetchall()
    rejects += [Reject(int(n), "invalid_job_id", "JobID is not a Slurm job id", "JobID", v) for n, v in bad_ids]
    # A line with values but no JobID cannot be a job or be folded into one: rejected with its line, never
    # dropped unseen (a line with no value at all is a blank line, not a record).
    no_ids = con.execute(
        f"select _line from _raw where {jobid} is null and trim(concat_ws('', *columns(* exclude (_line, ordinality)))) <> ''"
    ).fetchall()
    rejects += [Reject(int(n), "missing_value", "JobID is empty", "JobID", None) for (n,) in no_ids]

    con.execute(
        f"""create temp view _steps as
        select job_key,
               max(coalesce({_tres_num('umax', 'gres/gpuutil')}, {_tres_num('utot', 'gres/gpuutil')})) as util,
               max(coalesce({_tres_mib('umax', 'gres/gpumem')}, {_tres_mib('utot', 'gres/gpumem')})) as gmem,
               count(*) as n_steps
        from _rows where is_step group by job_key"""
    )
    typed = "regexp_extract_all(alloc, '(?:^|,)gres/gpu:([^=,]+)=', 1)"
    typed_sum = (
        "list_sum(list_transform(regexp_extract_all(alloc, '(?:^|,)gres/gpu:[^=,]+=([0-9.]+)', 1), x -> cast(x as double)))"
    )
    con.execute(
        f"""create temp table _jobs as
        with j as (
          select r._line, r.jobid_full as job_id,
            case when contains(r.job_key, '_') then split_part(r.job_key, '_', 1) end as array_job_id,
            {col('JobName')} as job_name, {col('User')} as user_name, {col('Account')} as account,
            {col('Partition')} as partition, {col('Comment')} as comment, {col('Cluster')} as cluster,
            r.state_raw,
            {state_map}[split_part(r.state_raw, ' ', 1)] as state,
            {_ts('r.submit_raw', tz)} as submitted_at, {_ts('r.start_raw', tz)} as started_at,
            {_ts('r.end_raw', tz)} as ended_at,
            r.submit_raw, r.start_raw, r.end_raw, r.alloc,
            {_dur(col('Elapsed'))} as elapsed_raw_s,
            coalesce({_tres_num('r.alloc', 'gres/gpu')}, nullif({typed_sum}, 0),
                     case when r.alloc is not null then 0 end) as gpu_count,
            nullif(array_to_string(list_sort(list_distinct({typed})), ','), '') as gpu_type,
            coalesce({_tres_num('r.umax', 'gres/gpuutil')}, s.util) as gpu_util_pct,
            coalesce({_tres_mib('r.umax', 'gres/gpumem')}, s.gmem) as gpu_mem_max_mib,
            try_cast({col('NCPUs')} as double) as n_cpus,
            case when {col('NodeList')} in ('None assigned', '(null)') then null else {col('NodeList')} end as node_list,
            try_cast({col('NNodes')} as bigint) as n_nodes,
            {col('ExitCode')} as exit_code
          from _rows r left join _steps s using (job_key)
          where not r.is_step
        )
        select *, coalesce(elapsed_raw_s, epoch(ended_at - started_at)) as elapsed_s from j"""
    )
    _mig_profiles(con)
    checks = con.execute(
        """select _line, job_id, submit_raw, start_raw, end_raw, started_at, ended_at, submitted_at, state_raw, state,
            elapsed_s from _jobs"""
    ).fetchall()
    bad_lines: set[int] = set()
    unknown_states: set[str] = set()
    no_state: list[str] = []
    for line, job_id, sub_raw, st_raw, en_raw, st, en, sub, state_raw, state, elapsed in checks:
        for raw, parsed, name in ((sub_raw, sub, "Submit"), (st_raw, st, "Start"), (en_raw, en, "End")):
            if raw is not None and parsed is None and raw not in ("Unknown", "None"):
                rejects.append(Reject(int(line), "invalid_timestamp", f"{name} is not a timestamp", name, raw))
                bad_lines.add(int(line))
        if st is None and elapsed and int(line) not in bad_lines:  # it ran, but from when: no hour could hold it
            rejects.append(Reject(int(line), "missing_value", f"job {job_id} ran {elapsed:g} s but has no Start",
                                  "Start", st_raw))
            bad_lines.add(int(line))
        if st is not None and en is not None and en < st:
            rejects.append(Reject(int(line), "period_reversed", f"job {job_id} ends before it starts", "End", en_raw))
            bad_lines.add(int(line))
        if state_raw and state is None:
            unknown_states.add(state_raw)
        elif not state_raw and int(line) not in bad_lines:
            no_state.append(str(job_id))
    bad_list = "[" + ",".join(str(n) for n in sorted(bad_lines)) + "]"
    table = con.execute(
        f"""select 'slurm' as scheduler, cluster, job_id, array_job_id, job_name, user_name, account, partition,
            cast(null as varchar) as namespace, cast(null as varchar) as pod, cast(null as varchar) as labels,
            comment, state, state_raw, submitted_at, started_at, ended_at, elapsed_s, gpu_count, gpu_type,
            m.mig_profile, gpu_count * elapsed_s / 3600.0 as gpu_hours, gpu_util_pct, gpu_mem_max_mib, n_cpus,
            node_list, n_nodes, exit_code, {_lit(FORMAT_NAME)} as source_format, _line::bigint as _source_line
        from _jobs left join (select _line, mig_profile from _mig) m using (_line)
        where not list_contains({bad_list}::bigint[], _line::bigint) order by _line"""
    ).to_arrow_table()

    warnings: list[str] = []
    n_lines, n_steps = con.execute("select count(*), count(*) filter (where is_step) from _rows").fetchone()
    warnings.append(f"{n_lines} sacct lines: {n_lines - n_steps} jobs, {n_steps} steps folded into their jobs")
    orphans = con.execute(
        "select count(*) from _steps s where not exists (select 1 from _rows r where not r.is_step and r.job_key = s.job_key)"
    ).fetchone()[0]
    if orphans:
        warnings.append(f"{orphans} job(s) present only as steps (job line missing): their steps were ignored")
    dups = con.execute("select count(*) - count(distinct job_id) from _jobs").fetchone()[0]
    if dups:
        warnings.append(f"{dups} job id(s) appear more than once (kept every line; later dumps may repeat jobs)")
    mixed = [r[0] for r in con.execute(
        f"select job_id from _mig where n_profiles > 1 and not list_contains({bad_list}::bigint[], _line::bigint) "
        "order by _line").fetchall()]
    if mixed:
        warnings.append(f"{len(mixed)} job(s) hold devices of more than one MIG profile; mig_profile is the one with "
                        f"most devices: {', '.join(mixed[:10])}")
    if unknown_states:
        warnings.append(f"unknown Slurm state(s), state left NULL: {', '.join(sorted(unknown_states))}")
    if no_state:  # neither failed nor completed: its GPU-hours count as compute, never as failure waste
        warnings.append(f"{len(no_state)} job(s) with an empty State, state left NULL: {', '.join(no_state[:10])}")
    gpu_part_no_gres = con.execute(
        "select count(*) from _jobs where gpu_count = 0 and (partition ilike '%gpu%' or node_list ilike '%gpu%')"
    ).fetchone()[0]
    if gpu_part_no_gres:
        warnings.append(
            f"{gpu_part_no_gres} job(s) on GPU partitions/nodes without gres/gpu in AllocTRES (gpu_count 0; "
            "older Slurm accounting did not track GPU TRES)"
        )
    if tz == "UTC":
        warnings.append("sacct times are cluster local time; converted with tz=UTC (DEFAULT_SLURM_TZ, no site zone configured)")
    return ParseOutput(tables={"gpu_jobs": table}, rejects=rejects, warnings=warnings)


def _mig_profiles(con: duckdb.DuckDBPyConnection) -> None:
    """Table `_mig`: per job line holding MIG devices, the profile with most devices (ties: the first by
    name, so a reload gives the same answer) and how many profiles it holds. The profile is read off the
    end of each typed gres name: Slurm names MIG devices `<gpu>_<profile>` (AutoDetect=nvml)."""
    con.execute(
        f"""create temp table _mig as
        with entries as (
          select _line, job_id, unnest(regexp_extract_all(alloc, '(?:^|,)gres/gpu:([^=,]+=[0-9.]+)', 1)) as entry
          from _jobs where alloc is not null
        ), profiles as (
          select _line, job_id,
            lower(nullif(regexp_extract(split_part(entry, '=', 1), {_lit(MIG_PROFILE_PATTERN)}, 1), '')) as profile,
            try_cast(split_part(entry, '=', 2) as double) as devices
          from entries
        ), per_profile as (
          select _line, job_id, profile, sum(devices) as devices from profiles where profile is not null group by all
        )
        select _line, job_id, profile as mig_profile, count(*) over (partition by _line) as n_profiles
        from per_profile
        qualify row_number() over (partition by _line order by devices desc, profile) = 1"""
    )


def parse(path: Path) -> ParseOutput:
    """FORMATS entry point: parse with the default Slurm time zone."""
    return parse_sacct(path, DEFAULT_SLURM_TZ)


FORMATS = [
    SourceFormat(
        name=FORMAT_NAME,
        family="usage",
        detect=detect,
        parse=parse,
        tables=("gpu_jobs",),
        description="Slurm sacct --parsable dump (any of | ☃ tab , delimiters; header optional; steps folded)",
    )
]
