{# GPU model named in free text (benchmark files, own CSVs: "NVIDIA A100-SXM4-40GB") -> canonical
   gpu_catalog id, or null when no catalogued GPU is named. Mirrors sources/prices/_gpus.py (DuckDB's
   RE2 has no look-around, so boundaries are spelled as character classes); A100 with "80" anywhere
   after it is the 80GB part (PCIe included). Order matters: specific names first. #}
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
        ('A100.*80', 'A100-80GB'),
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

{# Bytes per weight parameter for a precision / quantisation name (bf16 when unknown). #}
{% macro bytes_per_param(precision) -%}
    case lower(coalesce({{ precision }}, 'bf16'))
        when 'fp32' then 4.0 when 'tf32' then 4.0
        when 'fp8' then 1.0 when 'int8' then 1.0
        when 'int4' then 0.5 when 'fp4' then 0.5 when 'nf4' then 0.5
        else 2.0
    end
{%- endmacro %}
