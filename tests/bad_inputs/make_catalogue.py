"""How the bad-input catalogue was made: tests/bad_inputs/<family>/ from the real samples.

Run once (`.venv/bin/python tests/bad_inputs/make_catalogue.py`); the files it writes are
committed and their expected outcomes are written by hand in expected.yaml. Each file takes a
few lines of a real sample in samples/inputs/<family>/ (or tests/fixtures/prices/quotes.csv)
and breaks them in one way. The 2.5 MB one-line file is built by the test fixture instead.
"""
import csv
import io
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
S = REPO / "samples/inputs"
OUT = REPO / "tests/bad_inputs"

def w(family, name, data):
    p = OUT / family / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))

def csv_text(rows, delim=","):
    buf = io.StringIO()
    wr = csv.writer(buf, delimiter=delim, lineterminator="\n")
    wr.writerows(rows)
    return buf.getvalue()

# ---------------- billing: FOCUS 1.0 sample ----------------
lines = (S / "billing/focus_1.0_sample_1000_multicloud.csv").read_text().splitlines()
recs = list(csv.reader(lines[:40]))
H, R = recs[0], recs[1:]
ix = {h: i for i, h in enumerate(H)}
def row(i, **chg):
    r = list(R[i])
    for k, v in chg.items():
        r[ix[k]] = v
    return r

w("billing", "focus_bom.csv", b"\xef\xbb\xbf" + csv_text([H, R[0], R[1], R[2]]).encode())
good3 = csv_text([H, R[3], R[4], R[5]])
cut = csv_text([R[6]])[:300]
w("billing", "focus_truncated.csv", good3 + cut)  # last record cut mid-line, no newline
lat = csv_text([H, R[7], row(8, ChargeDescription="Stockage Zürich SÀRL"), R[9]]).encode("utf-8")
lat = lat.replace("Zürich SÀRL".encode(), "Zürich SÀRL".encode("latin-1"))
w("billing", "focus_latin1.csv", lat)
w("billing", "focus_semicolon.csv", csv_text([H, R[10], R[11]], delim=";"))
drop = ix["ChargeCategory"]
w("billing", "focus_missing_chargecategory.csv", csv_text([[c for j, c in enumerate(r) if j != drop] for r in (H, R[12], R[13])]))
w("billing", "focus_extra_columns.csv", csv_text([H + ["x_CostCenter", "x_Owner"], R[14] + ["cc-1", "a"], R[15] + ["cc-2", "b"], R[16] + ["", ""]]))
w("billing", "focus_text_in_numbers.csv", csv_text([H, R[17], row(18, BilledCost="twelve"), row(19, ConsumedQuantity="1.2.3")]))
w("billing", "focus_negative_and_absurd.csv", csv_text([H, row(20, BilledCost="-5.25"), row(21, BilledCost="987654321012.5"), R[22]]))
w("billing", "focus_duplicate_rows.csv", csv_text([H, R[23], R[23], R[24]]))
dup = csv_text([H, R[25], R[26], R[27]])
w("billing", "focus_redelivered_a.csv", dup)
w("billing", "focus_redelivered_b.csv", dup)
w("billing", "focus_mixed_timezones.csv", csv_text([H,
    row(28, ChargePeriodStart="2024-09-18T22:00:00Z", ChargePeriodEnd="2024-09-18T23:00:00Z"),
    row(29, ChargePeriodStart="2024-09-18T23:00:00+01:00", ChargePeriodEnd="2024-09-19T00:00:00+01:00"),
    row(30, ChargePeriodStart="2024-09-18 22:00:00", ChargePeriodEnd="2024-09-18T18:00:00-05:00")]))
