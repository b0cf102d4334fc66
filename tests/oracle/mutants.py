"""Mutation check of the differential run: plant one deliberate misreading
of the SPEC in the oracle and count the seeds on which hdrf then disagrees.
A mutant nobody notices marks a rule the random cases do not reach.

    python3 -m oracle.mutants --hdrf PATH [--sim 120] [--simulate 40] [NAME ...]
"""

import argparse
import math

from . import differential, model, plan, schedule, simulate

EPS = model.EPS


def _no_pruning():
    original = plan._valid_sequence
    plan._valid_sequence = lambda *a: False
    return lambda: setattr(plan, "_valid_sequence", original)


def _no_helps():
    original = plan._helps
    plan._helps = lambda *a: True
    return lambda: setattr(plan, "_helps", original)


def _gang_unit_one():
    original = plan.unit_tasks
    plan.unit_tasks = lambda victim: 1
    return lambda: setattr(plan, "unit_tasks", original)


def _no_guarantee_clause():
    original = plan.permitted

    def permitted(state, taker, demand, victim, n):
        if victim.leaf is taker.leaf:
            return original(state, taker, demand, victim, n)
        saved = {q: dict(q.guarantee) for q in state.queues.values()}
        ok = original(state, taker, demand, victim, n)
        # Re-run with the taker's side guarantee removed: only the share clause.
        path = taker.leaf.ancestors_and_self()
        for q in path:
            q.guarantee = {}
        share_only = original(state, taker, demand, victim, n)
        for q, g in saved.items():
            q.guarantee = g
        return ok and share_only
    plan.permitted = permitted
    return lambda: setattr(plan, "permitted", original)


def _no_reclaimable():
    original = plan.permitted

    def permitted(state, taker, demand, victim, n):
        saved = {q: q.reclaimable for q in state.queues.values()}
        for q in state.queues.values():
            q.reclaimable = True
        try:
            return original(state, taker, demand, victim, n)
        finally:
            for q, r in saved.items():
                q.reclaimable = r
    plan.permitted = permitted
    return lambda: setattr(plan, "permitted", original)


def _plain_shares_in_keys():
    original = model.State.dominant_share
    model.State.dominant_share = lambda self, vector, free: self.plain_share(vector)
    return lambda: setattr(model.State, "dominant_share", original)


def _no_held_back():
    original = model.State.held_back
    model.State.held_back = lambda self, leaf: {r: 0 for r in self.resources}
    return lambda: setattr(model.State, "held_back", original)


def _admission_ties_last():
    original = schedule.admit

    def admit(state, queue):
        while not queue.is_leaf():
            kids = [c for c in queue.children if c.is_open()]
            best = None
            for c in sorted(kids, key=lambda c: c.name.encode(), reverse=True):
                k = state.plain_share(state.usage(c)) / c.weight
                if best is None or k < best[0] - EPS:
                    best = (k, c)
            queue = best[1]
        return queue
    schedule.admit = simulate.admit = differential.scenario.admit = admit
    return lambda: (setattr(schedule, "admit", original), setattr(simulate, "admit", original),
                    setattr(differential.scenario, "admit", original))


def _reclaim_in_submission_order():
    original = simulate.pick

    def pick(state, eligible):
        if eligible.__code__.co_name == "<lambda>":      # the reclaim phase's pick
            jobs = [j for j in state.jobs if eligible(j)]
            return jobs[0] if jobs else None
        return original(state, eligible)
    simulate.pick = pick
    return lambda: setattr(simulate, "pick", original)


def _max_victims_off_by_one():
    original = plan.compute

    def compute(state, taker, mode="reclaim", max_victims=None):
        return original(state, taker, mode, None if max_victims is None else max_victims + 1)
    plan.compute = compute
    differential.scenario.plans.compute = compute
    return lambda: (setattr(plan, "compute", original),
                    setattr(differential.scenario.plans, "compute", original))


def _short_floor():
    plan.math = type("m", (), {"ceil": staticmethod(math.floor)})
    return lambda: setattr(plan, "math", math)


def _gang_step_one_task():
    original = model.Job.demand_tasks
    model.Job.demand_tasks = lambda self: 1
    return lambda: setattr(model.Job, "demand_tasks", original)


def _scan_ties():
    """The order-dependent tie reading the oracle first had (epsilon-chain)."""
    original = schedule._smallest

    def smallest(items, key_of, tie_of):
        best = best_key = None
        for item in sorted(items, key=tie_of):
            k = key_of(item)
            if best is None or k < best_key - EPS:
                best, best_key = item, k
        return best
    schedule._smallest = smallest
    return lambda: setattr(schedule, "_smallest", original)


MUTANTS = {
    "scan-ties": _scan_ties,
    "no-pruning": _no_pruning,
    "no-helps": _no_helps,
    "gang-unit-one-task": _gang_unit_one,
    "no-guarantee-clause": _no_guarantee_clause,
    "no-reclaimable": _no_reclaimable,
    "plain-shares-in-keys": _plain_shares_in_keys,
    "no-held-back": _no_held_back,
    "admission-ties-last": _admission_ties_last,
    "reclaim-in-submission-order": _reclaim_in_submission_order,
    "maxvictims-off-by-one": _max_victims_off_by_one,
    "short-floor": _short_floor,
    "gang-step-one-task": _gang_step_one_task,
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hdrf", required=True)
    parser.add_argument("--sim", type=int, default=120)
    parser.add_argument("--simulate", type=int, default=40)
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    for name in args.names or MUTANTS:
        undo = MUTANTS[name]()
        try:
            sim = sum(1 for s in range(args.sim) if differential.check_sim(
                args.hdrf, differential.sim_scenario(s, s % 4 == 3, s % 5 == 4)))
            simu = sum(1 for s in range(args.simulate) if differential.check_simulate(
                args.hdrf, *differential.simulate_case(s, s % 4 == 3)))
        finally:
            undo()
        print(f"{name}: sim {sim}/{args.sim}, simulate {simu}/{args.simulate}", flush=True)


if __name__ == "__main__":
    main()
