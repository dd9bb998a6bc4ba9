"""The workload registry: teams.yaml and workloads.yaml in the format of samples/inputs/registry.

The workloads are the sample registry's ten (same ids, same Step 1 fields); their owners are
remapped when fewer than four teams are asked for. Extra teams (`team-05`, ...) get a
`notebooks-<team>` developer-notebook workload. Mappings tie the generated sub-accounts, Slurm
accounts, Kubernetes namespaces and LiteLLM teams to their team.
"""

from __future__ import annotations

import re
from pathlib import Path

from tools.generate.billing import sub_account
from tools.generate.fleet import Fleet

TEAM_INFO = {
    "research": ("Foundation Research", "CC-1001", "research-leads@example.com", 250000, ["TempeAI", "ViennaAI", "trey"]),
    "platform": ("ML Platform", "CC-1002", "platform@example.com", 80000, ["PeoriaData", "LipaData", "QuitoData"]),
    "support": ("Customer Support AI", "CC-1003", "support-ai@example.com", 60000, ["LexingtonFinance"]),
    "creative": ("Creative Studio", "CC-1004", "studio@example.com", 40000, ["TehranEngineering", "PhoenixProcurement"]),
}

POLICIES = """# How allocation keys are read from billing tags: first key present wins (case- and
# whitespace-insensitive), value matched against team ids and aliases.
policies:
  tag_keys:
    team: [team, owner_team, business_unit, org]
    workload: [workload, workload_id, application]
    environment: [environment, env]
  idle_policy: separate          # separate | share_by_usage | owner_team
  shared_cost_split: used_gpu_hours
  platform_labor_monthly: {amount: 12000, currency: USD}
  # Pricing assumptions (docs/cost_model.md). Where no price was observed for a pricing category,
  # the observed on-demand rate times this factor is used, and the row says "assumed".
  reference_regions: {aws: us-east-1, azure: eastus, gcp: us-central1, oci: us-ashburn-1}
  default_provider: aws
  pricing_category_factors: {on-demand: 1.0, spot: 0.35, low-priority: 0.35, reserved-1y: 0.62, reserved-3y: 0.45, committed: 0.6}
  operator_hourly_rate: {amount: 55, currency: USD}
  moderation_cost_per_asset: {amount: 0.0004, currency: USD}
  observability_share: 0.03

"""

WORKLOADS = """# The workload registry: the guide's Step 1 fields for every workload (docs/registry.md).
# A workload missing a Step 1 field loads as "not ready to compare".
workloads:
  - id: chat-assistant-70b
    name: Support chat assistant (Llama 3.3 70B)
    team: support
    type: real-time inference
    unit_of_success: accepted response
    model: {name: meta-llama/Llama-3.3-70B-Instruct, params_b: 70.6, layers: 80, kv_heads: 8, head_dim: 128,
            precision: bf16, context_window: 8192, modality: text}
    request_shape: {mean_input_tokens: 220, p95_input_tokens: 900, mean_output_tokens: 190, concurrent_sessions: 64}
    latency_target: {class: sub-second, percentile: p95, ttft_ms: 3000, tpot_ms: 120}
    operating_mode: always-on
    boundary: public cloud
    tools: [vLLM, Kubernetes]
    acceptance: {rule: succeeded and met every SLO (vLLM goodput)}
    assumptions: {storage_monthly: 400, network_monthly: 250, serving_stack_monthly: 1800}   # USD per month, from the team's own estimates
    benchmarks: {model_id: meta-llama/Llama-3.3-70B-Instruct}
  - id: batch-summarise-70b
    name: Nightly ticket summarisation
    team: support
    type: batch inference
    unit_of_success: accepted record
    model: {name: meta-llama/Llama-3.3-70B-Instruct, params_b: 70.6, layers: 80, kv_heads: 8, head_dim: 128,
            precision: bf16, context_window: 8192, modality: text}
    request_shape: {mean_input_tokens: 1200, mean_output_tokens: 180}
    latency_target: {class: offline}
    operating_mode: scheduled batch
    boundary: public cloud
    tools: [vLLM, Slurm]
    acceptance: {rule: record passes the summary quality filter}
    assumptions: {storage_monthly: 300, network_monthly: 60, serving_stack_monthly: 300}   # USD per month, from the team's own estimates
  - id: llm-pretrain-7b
    name: 7B base model pre-training
    team: research
    type: pre-training
    unit_of_success: completed training run
    model: {name: ledger-7b, params_b: 7, precision: bf16, context_window: 4096, modality: text}
    latency_target: {class: offline}
    operating_mode: experiment
    boundary: dedicated cluster
    tools: [Slurm]
    acceptance: {rule: run reaches the target eval score}
    assumptions: {storage_monthly: 2500, network_monthly: 400}   # USD per month, from the team's own estimates
  - id: chat-ft-llama8b
    name: Full fine-tune of Llama 3.1 8B for chat
    team: research
    type: full fine-tune
    unit_of_success: accepted checkpoint
    model: {name: meta-llama/Llama-3.1-8B, params_b: 8, precision: bf16, context_window: 8192, modality: text}
    latency_target: {class: offline}
    operating_mode: experiment
    boundary: public cloud
    tools: [Slurm]
    acceptance: {rule: checkpoint passes the eval gate}
    assumptions: {storage_monthly: 150, network_monthly: 20}   # USD per month, from the team's own estimates
  - id: support-lora-8b
    name: LoRA adapters for support intents
    team: support
    type: lora fine-tune
    unit_of_success: accepted checkpoint
    model: {name: meta-llama/Llama-3.1-8B, params_b: 8, precision: bf16, quantisation: qlora-nf4, context_window: 4096, modality: text}
    latency_target: {class: offline}
    operating_mode: experiment
    boundary: public cloud
    tools: [Kubernetes]
    acceptance: {rule: adapter passes the intent eval}
    assumptions: {storage_monthly: 40, network_monthly: 5}   # USD per month, from the team's own estimates
  - id: search-embed
    name: Search embeddings
    team: platform
    type: embedding
    unit_of_success: accepted record
    model: {name: BAAI/bge-large-en-v1.5, params_b: 0.335, precision: fp16, context_window: 512, modality: text}
    latency_target: {class: seconds}
    operating_mode: always-on
    boundary: public cloud
    tools: [Triton, Kubernetes]
    acceptance: {rule: record embedded without error}
    assumptions: {storage_monthly: 120, network_monthly: 40, serving_stack_monthly: 200}   # USD per month, from the team's own estimates
  - id: product-images
    name: Product image generation
    team: creative
    type: image generation
    unit_of_success: accepted image
    model: {name: stabilityai/sdxl, params_b: 3.5, precision: fp16, modality: image}
    latency_target: {class: minutes}
    operating_mode: scheduled batch
    boundary: public cloud
    tools: [ComfyUI]
    acceptance: {rule: image passes moderation and the quality filter}
    assumptions: {storage_monthly: 180, network_monthly: 90}   # USD per month, from the team's own estimates
  - id: promo-video
    name: Promo video clips
    team: creative
    type: video generation
    unit_of_success: accepted clip
    model: {name: video-diffusion-xl, params_b: 14, precision: bf16, modality: video}
    latency_target: {class: minutes}
    operating_mode: seasonal burst
    boundary: public cloud
    tools: [ComfyUI]
    acceptance: {rule: clip passes operator review}
    assumptions: {storage_monthly: 260, network_monthly: 120}   # USD per month, from the team's own estimates
  - id: nightly-evals
    name: Nightly evaluation suites
    team: research
    type: evaluation
    unit_of_success: completed eval suite
    model: {name: ledger-7b, params_b: 7, precision: bf16, modality: text}
    latency_target: {class: offline}
    operating_mode: scheduled batch
    boundary: public cloud
    tools: [Ray]
    acceptance: {rule: every task of the suite completed}
    assumptions: {storage_monthly: 30, network_monthly: 10}   # USD per month, from the team's own estimates
  - id: code-agent
    name: Coding agent (API route)
    team: platform
    type: coding agent
    unit_of_success: accepted patch
    model: {name: claude-3-5-sonnet, modality: text}
    latency_target: {class: minutes}
    operating_mode: always-on
    boundary: managed API
    tools: [provider endpoint]
    acceptance: {rule: patch merged after review}
    assumptions: {gateway_monthly: 150}   # USD per month, from the team's own estimates
"""

