"""MLPerf Training result logs (MLLOG): time to train, system and accelerators, and broken logs."""

from __future__ import annotations

from pathlib import Path

from sources.benchmarks import mlperf_training
from sources.catalog import recognise

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "inputs" / "benchmarks"
H100 = SAMPLES / "mlperf_training_v4.0_NVIDIA_eos_ngc24.04_nemo_llama2_70b_lora_result_0.txt"


def test_real_log_gives_minutes_to_train_and_the_system() -> None:
    assert recognise(H100, "benchmarks").name == "mlperf_training_log"
    out = mlperf_training.parse(H100)
    assert out.rejects == []
    (row,) = out.tables["benchmark_runs"].to_pylist()
    # run_start time_ms 1714897740668, run_stop 1714899369711 (status success):
    # (1714899369711 - 1714897740668) / 1000 = 1629.043 s = 27.1507 min
    assert row["duration_s"] == 1629.043 and row["result_value"] == 27.1507
    assert row["result_unit"] == "minutes to train" and row["scenario"] == "Training"
    assert row["model_id"] == "llama2_70b_lora" and row["completed"] == 1
    # SYSJSON: 8 accelerators per node x 1 node
    assert row["gpu_model"] == "NVIDIA H100-SXM5-80GB" and row["gpu_count"] == 8


def test_log_without_run_stop_is_rejected_and_bad_lines_warned(tmp_path: Path) -> None:
    lines = H100.read_text().splitlines()
    cut = [ln for ln in lines if '"run_stop"' not in ln]
    cut.insert(5, ':::MLLOG {"key": "seed", broken')
    p = tmp_path / "result_0.txt"
    p.write_text("\n".join(cut) + "\n")
    out = mlperf_training.parse(p)
    assert out.tables["benchmark_runs"].num_rows == 0
    assert [r.rule for r in out.rejects] == ["missing_timing"] and "run_stop" in out.rejects[0].message
    assert any(w.startswith("line 6:") for w in out.warnings)


def test_aborted_run_did_not_reach_the_target(tmp_path: Path) -> None:
    p = tmp_path / "result_1.txt"
    p.write_text(H100.read_text().replace('"status": "success"', '"status": "aborted"'))
    (row,) = mlperf_training.parse(p).tables["benchmark_runs"].to_pylist()
    assert row["completed"] == 0 and row["failed"] == 1
