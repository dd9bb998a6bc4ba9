{# generated from warehouse/reference.py; do not edit (regenerate: .venv/bin/python -m warehouse.reference --write).
   A GPU named somewhere -> canonical gpu_catalog id: the gpu_aliases seed first (join_gpu_alias),
   else the name rules (canonical_gpu_model); sources/prices/_gpus.py applies the same rules. #}

{# GPU model named in free text (benchmark files, own CSVs: "NVIDIA A100-SXM4-40GB") -> canonical
   gpu_catalog id, or null when no catalogued GPU is named. GPU_NAME_RULES: first match wins. #}
{% macro canonical_gpu_model(expr) -%}
    {%- set rules = [
        ('GB200', 'GB200'),
        ('B300', 'B300-288GB'),
        ('B200', 'B200-180GB'),
        ('GH200', 'GH200-96GB'),
        ('H200', 'H200-SXM-141GB'),
        ('H100\\W*NVL', 'H100-NVL-94GB'),
        ('H100\\W*PCIE', 'H100-PCIe-80GB'),
        ('H100', 'H100-SXM-80GB'),
        ('A100\\W*((SXM4?|PCIE)\\W*)?80', 'A100-80GB'),
        ('A100', 'A100-40GB'),
        ('L40S', 'L40S-48GB'),
        ('L40([^0-9]|$)', 'L40-48GB'),
        ('(^|[^A-Z0-9])L4([^0-9]|$)', 'L4-24GB'),
        ('A10G', 'A10G-24GB'),
        ('(^|[^A-Z0-9])A10([^0-9G]|$)', 'A10-24GB'),
        ('T4G', 'T4G-16GB'),
        ('(^|[^A-Z0-9])T4([^0-9]|$)', 'T4-16GB'),
        ('V100\\W*32', 'V100-32GB'),
        ('V100', 'V100-16GB'),
        ('P100', 'P100-16GB'),
        ('(^|[^A-Z0-9])P40([^0-9]|$)', 'P40-24GB'),
        ('(^|[^A-Z0-9])P4([^0-9A-Z]|$)', 'P4-8GB'),
        ('K80', 'K80-12GB'),
        ('M60', 'M60-8GB'),
        ('RTX\\W*PRO\\W*6000', 'RTX-PRO-6000-96GB'),
        ('(RTX\\W*)?A6000', 'RTX-A6000-48GB'),
        ('4090', 'RTX-4090-24GB'),
        ('5090', 'RTX-5090-32GB'),
        ('MI300X', 'MI300X-192GB'),
    ] -%}
    case
    {%- for pattern, model in rules %}
        when {{ gpu_ledger.regex_search("upper(replace(" ~ expr ~ ", '_', ' '))", "'" ~ pattern ~ "'") }} then '{{ model }}'
    {%- endfor %}
    end
{%- endmacro %}

{# The one join to the gpu_aliases seed, on the one key: the name trimmed and lower-cased (the seed's
   aliases are stored that way). Use the joined relation's gpu_model (null when the name is no alias):
       coalesce(aliases.gpu_model, {{ canonical_gpu_model('t.name') }})
       ... from t {{ join_gpu_alias('t.name') }}
   `relation_alias` names the joined seed when a model joins it twice. #}
{% macro join_gpu_alias(expr, relation_alias='aliases') -%}
    left join {{ ref('gpu_aliases') }} as {{ relation_alias }} on {{ relation_alias }}.alias = lower(trim({{ expr }}))
{%- endmacro %}
