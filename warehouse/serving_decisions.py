"""Reader for the GPU decision page's first table: one row per workload with today's cost, the best option at
equal demand, its saving per month and per output, its evidence grade and the benchmark to run next.

The choice follows the decision record (`reporting.decisions.build_decision`): the best option is the
lowest-ranked route with status 'eligible' that saves money; without one, the cheapest route 'eligible pending
evidence' that would save money (named with the benchmark that settles it); else today's setup is kept.
Same rules as `warehouse.serving`: one read-only query, values bound as parameters, money as Decimal.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from warehouse.serving import query, require, schema


def decision_summary(path: Path, team: str | None = None, currency: str | None = None) -> pd.DataFrame:
    """Per workload (largest saving first): team, unit of success, today's monthly and unit cost, the best
    option (candidate, choice 'switch' / 'pending evidence' / 'keep today', monthly cost, saving per month,
    saving per accepted output, evidence grade, next benchmark), and how many routes were compared."""
    require(path, "fct_candidate_comparison", ["workload_id", "candidate", "route_kind", "status", "evidence",
                                               "evidence_to_run", "monthly_cost", "monthly_savings",
                                               "accepted_outputs", "rank", "currency"])
    has_registry = "dim_workload" in schema(path)
    registry = ("select workload_id, team_id, unit_of_success from dim_workload" if has_registry else
                "select null::varchar as workload_id, null::varchar as team_id, null::varchar as unit_of_success "
                "where false")
    return query(path, f"""
        with c as (select * from fct_candidate_comparison where (?::varchar is null or currency = ?)),
             today as (select workload_id, currency, monthly_cost as today_monthly_cost,
                              effective_unit_cost as today_unit_cost, accepted_outputs
                       from c where route_kind = 'current'),
             ranked as (
               select workload_id, candidate, status, evidence, evidence_to_run, monthly_cost, monthly_savings,
                      accepted_outputs,
                      row_number() over (partition by workload_id
                                         order by case status when 'eligible' then 0 else 1 end,
                                                  case when status = 'eligible' then rank end, monthly_cost,
                                                  candidate) as n
               from c where status in ('eligible', 'eligible pending evidence') and monthly_savings > 0),
             best as (select * from ranked where n = 1),
             routes as (select workload_id, count(*) filter (where route_kind in ('gpu', 'api')) as routes,
                               count(*) filter (where status = 'eligible') as eligible_routes
                        from c group by workload_id),
             missing as (select workload_id, min(coalesce(evidence_to_run, candidate)) as needed
                         from c where route_kind = 'missing_evidence' group by workload_id),
             w as ({registry})
        select r.workload_id, w.team_id, coalesce(w.unit_of_success, 'accepted output') as unit_of_success,
               coalesce(t.currency, 'USD') as currency, t.today_monthly_cost, t.today_unit_cost,
               b.candidate as best_candidate,
               case when b.status = 'eligible' then 'switch' when b.status is not null then 'pending evidence'
                    else 'keep today' end as choice,
               b.monthly_cost as best_monthly_cost, b.monthly_savings,
               b.monthly_savings / nullif(coalesce(b.accepted_outputs, t.accepted_outputs), 0) as saving_per_output,
               b.evidence, coalesce(b.evidence_to_run, m.needed) as next_benchmark, r.routes, r.eligible_routes
        from routes r left join today t using (workload_id) left join best b using (workload_id)
        left join missing m using (workload_id) left join w using (workload_id)
        where (?::varchar is null or w.team_id = ?)
        order by b.monthly_savings desc nulls last, r.workload_id""", [currency, currency, team, team])