w("billing", "focus_period_reversed.csv", csv_text([H, R[31], row(32, ChargePeriodStart="2024-09-20 10:00:00", ChargePeriodEnd="2024-09-20 09:00:00"), R[33]]))
w("billing", "focus_unknown_currency.csv", csv_text([H, R[34], row(35, BillingCurrency="US$"), row(36, BillingCurrency="ZZZ")]))
w("billing", "focus_unknown_sku.csv", csv_text([H, row(37, SkuId="NOT-A-REAL-SKU", SkuPriceId="NOPE.NOPE"), row(38, SkuId="zz9-gpu-mega", ServiceName="Quantum Toaster")]))
w("billing", "focus_empty.csv", b"")
w("billing", "focus_header_only.csv", csv_text([H]))
w("billing", "garbage.csv", bytes(range(256)) * 8)
w("billing", "..%2F..%2Fetc%2Fpasswd.csv", csv_text([H, R[0], R[4]]))
w("billing", "%2E%2E%2F%2E%2E%2Fetc%2Fshadow.csv", csv_text([H, R[2], R[3]]))
w("billing", "Coût export (copie) – été.csv", csv_text([H, R[1], R[5]]))
w("billing", "invoice_totals_bad.csv",
  "InvoiceId,BillingAccountId,BillingPeriodStart,BillingCurrency,InvoiceTotal\n"
  "INV-CAT-1,ACCT-CATALOGUE,2024-09-01,USD,0.00\n"
  "INV-CAT-2,ACCT-CATALOGUE,2024-10-01,USD,n/a\n"
  "INV-CAT-3,ACCT-CATALOGUE,2024-13-45,USD,0.00\n"
  "INV-CAT-4,,2024-09-01,USD,5.00\n"
  "INV-CAT-5,ACCT-CATALOGUE,2024-09-01, ,5.00\n")

# Plausibility gates, a file naming no currency, credentials in tags
w("billing", "focus_quadrillion.csv", csv_text([H, row(1, BilledCost="1000000000000000.00", EffectiveCost="1000000000000000.00",
    ChargeDescription="g6e.xlarge usage", ConsumedQuantity="1", ConsumedUnit="Hours", PricingQuantity="1", PricingUnit="Hours"),
    R[2], R[3]]))
w("billing", "focus_implausible_unit_price.csv", csv_text([H,
    row(4, BilledCost="4000", EffectiveCost="4000", ChargeCategory="Usage", PricingQuantity="2", PricingUnit="Hours"),
    row(5, BilledCost="4000", EffectiveCost="4000", ChargeCategory="Usage", PricingQuantity="5", PricingUnit="10 Hours"),
    row(6, BilledCost="-2000000000", EffectiveCost="-2000000000", ChargeCategory="Credit")]))
cur = ix["BillingCurrency"]
w("billing", "focus_no_currency_column.csv", csv_text([[c for j, c in enumerate(r) if j != cur] for r in (H, R[7], R[8])]))
w("billing", "focus_secret_tags.csv", csv_text([H,
    row(9, Tags='{"team": "research", "deploy-token": "sk-ant-api03-CATALOGUE-0123456789abcdef"}'),
    row(10, Tags='{"aws_key": "AKIACATALOGUE0123456", "DB_Password": "hunter2-catalogue"}'),
    row(11, Tags='{"auth": "Bearer CATALOGUE0123456789abcdef", "ci": "ghp_CATALOGUE0123456789abcdefXYZ"}')]))

# ---------------- usage ----------------
DH = ("timestamp,hostname,gpu,uuid,modelName,GPU_I_PROFILE,GPU_I_ID,namespace,pod,container,job_id,"
      "DCGM_FI_DEV_GPU_UTIL,DCGM_FI_DEV_FB_USED,DCGM_FI_DEV_POWER_USAGE")
U = "GPU-00000000-0000-0000-0000-000000000000"
def d(ts, util="42", host="gpu-node-000", gpu="0"):
    return f"{ts},{host},{gpu},{U if gpu == '0' else U[:-1] + gpu},NVIDIA H100 80GB HBM3,,,,,,,{util},19818,631.95"
w("usage", "dcgm_truncated.csv", "\n".join([DH, d("2026-01-01T00:00:00Z"), d("2026-01-01T00:01:00Z"), d("2026-01-01T00:02:00Z"),
                                          d("2026-01-01T00:03:00Z")[:60]]))
