-- Catches GPU price changes larger than var price_jump_factor (default 3) between consecutive
-- intervals: each one needs a human look (real repricing, or a parsing / mapping error).
{{ config(severity='warn', meta={'title': 'GPU price jumps nobody reviewed', 'counts': 'price changes'}) }}

select * from {{ ref('int_gpu_price_jumps') }}
