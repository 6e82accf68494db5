"""Overload: what the Lab's design does past capacity when its replicas bound their queues, drop
what waits too long and its clients retry: goodput against offered load up to 3× capacity."""

import streamlit as st

from sdlab_ui import cache, state
from sdlab_ui.overload import burst, checks, controls, fallback, fields, priorities, sections

lab = state.current()
workload = lab.workload
st.title("Overload: shedding, retries and goodput")
st.caption(
    "The sidebar's design, per replica: a queue limit rejects at once, a deadline drops what "
    "waited too long, clients retry what failed. Goodput is requests per second served within "
    "the p99 target. Queueing: M/D/c below capacity, Whitt's scaled M/M/c/K past it."
)
controls.show_notices()
values = controls.draw()
policy, problem = fields.build_policy(values)
if policy is None:
    st.info(problem, icon=":material/info:")
else:
    sections.deadline_check(workload, policy)
    result = sections.cached_result(workload, policy)
    sections.headline(result)
    judged = cache.lab_view(lab.workload, lab.model, lab.residency).result
    sections.lab_p99_note(result, judged.p99_ms)
    curve = sections.cached_curve(workload, policy)
    sections.chart(curve, workload.rate_rps)
    sections.table(curve)
    checks.simulator(workload, policy)
    burst.render_burst(workload, policy)
priorities.render_priorities(workload)
fallback.render_fallback(workload, policy)
