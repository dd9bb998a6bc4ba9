-- Warns with every tag key that looks like an owner key (team, owner, cost centre, business unit,
-- project, workload, app) but matches no key policies.tag_keys or the built-in list reads, with its
-- cost (fct_unmatched_tag_keys): add the key, in any spelling, to policies.tag_keys.<dimension>.
-- Warn, not error: the lines are published, charged by the next rule or to '(unallocated)'.
{{ config(severity='warn', meta={'title': 'Owner-like tag keys no policy reads', 'counts': 'tag keys'}) }}
select tag_key_as_written, tag_key, currency, sum(lines) as lines, sum(effective_cost) as effective_cost
from {{ ref('fct_unmatched_tag_keys') }}
group by tag_key_as_written, tag_key, currency