w("usage", "dcgm_text_in_numbers.csv", "\n".join([DH, d("2026-01-01T00:00:00Z"), d("2026-01-01T00:01:00Z", util="abc"),
                                                 d("yesterday"), d("2026-01-01T00:03:00Z")]) + "\n")
w("usage", "dcgm_mixed_timezones.csv", "\n".join([DH, d("2026-01-01T00:00:00Z"), d("2026-01-01T01:01:00+01:00"),
                                                 d("2026-01-01T00:02:00")]) + "\n")
w("usage", "dcgm_duplicate_rows.csv", "\n".join([DH, d("2026-01-01T00:00:00Z"), d("2026-01-01T00:00:00Z"),
                                                d("2026-01-01T00:01:00Z")]) + "\n")
w("usage", "dcgm_extra_columns.csv", "\n".join([DH + ",rack,DCGM_FI_DEV_FOO_BAR",
    d("2026-01-01T00:00:00Z") + ",r1,7", d("2026-01-01T00:01:00Z") + ",r1,8", d("2026-01-01T00:02:00Z") + ",r1,9"]) + "\n")
w("usage", "dcgm_no_known_metric.csv", "timestamp,hostname,gpu,uuid,DCGM_FI_DEV_FOO_BAR\n2026-01-01T00:00:00Z,n0,0,GPU-1,5\n")
w("usage", "dcgm_bom_absurd_values.csv", b"\xef\xbb\xbf" + ("\n".join([DH, d("2026-01-01T00:00:00Z", util="250"),
    d("2026-01-01T00:01:00Z", util="-7"), d("2026-01-01T00:02:00Z", util="1e30")]) + "\n").encode())
w("usage", "dcgm_wrong_delimiter.csv", "\n".join([DH.replace(",", ";"), d("2026-01-01T00:00:00Z").replace(",", ";")]) + "\n")
smi = (S / "usage/nvidia_smi_query_gpu_h100-80gb-hbm3_load.csv").read_text().splitlines()
sh = [c.strip() for c in smi[0].split(", ")]
sr = smi[1].split(", ")
ui = sh.index("utilization.gpu [%]")
ti = sh.index("timestamp")
def smirow(ts, util=None):
    r = list(sr); r[ti] = ts
    if util is not None: r[ui] = util
    return ", ".join(r)
w("usage", "nvidia_smi_text_in_numbers.csv", "\n".join([smi[0], smirow("2026/07/14 08:12:53.353"),
    smirow("2026/07/14 08:13:53.353", util="lots %"), smirow("2026/07/14 08:14:53.353")]) + "\n")
sac = (S / "usage/hb_jobinfo_sacct_snowman_delim.txt").read_text().splitlines()
f2 = sac[1].split("☃"); assert f2[10] == "2023-09-04T17:05:14" and f2[11] == "2023-09-05T15:31:53", f2[9:12]
f2[11] = "2023-09-03T00:00:00"
w("usage", "sacct_period_reversed.txt", "\n".join([sac[0], "☃".join(f2), sac[2]]) + "\n")
w("usage", "sacct_empty.txt", b"")
w("usage", "random_bytes.prom", bytes((i * 37 + 11) % 256 for i in range(3000)))

# ---------------- benchmarks ----------------
tr = (S / "benchmarks/training_runs.csv").read_text().splitlines()
w("benchmarks", "training_runs_latin1.csv", ("\n".join(tr[:3]) + "\n").encode("utf-8")
  + tr[3].replace("tr-2025-04-chatft-01", "tr-2025-04-chatft-01-é").encode("latin-1") + b"\n")
w("benchmarks", "training_runs_mixed_timezones.csv", "\n".join([tr[0],
    tr[1].replace("tr-", "tz-"), tr[3].replace("tr-", "tz-"), tr[4].replace("tr-", "tz-").replace("2025-04-08T10:00:00Z", "2025-04-08T10:00:00").replace("2025-04-08T15:20:00Z", "2025-04-08T17:20:00+02:00")]) + "\n")
