"""A file no format of its folder reads is quarantined with what it is and what would make it readable
(sources/catalog.py `unrecognised_reason`): nvidia-smi output other than a CSV query with its header (the
real H200 capture: a query saved with `--format=csv,noheader`, the `-q` report, the MIG profile tables),
dcgm-exporter's metrics configuration, Google Cloud's own billing exports, Excel's `sep=` line above a header,
workbooks and archives other than gzip, and a file another family reads (put in the wrong folder). The
capture's two query CSVs load as they are."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zipfile
from pathlib import Path

import duckdb
import pytest

from tests.conftest import REPO, SAMPLES
from tests.sources.test_odd_file_shapes import _ingest, _loads

H200 = REPO / "tests" / "data" / "public" / "usage" / "h200_capture"
PREFIX = "no known usage format matches this file's content"


def test_the_real_h200_capture_says_what_each_unreadable_file_is(tmp_path: Path) -> None:
    names = ("nvidia_smi_query_compute_apps_h200_load.csv", "nvidia_smi_q_h200.txt", "nvidia_smi_mig_lgip_h200.txt",
             "nvidia_smi_mig_lgipp_h200.txt")
    loads = _loads(_ingest(tmp_path, "usage", {n: (H200 / n).read_bytes() for n in names}))
    assert {n: loads[n][:2] for n in names} == dict.fromkeys(names, ("unknown_format", 0))
    apps = loads["nvidia_smi_query_compute_apps_h200_load.csv"][2]
    assert apps.startswith(f"nvidia_smi_query_compute_apps_h200_load.csv: {PREFIX} (it looks like a GPU query's "
                           "CSV without its header line (nvidia-smi `--format=csv,noheader`)")
    assert "export with `--format=csv`, or add the query's field list" in apps
    report = loads["nvidia_smi_q_h200.txt"][2]
    assert "(it is an nvidia-smi report (`nvidia-smi` or `nvidia-smi -q`): one snapshot, not samples" in report
    assert "--format=csv -l 60`)" in report  # the capture to make instead
    for table in ("nvidia_smi_mig_lgip_h200.txt", "nvidia_smi_mig_lgipp_h200.txt"):
        assert "(it is nvidia-smi's MIG profile table (`nvidia-smi mig -lgip` or `-lgipp`)" in loads[table][2]


def test_dcgm_exporters_metric_lists_are_named_as_configuration(tmp_path: Path) -> None:
    """dcgm-exporter's own counters files (NVIDIA/dcgm-exporter etc/): which fields to export, not samples."""
    dcgm = REPO / "tests" / "data" / "public" / "usage" / "dcgm"
    names = ("dcgm_exporter_default-counters.csv", "dcgm_exporter_dcp-metrics-included.csv")
    loads = _loads(_ingest(tmp_path, "usage", {n: (dcgm / n).read_bytes() for n in names}))
    for name in names:
        assert loads[name][:2] == ("unknown_format", 0)
        assert f"{PREFIX} (it is dcgm-exporter's metrics configuration (which DCGM fields to export" in loads[name][2]


def test_the_header_the_reason_asks_for_makes_the_capture_load(tmp_path: Path) -> None:
    """The capture's own query (PROVENANCE.md: timestamp,pid,process_name,gpu_uuid,used_memory) as the first
    line: its 15 lines load as 15 processes, all pid 532 (`python3`); used memory as the file says it grew (3 x 776,
    2 x 874, 6 x 1,002 and 4 x 31,522 MiB: 2,328 + 1,748 + 6,012 + 126,088 = 136,176)."""
    body = (H200 / "nvidia_smi_query_compute_apps_h200_load.csv").read_bytes()
    con = _ingest(tmp_path, "usage", {"apps.csv": b"timestamp, pid, process_name, gpu_uuid, used_memory [MiB]\n" + body})
    status, rows, _ = _loads(con)["apps.csv"]
    assert (status, rows) == ("loaded", 15)
    assert con.execute("select count(*), min(pid), max(pid), min(process_name), sum(used_memory_mib) "
                       "from raw.gpu_processes").fetchone() == (15, 532, 532, "python3", 136_176)


def test_the_capture_query_csvs_load_every_sample(tmp_path: Path) -> None:
    """80 samples at 1 s under load (48 at 100 %, 2 at 99 %, 30 at 0 %: counted with awk) and 40 idle ones."""
    files = {n: (H200 / n).read_bytes() for n in ("nvidia_smi_query_gpu_h200_load.csv", "nvidia_smi_query_gpu_h200_idle.csv")}
    con = _ingest(tmp_path, "usage", files)
    loads = _loads(con)
    assert loads["nvidia_smi_query_gpu_h200_load.csv"][:2] == ("loaded", 80)
    assert loads["nvidia_smi_query_gpu_h200_idle.csv"][:2] == ("loaded", 40)
    assert con.execute("select count(*) filter (where gpu_util_pct = 100), count(*) filter (where gpu_util_pct = 99), "
                       "count(*) filter (where gpu_util_pct = 0) from raw.gpu_samples "
                       "where _source_file = 'nvidia_smi_query_gpu_h200_load.csv'").fetchone() == (48, 2, 30)


