"""billing_charges contract, format discovery and detection on every real billing file."""

from __future__ import annotations

from pathlib import Path

import yaml

from warehouse.raw import CONTRACTS_DIR
from sources.billing.schema import TABLE, contract_columns
from sources.billing.tags import normalise_tags
from sources.catalog import formats_for, recognise
from tests.sources.billing_helpers import BILLING_FORMATS, billing_format

EXPECTED = {
    "focus_1.0_sample_1000_multicloud.csv": "focus",
    "aws_cur_legacy_sample_anonymized.csv": "aws_cur_legacy",
    "azure_ea_cost_export_sample_anonymized.csv": "azure_cost_export",
    "oci_cost_report_sample.csv": "oci_cost_report",
    "focus_1.3_gcp_contractcommitment_synthetic_slice.csv": "focus_contract_commitment",
}


def test_contract_yaml_matches_schema() -> None:
    doc = yaml.safe_load((CONTRACTS_DIR / "billing.yaml").read_text())
    assert doc["tables"][TABLE]["columns"] == contract_columns()


def test_every_real_billing_file_is_recognised(public_data: Path) -> None:
    names = {f.name for f in formats_for("billing")}
    assert names >= {"focus", "aws_cur_legacy", "azure_cost_export", "oci_cost_report"}  # others may be added
    files = sorted((public_data / "focus").rglob("*.csv"))
    assert len(files) == 30  # 4 top-level + 8 Azure header sets + 11 spec examples + 7 provider slices
    for f in files:
        expected = EXPECTED.get(f.name) or ("azure_cost_export" if f.parent.name == "azure_export_headersets" else "focus")
        if expected == "focus_contract_commitment":  # a FOCUS dataset of commitments, no charge rows
            assert billing_format(f) is None, f
            assert recognise(f, "billing").name == expected, f
            continue
        assert billing_format(f) == expected, f
        fmt = recognise(f, "billing")  # the pipeline's discovery agrees
        assert fmt is not None and fmt.name == expected, f


def test_billing_detectors_reject_other_families(public_data: Path) -> None:
    assert len(BILLING_FORMATS) == 5  # CUR (legacy and snake case), Azure, FOCUS, OCI
    others = [p for p in public_data.rglob("*") if p.is_file() and p.suffix in {".csv", ".json", ".parquet"}
              and "focus" not in p.parts]
    assert others
    for p in others:
        assert billing_format(p) is None, p


def test_tag_normalisation_rules() -> None:
    norm, merged, ok = normalise_tags('{"org": "", " org": "trey", "env ": "prod"}')
    assert ok and merged == ["org"] and norm == '{"org":"trey","env":"prod"}'
    assert normalise_tags('"a": "b","c": "d"')[0] == '{"a":"b","c":"d"}'
    assert normalise_tags("not json") == (None, [], False)