w("benchmarks", "training_runs_extra_field.csv", "\n".join([tr[0]] + [x.replace("tr-", "xf-") for x in (tr[1], tr[2] + ",SURPLUS", tr[5])]) + "\n")
# A run of a workload the registry does not list (its entry not landed yet): published, named by a warning
w("benchmarks", "training_runs_unregistered_workload.csv",
  "\n".join([tr[0], tr[2].replace("tr-2025-03-pretrain7b-b,llm-pretrain-7b", "uw-2025-03-a,vision-pretrain-x")]) + "\n")
ev = (S / "benchmarks/eval_runs.csv").read_text().splitlines()
e_bad_tasks = ev[2].replace("ev-2025-04-15", "ev-bad-tasks").replace(",1850,1702,148,", ",1850,1850,148,")
e_rev = ev[3].replace("ev-2025-04-16", "ev-reversed").replace("2025-04-16T02:05:00Z", "2025-04-15T23:00:00Z")
e_enum = ev[1].replace("ev-2025-04-14", "ev-bad-outcome").replace(",completed", ",done")
w("benchmarks", "eval_runs_rule_breaks.csv", "\n".join([ev[0], ev[1], e_bad_tasks, e_rev, e_enum]) + "\n")
mb = (S / "benchmarks/media_batches.csv").read_text().splitlines()
w("benchmarks", "media_batches_negative_absurd.csv", "\n".join([mb[0], mb[1],
    mb[2].replace(",9.33,", ",-9.33,"),
    mb[3].replace(",2400,2046,", ",2400,2401,"),
    mb[4].replace(",48.0,96,61,", ",48.0,96000000000,61,"),
    mb[5].replace(",44.0,96,70,", ",44.0,ninety,70,")]) + "\n")
mf = (S / "benchmarks/memory_fit_tests.csv").read_text().splitlines()
w("benchmarks", "memory_fit_missing_column.csv", "\n".join(",".join(l.split(",")[:-1]) for l in mf[:4]) + "\n")
ops = (S / "benchmarks/ops_tests.csv").read_text().splitlines()
w("benchmarks", "ops_tests_duplicate_rows.csv", "\n".join([ops[0], ops[1], ops[1], ops[2], ops[3].replace("worker_kill_recovery", "reboot")]) + "\n")
qo = (S / "benchmarks/quality_outcomes.csv").read_text().splitlines()
w("benchmarks", "quality_outcomes_extra_columns.csv", "\n".join([qo[0] + ",reviewer", qo[1] + ",ana", qo[2] + ",bo"]) + "\n")
w("benchmarks", "quality_outcomes_semicolon.csv", "\n".join([qo[0].replace(",", ";"), qo[3].replace(",", ";")]) + "\n")
vq = (S / "benchmarks/llama33-70b__01_tp8_pp1__serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_04.json").read_bytes()
w("benchmarks", "vllm_result_truncated.json", vq[:700])
w("benchmarks", "empty.json", b"")
# A result whose date is null (with its sidecar, so the run names a GPU and is charged): no month holds it
vj = json.loads((S / "benchmarks/llama33-70b__01_tp8_pp1__serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_01.json").read_text())
w("benchmarks", "vllm_tp8_pp1_no_date.json", json.dumps({**vj, "date": None}, indent=2) + "\n")
w("benchmarks", "vllm_tp8_pp1_no_date.commands.json",
  (S / "benchmarks/llama33-70b__01_tp8_pp1__serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_01.commands.json").read_bytes())

# ---------------- api_spend ----------------
ll = (S / "api_spend/litellm_spend_logs_sample.csv").read_text().splitlines()
LH, L = ll[0], ll[1:]
LHc = LH.split(",")
def lrow(i, **chg):
    r = next(csv.reader([L[i]]))
    for k, v in chg.items():
        r[LHc.index(k)] = v
    return csv_text([r]).rstrip("\n")