def test_a_file_in_another_familys_folder_is_named_with_its_folder(tmp_path: Path) -> None:
    focus = SAMPLES / "billing" / "focus_1.2_fleet_2025-04_constructed.csv"
    sacct = SAMPLES / "usage" / "hb_jobinfo_sacct_snowman_delim.txt"
    usage = _loads(_ingest(tmp_path / "u", "usage", {"bill.csv": focus.read_bytes()}))
    assert usage["bill.csv"] == ("unknown_format", 0, f"bill.csv: {PREFIX} (it reads as focus (billing data): "
                                 "put it in the inputs' billing/ folder)")
    billing = _loads(_ingest(tmp_path / "b", "billing", {"jobs.txt": sacct.read_bytes()}))
    assert billing["jobs.txt"][2].endswith("(it reads as slurm_sacct (usage data): put it in the inputs' usage/ folder)")


@pytest.mark.parametrize("header", [
    # the console's cost table download, and the BigQuery standard export queried and saved as CSV
    "Billing account name,Billing account ID,Project name,Project ID,Service description,Service ID,SKU description,"
    "SKU ID,Credit type,Cost type,Usage start date,Usage end date,Usage amount,Usage unit,Unrounded cost ($),Cost ($)",
    "billing_account_id,service.description,sku.description,usage_start_time,usage_end_time,cost,currency",
    "billing_account_id,service_description,sku_description,usage_start_time,usage_end_time,cost,currency",
])
def test_a_google_cloud_billing_export_is_named_with_what_to_export(tmp_path: Path, header: str) -> None:
    data = f"{header}\n" + ",".join(["x"] * header.count(",")) + ",1.0\n"
    message = _loads(_ingest(tmp_path, "billing", {"gcp.csv": data.encode()}))["gcp.csv"]
    assert message[:2] == ("unknown_format", 0)
    assert message[2] == ("gcp.csv: no known billing format matches this file's content (it looks like a Google Cloud "
                          "billing export (the console's cost table or the BigQuery standard export), which is not "
                          "mapped here: export FOCUS instead (Google Cloud's FOCUS BigQuery view), as CSV or Parquet)")


def test_excels_delimiter_line_before_the_header_is_named(tmp_path: Path) -> None:
    """Excel writes (and reads) `sep=,` as a CSV's first line; the header is then line 2, where no reader
    looks. The FOCUS sample with that line first: named, with the fix."""
    focus = (SAMPLES / "billing" / "focus_1.2_fleet_2025-04_constructed.csv").read_bytes()
    loads = _loads(_ingest(tmp_path, "billing", {"focus.csv": b"sep=,\r\n" + focus}))
    assert loads["focus.csv"] == ("unknown_format", 0, "focus.csv: no known billing format matches this file's "
                                  "content (its first line is Excel's delimiter hint `sep=,`, not the header: "
                                  "delete that line)")


def test_a_file_nothing_reads_keeps_the_plain_reason(tmp_path: Path) -> None:
    con: duckdb.DuckDBPyConnection = _ingest(tmp_path, "usage", {"notes.csv": b"colour,size\nred,3\n"})
    assert _loads(con)["notes.csv"] == ("unknown_format", 0, f"notes.csv: {PREFIX}")


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buf.getvalue()


def test_workbooks_and_archives_other_than_gzip_are_named_and_gzip_loads(tmp_path: Path) -> None:
    """The FOCUS sample zipped (AWS's legacy CUR can be delivered as ZIP), bzip2- and xz-compressed, an .xlsx
    (a ZIP holding `[Content_Types].xml` and `xl/`) and an .xls (OLE2 magic): each named with what to do. The
    same sample gzip-compressed loads its 14 lines (`wc -l` = 15 with the header)."""
    focus = (SAMPLES / "billing" / "focus_1.2_fleet_2025-04_constructed.csv").read_bytes()
    xlsx = _zip({"[Content_Types].xml": b"<Types/>", "xl/workbook.xml": b"<workbook/>"})
    files = {"cur.csv.zip": _zip({"cur/cur-00001.csv": focus}), "f.csv.bz2": bz2.compress(focus),
             "f.csv.xz": lzma.compress(focus), "costs.xlsx": xlsx,
             "costs.xls": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 512, "f.csv.gz": gzip.compress(focus)}
    loads = _loads(_ingest(tmp_path, "billing", files))
    prefix = "no known billing format matches this file's content"
    assert loads["cur.csv.zip"] == ("unknown_format", 0, f"cur.csv.zip: {prefix} (it is a ZIP archive (1 file: "
                                    "cur/cur-00001.csv): unzip it into this folder, or compress each file with gzip "
                                    "(read as it is))")
    for name, kind in (("f.csv.bz2", "bzip2"), ("f.csv.xz", "xz")):
        assert loads[name] == ("unknown_format", 0, f"{name}: {prefix} (it is {kind}-compressed: decompress it, or "
                                                    "compress it with gzip (read as it is))")
    assert loads["costs.xlsx"][2] == f"costs.xlsx: {prefix} (it is an Excel workbook (.xlsx): save the sheet as CSV UTF-8)"
    assert loads["costs.xls"][2] == (f"costs.xls: {prefix} (it is an Excel 97-2003 workbook (.xls): save the sheet "
                                     "as CSV UTF-8)")
    assert loads["f.csv.gz"][:2] == ("loaded", 14)
