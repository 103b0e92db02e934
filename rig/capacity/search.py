"""The search for the highest offered load that holds: double until a step does not hold (a bracket), then bisect
between the highest step that held and the lowest that did not, until they are one apart. It stops early at a
collapse only when nothing held below it, when the client is saturated (its numbers would be the client's), and
at its step and time limits."""

from __future__ import annotations

from collections.abc import Callable

from rig.results.capacity import CapacityResult, CapacityStep


def capacity_search(run_step: Callable[[int], CapacityStep], *, start: int, max_users: int, max_steps: int,
                    time_left: Callable[[], float], step_cost_s: float) -> CapacityResult:
    """Run steps through `run_step(users)` until the bracket is one step wide; the steps, the bracket and why it
    stopped (`conclude` turns them into the answer)."""
    out = CapacityResult()
    n = max(1, start)
    while True:
        if len(out.steps) >= max_steps:
            out.stopped_because = f"the step limit ({max_steps} steps)"
            break
        if time_left() < step_cost_s:
            out.stopped_because = f"the time budget (a step needs about {step_cost_s:.0f} s)"
            break
        step = run_step(n)
        out.steps.append(step)
        if step.call == "client_saturated":
            out.stopped_because = f"the client was saturated at {n} users: {step.client.why}"
            break
        if step.why.startswith("stopped"):
            out.stopped_because = step.why
            break
        if step.call == "holds":
            out.holds = max(out.holds or 0, n)
        else:
            out.breaks = n if out.breaks is None else min(out.breaks, n)
        if out.breaks is None:
            if n >= max_users:
                out.stopped_because = f"every step held up to the largest asked for ({max_users} users)"
                break
            n = min(n * 2, max_users)
            continue
        low = out.holds or 0
        if out.breaks - low <= 1:
            out.stopped_because = "the bracket is one step wide"
            break
        n = (low + out.breaks) // 2
    return out


def conclude(result: CapacityResult) -> CapacityResult:
    """The answer in words, the SLOs that broke first, and the first resource that reached its limit."""
    by_users = {s.users: s for s in result.steps}
    rising = sorted(result.steps, key=lambda s: (s.users, s.index))
    first = next(((r, s) for s in rising for r in sorted(s.resources, key=lambda r: r.first_at_limit_ms or 0)
                  if r.at_limit), None)
    if first is not None:
        result.saturating, result.saturating_at = first[0].name, first[1].users
    if result.breaks is not None and result.breaks in by_users:
        step = by_users[result.breaks]
        result.first_broken = [c.text for c in step.slos if c.call == "breaks"] or [step.why]
    saturated = any(s.call == "client_saturated" for s in result.steps)
    if saturated or result.holds is None:
        result.verdict = "undecided"
        result.answer = ("undecided: " + result.stopped_because) if saturated else \
            "undecided: no step held every threshold" + (f" (at {result.breaks} users: "
                                                          f"{'; '.join(result.first_broken)})" if result.breaks else "")
    elif result.breaks is None:
        result.verdict = "above_max"
        result.answer = (f"holds at least {result.holds} researchers with {result.confidence:.0%} confidence "
                         f"(no step broke; the search stopped at {result.stopped_because})")
    else:
        result.verdict = "found"
        broke = "; ".join(result.first_broken)
        result.answer = (f"holds {result.holds} researchers with {result.confidence:.0%} confidence; at "
                         f"{result.breaks} users {broke} broke first")
    if result.saturating and result.verdict != "undecided":
        result.answer += f"; {result.saturating} reached its limit first (at {result.saturating_at} users)"
    return result