w("api_spend", "litellm_truncated.csv", "\n".join([LH, L[0], L[1], L[2], L[3][:120]]))
w("api_spend", "litellm_latin1.csv", ("\n".join([LH, L[4]]) + "\n").encode() + lrow(5, user="José").encode("latin-1") + b"\n" + (L[6] + "\n").encode())
w("api_spend", "litellm_rule_breaks.csv", "\n".join([LH, L[7], lrow(8, spend="abc"), lrow(9, spend="-0.5"),
    lrow(10, prompt_tokens="-3", total_tokens=""), lrow(11, status="weird"), L[12]]) + "\n")
rid = next(csv.reader([L[13]]))[0]
w("api_spend", "litellm_duplicate_rows.csv", "\n".join([LH, L[13], lrow(14, request_id=rid), L[15]]) + "\n")
w("api_spend", "litellm_timezones_reversed.csv", "\n".join([LH, L[16],
    lrow(17, startTime="2025-04-14T03:00:00+02:00", endTime="2025-04-14T03:00:05+02:00"),
    lrow(18, startTime="2025-04-14 05:00:00", endTime="2025-04-14 04:59:00")]) + "\n")
w("api_spend", "litellm_missing_spend_column.csv", "\n".join(",".join(c for j, c in enumerate(next(csv.reader([x]))) if j != 3) for x in ll[:3]) + "\n")
w("api_spend", "litellm_extra_columns.csv", "\n".join([LH + ",messages,response", L[19] + ",[],{}", L[20] + ",\"[{\"\"role\"\": \"\"user\"\"}]\",{}"]) + "\n")
w("api_spend", "litellm_bom.csv", b"\xef\xbb\xbf" + ("\n".join([LH, L[21], L[22]]) + "\n").encode())
import json


def jl(i, **chg):
    r = next(csv.reader([L[i]]))
    d_ = dict(zip(LHc, r)); d_.update(chg); return json.dumps(d_)
w("api_spend", "litellm_spend.jsonl", "\n".join([jl(23), jl(24)[:-30], jl(25)]) + "\n")
oc = (S / "api_spend/openai_costs_api_response_example.json").read_text()
w("api_spend", "openai_costs_truncated.json", oc[:300])
w("api_spend", "openai_costs_unknown_currency.json", oc.replace('"usd"', '"doubloons"'))
w("api_spend", "binary.json", b"\x89PNG\r\n\x1a\n" + bytes(range(200)))

# ---------------- prices ----------------
kp = (S / "prices/karpenter_aws_ondemand_gpu_prices_history.csv").read_text().splitlines()
KH, K = kp[0], kp[1:]
def kprice(i, price=None, cur=None, sku=None):
    r = K[i].split(",")
    if price is not None: r[8] = price
    if cur is not None: r[5] = cur
    if sku is not None: r[6] = sku
    return ",".join(r)
w("prices", "karpenter_truncated.csv", "\n".join([KH, K[0], K[1], K[2], K[3][:50]]))
w("prices", "karpenter_rule_breaks.csv", "\n".join([KH, K[4], kprice(5, price="abc"), kprice(6, price="-1.5"),
    kprice(7, price="0"), kprice(8, cur="ABC"), kprice(9, sku="zz9.megagpu"), kprice(10, price="99999999.99")]) + "\n")
w("prices", "karpenter_duplicate_rows.csv", "\n".join([KH, K[11], K[11], K[12]]) + "\n")
w("prices", "karpenter_latin1.csv", ("\n".join([KH, K[13]]) + "\n").encode() + K[14].replace("pkg/", "pkg/é/").encode("latin-1") + b"\n" + (K[15] + "\n").encode())
q = (REPO / "tests/fixtures/prices/quotes.csv").read_text().splitlines()
QH = q[0]
w("prices", "quotes_rule_breaks.csv", "\n".join([QH, q[1],
    q[2].replace("Q-2025-002", "Q-CAT-NOPRICE").replace(",1.89,", ",,"),
    q[2].replace("Q-2025-002", "Q-CAT-NEG").replace(",1.89,", ",-1.89,"),
    q[2].replace("Q-2025-002", "Q-CAT-TS").replace("2025-07-15", "15/07/2025"),
    q[3].replace("Q-2025-003", "Q-CAT-CUR"),
    q[1]]) + "\n")