NOTEBOOK = """  - id: {wid}
    name: Developer notebooks ({team})
    team: {team}
    type: notebook
    unit_of_success: notebook hour
    model: {{name: various, modality: text}}
    latency_target: {{class: seconds}}
    operating_mode: developer notebook
    boundary: public cloud
    tools: [Jupyter, Slurm]
    acceptance: {{rule: session used the GPU}}
    assumptions: {{storage_monthly: 25, network_monthly: 5}}   # USD per month, from the team's own estimates
"""


def teams_yaml(fleet: Fleet) -> str:
    out = ["# Teams that own workloads and receive chargeback lines.",
           "# `aliases` are tag values (any tag key listed in policies.tag_keys.team) that mean this team.",
           "teams:"]
    for i, team in enumerate(fleet.teams):
        name, cc, owner, budget, aliases = TEAM_INFO.get(
            team, (f"Team {team[-2:]}", f"CC-{1001 + i}", f"{team}@example.com", 20000, []))
        out += [f"  - id: {team}", f"    name: {name}", f"    cost_center: {cc}", f"    owner: {owner}",
                f"    budget: {{monthly: {budget}, currency: USD}}", f"    aliases: [{', '.join(aliases)}]"]
    out += ["", POLICIES.rstrip("\n"), "", "mappings:"]
    for team in fleet.teams:
        # AWS linked accounts and Azure subscriptions are both named `<team>-prod`.
        out.append(f'  - {{kind: subaccount, match: "{sub_account("aws", team)[1]}", team: {team}}}')
        out.append(f'  - {{kind: slurm_account, match: "{team}", team: {team}}}')
        out.append(f'  - {{kind: namespace, match: "{team}", team: {team}}}')
        out.append(f'  - {{kind: api_team, match: "{team}", team: {team}}}')
    return "\n".join(out) + "\n"


def workloads_yaml(fleet: Fleet) -> str:
    text = WORKLOADS
    for wid, team in fleet.workload_team.items():
        text = re.sub(rf"(  - id: {re.escape(wid)}\n(?:    (?!team:).*\n)*?    team: )\S+", rf"\g<1>{team}", text)
    for wid in fleet.notebook_workloads:
        text += NOTEBOOK.format(wid=wid, team=fleet.workload_team[wid])
    return text


def write_registry(fleet: Fleet, out: Path) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "teams.yaml").write_text(teams_yaml(fleet), encoding="utf-8")
    (out / "workloads.yaml").write_text(workloads_yaml(fleet), encoding="utf-8")
    return {"teams.yaml": len(fleet.teams), "workloads.yaml": len(fleet.workload_team)}
