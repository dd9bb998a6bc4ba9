"""One row per sample in `stg_usage__gpu_samples` on the bundled samples' ledger.

The view no longer dedupes with a window (its SQL says why: the parsers drop in-file repeats,
rows without a time included, and a file's rows are replaced as a unit). This checks the result on
the session's refresh of every bundled sample, whose usage files include DCGM scrapes without
timestamps (sampled_at NULL) and nvidia-smi captures; tests/sources/test_gpu_samples_unique.py has
the hand-made repeats.
"""

from __future__ import annotations

import duckdb

# The former dedupe's partition (the raw columns; the view trims host, namespace, pod, container).
KEY = "_file_hash, sampled_at, host, gpu_index, gpu_uuid, mig_instance_id, namespace, pod, container"


def test_no_sample_twice_in_staging_or_raw(sample_run: dict) -> None:
    assert sample_run["ok"], sample_run["reason"]
    con = duckdb.connect(str(sample_run["home"] / "ledger.duckdb"), read_only=True)
    try:
        raw_rows, untimed = con.execute(
            "select count(*), count(*) filter (where sampled_at is null) from raw.gpu_samples "
            "where gpu_uuid is not null").fetchone()
        repeats = con.execute(
            f"select count(*) from (select {KEY} from raw.gpu_samples where gpu_uuid is not null "
            "group by all having count(*) > 1)").fetchone()[0]
        view_rows, view_repeats = con.execute(
            "select (select count(*) from staging.stg_usage__gpu_samples), count(*) from ("
            "select x_file_hash, sampled_at, host, gpu_index, gpu_uuid, mig_instance_id, namespace, pod, container "
            "from staging.stg_usage__gpu_samples group by all having count(*) > 1)").fetchone()
    finally:
        con.close()
    assert raw_rows > 1000 and untimed > 0  # the check has samples with and without a time to look at
    assert repeats == 0
    assert view_rows == raw_rows and view_repeats == 0