ao = (S / "prices/aws_pricelist_offer_fixture_2.json").read_bytes()
w("prices", "aws_offer_truncated.json", ao[: len(ao) // 2])
w("prices", "empty.csv", b"")

# ---------------- absurd figures: one file per family for the plausibility gates ----------------
# (reference/bounds.py PLAUSIBILITY; each bad line breaks one bound, the others are real rows)
# (good rows get ids of their own: tests/security/test_absurd_inputs.py loads these beside the samples)
w("api_spend", "litellm_absurd_spend.csv", "\n".join([LH, lrow(26, request_id="absurd-good-1"),
    lrow(27, spend="999999999.12", total_tokens="0", prompt_tokens="0", completion_tokens="0"),
    lrow(28, spend="500", total_tokens="0", prompt_tokens="0", completion_tokens="0"),
    lrow(29, spend="50", total_tokens="1000", prompt_tokens="900", completion_tokens="100"),
    lrow(30, request_id="absurd-good-2")]) + "\n")
ocj = json.loads(oc)
good = ocj["data"][0]
bad = json.loads(json.dumps(good))
bad["start_time"], bad["end_time"] = good["start_time"] + 86400, good["end_time"] + 86400
bad["results"][0]["amount"]["value"] = 1e12
ocj["data"] = [good, bad]
w("api_spend", "openai_costs_absurd_bucket.json", json.dumps(ocj, indent=2) + "\n")
g5 = next(i for i, k in enumerate(K) if ",g5.xlarge," in k)
w("prices", "karpenter_absurd_per_gpu.csv", "\n".join([KH, K[g5], kprice(g5 + 1), kprice(g5, price="999.990000")]) + "\n")
w("prices", "quotes_absurd.csv", "\n".join([QH, q[1], q[2].replace("Q-2025-002", "Q-ABSURD").replace(",EUR,1.89,gpu-hour,", ",USD,1000000000000,gpu-hour,")]) + "\n")
w("benchmarks", "eval_runs_absurd.csv", "\n".join([ev[0], ev[1].replace("ev-2025-04-14", "ev-absurd-good"),
    ev[2].replace("ev-2025-04-15", "ev-10k-gpus").replace(",NVIDIA L40S,4,", ",NVIDIA L40S,10000,"),
    ev[3].replace("ev-2025-04-16", "ev-1e6-hours").replace(",1.08,", ",1000000,")]) + "\n")
w("benchmarks", "media_batches_absurd.csv", "\n".join([mb[0], mb[2].replace("img-2025-04-15-a", "img-absurd-good"), mb[1].replace("img-2025-04-14-a", "img-1e9-gpu-hours").replace(",10.0,", ",1000000000,")]) + "\n")
sj = [x for x in sac if x.startswith("7965768")]
w("usage", "sacct_absurd_gpus.txt", "\n".join([sac[0].replace("4034541", "9034541")] + [x.replace("gres/gpu=1,", "gres/gpu=10000,").replace("gres/gpu:v100=1,", "gres/gpu:v100=10000,") for x in sj]) + "\n")
w("usage", "dcgm_absurd_utilisation.csv", "\n".join([DH, d("2026-01-01T00:00:00Z"), d("2026-01-01T00:01:00Z", util="5000"),
    d("2026-01-01T00:02:00Z", util="-40"), d("2026-01-01T00:03:00Z")]) + "\n")
print(f"wrote {sum(1 for p in OUT.glob('*/*') if p.is_file())} files under {OUT}")
