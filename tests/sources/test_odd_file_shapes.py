"""Files of odd shape through the loader: mixed line ends keep their good rows (warehouse/line_endings.py);
a file with no data rows says so, whatever its format.

Mixed line ends: DuckDB's strict CSV reader stops on the whole file at a line end unlike the others ("state machine
reached an invalid state"): a CRLF export with an LF line appended, or CR CR LF on every line. The
loader then reads a copy whose line ends are uniform; the rows, line numbers and rejects are those of
the file as landed, and a warning says what was mixed.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import duckdb
import pytest

import warehouse.line_endings as line_endings
from tests.conftest import SAMPLES
from tests.sources.test_dcgm_batches import KEPT_LINES, REJECTS, _write
from warehouse.ingest import ingest_family
from warehouse.landing import land_inputs
from warehouse.line_endings import line_ends, uniform_copy

FOCUS = SAMPLES / "billing" / "focus_1.2_fleet_2025-04_constructed.csv"  # CRLF, 15 lines


def _ingest(root: Path, family: str, files: dict[str, bytes]) -> duckdb.DuckDBPyConnection:
    folder = root / "inputs" / family
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    land_inputs(root / "inputs", root / "landing", (family,))
    con = duckdb.connect(str(root / "ledger.duckdb"))
    ingest_family(con, family, root / "landing", "run-1")
    return con


def _loads(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[str, int, str]]:
    return {name: (status, rows, message) for name, status, rows, message in con.execute(
        "select source_file, status, rows_loaded, message from audit.file_loads").fetchall()}


def test_a_crlf_dcgm_export_with_an_lf_line_appended_keeps_every_row(tmp_path: Path) -> None:
    # csv.writer ends lines 1-12 in CRLF; line 13, appended by another tool, ends in LF.
    crlf = _write(tmp_path / "d.csv").read_bytes()
    assert crlf.count(b"\r\n") == crlf.count(b"\n") == 12
    appended = b"2026-01-01T00:04:00Z,h1,0,GPU-a,NVIDIA A100-SXM4-80GB,,,ns,p1,c,42,40,100,900,6400,42\n"
    con = _ingest(tmp_path, "usage", {"dcgm_day.csv": crlf + appended})
    status, rows, message = _loads(con)["dcgm_day.csv"]
    # the six rows kept from lines 2-12 (test_dcgm_batches) and line 13
    assert (status, rows) == ("loaded", 7), message
    assert "mixed line ends (1 of 13 lines did not end in CRLF): read with every line ending in CRLF" in message
    lines = con.execute("select list(_source_line order by _source_line) from raw.gpu_samples").fetchone()[0]
    assert lines == [*KEPT_LINES, 13]
    assert con.execute("select line, rule from audit.dq_rejects order by line").fetchall() == REJECTS


def test_cr_cr_lf_on_every_line_loads_as_the_file_itself(tmp_path: Path) -> None:
    """The FOCUS sample written again in text mode on Windows (every CRLF became CR CR LF, and the
    file was gzipped on the way) loads the same rows, lines and amounts as the sample."""
    original = FOCUS.read_bytes()
    assert original.count(b"\r\n") == original.count(b"\n") == 15
    doubled = gzip.compress(original.replace(b"\r\n", b"\r\r\n"))
    con = _ingest(tmp_path, "billing", {"fleet.csv": original, "fleet_again.csv.gz": doubled})
    loads = _loads(con)
    assert loads["fleet.csv"][:2] == ("loaded", 14) and "mixed" not in loads["fleet.csv"][2]
    assert loads["fleet_again.csv.gz"][:2] == ("loaded", 14), loads["fleet_again.csv.gz"]
    assert "mixed line ends (15 of 15 ended in CR CR LF): read with every line ending in CRLF" in loads[
        "fleet_again.csv.gz"][2]
    by_file = dict(con.execute(
        "select _source_file, list((_source_line, BilledCost, EffectiveCost) order by _source_line) "
        "from raw.billing_charges group by 1").fetchall())
    assert by_file["fleet_again.csv.gz"] == by_file["fleet.csv"] and len(by_file["fleet.csv"]) == 14


def test_a_file_the_copy_cannot_save_is_quarantined_naming_both(tmp_path: Path) -> None:
    """A bare CR inside an unquoted field stops the reader whatever the line ends: quarantined, and the
    message says the uniform copy was tried."""
    lines = FOCUS.read_bytes().split(b"\r\n")
    lines[5] = lines[5].replace(b",", b"\r,", 1)
    # lines[:10] joined by 9 CRLF, then 1 LF, then lines[10:] (5 lines and the empty rest) joined by 5 LF:
    # 15 line ends, 6 of them LF alone
    broken = b"\r\n".join(lines[:10]) + b"\n" + b"\n".join(lines[10:])
    con = _ingest(tmp_path, "billing", {"broken.csv": broken})
    status, rows, message = _loads(con)["broken.csv"]
    assert (status, rows) == ("unreadable", 0)
    assert "state machine reached an invalid state" in message
    assert "and so with uniform line ends: the file has 6 of 15 lines did not end in CRLF" in message


def test_line_ends_counts_across_chunk_boundaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"a,b\r\n1,2\n3,4\r\r\n5,6\r\n7\r,8\r\n9,10"  # 5 line ends; the last line has none
    path = tmp_path / "x.csv"
    path.write_bytes(data)
    want = line_endings.LineEnds(lf=5, crlf=4, extra_cr=1)
    expected_copy = b"a,b\r\n1,2\r\n3,4\r\n5,6\r\n7\r,8\r\n9,10"  # the bare CR in "7\r,8" stays
    for chunk in (1, 2, 3, 7, 1 << 24):  # a CR and its LF in different reads
        monkeypatch.setattr(line_endings, "CHUNK", chunk)
        assert line_ends(path) == want
        out = tmp_path / f"out{chunk}"
        out.mkdir()
        copy = uniform_copy(path, out)
        assert copy is not None and copy.path.read_bytes() == expected_copy, chunk
        assert copy.mixed == "1 of 5 lines did not end in CRLF; 1 of 5 ended in CR CR LF"


def test_uniform_files_are_not_copied_and_the_majority_wins(tmp_path: Path) -> None:
    for name, data in {"lf.csv": b"a\n1\n2\n", "crlf.csv": b"a\r\n1\r\n2\r\n", "one.csv": b"a,b"}.items():
        (tmp_path / name).write_bytes(data)
        assert uniform_copy(tmp_path / name, tmp_path) is None, name
    (tmp_path / "mostly_lf.csv").write_bytes(b"a\n1\r\n2\n3\n")
    (tmp_path / "out").mkdir()
    copy = uniform_copy(tmp_path / "mostly_lf.csv", tmp_path / "out")
    assert copy is not None and copy.path.read_bytes() == b"a\n1\n2\n3\n"
    assert copy.warning == "mixed line ends (1 of 4 lines did not end in LF): read with every line ending in LF"


def test_a_file_without_data_rows_says_so_in_any_format(tmp_path: Path) -> None:
    """nvidia-smi's header alone (a usage parser) and a FOCUS header alone (a billing parser): the same words."""
    smi = (SAMPLES / "usage" / "nvidia_smi_query_gpu_h100-80gb-hbm3_load.csv").read_bytes().split(b"\n")[0] + b"\n"
    con = _ingest(tmp_path / "u", "usage", {"smi_header.csv": smi})
    assert _loads(con)["smi_header.csv"] == ("loaded", 0, "no rows loaded: the file holds no data rows")
    focus = FOCUS.read_bytes().split(b"\r\n")[0] + b"\r\n"
    con = _ingest(tmp_path / "b", "billing", {"focus_header.csv": focus})
    assert _loads(con)["focus_header.csv"] == ("loaded", 0, "no rows loaded: the file holds no data rows")


def test_utf16_text_is_quarantined_saying_it_is_utf16(tmp_path: Path) -> None:
    """nvidia-smi redirected by Windows PowerShell (`>` writes UTF-16 with a byte order mark): no reader
    matches it, and the reason says what the file is instead of only that nothing matched."""
    smi = (SAMPLES / "usage" / "nvidia_smi_query_gpu_h100-80gb-hbm3_load.csv").read_text(encoding="utf-8")
    con = _ingest(tmp_path, "usage", {"smi.csv": smi.encode("utf-16"), "smi32.csv": smi.encode("utf-32")})
    loads = _loads(con)
    assert loads["smi.csv"] == ("unknown_format", 0, "smi.csv: no known usage format matches this file's content "
                                "(it is UTF-16 text, from its byte order mark: save it as UTF-8)")
    assert loads["smi32.csv"][2].endswith("(it is UTF-32 text, from its byte order mark: save it as UTF-8)")
