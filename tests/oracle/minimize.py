"""Greedy minimisation of a disagreeing `hdrf sim` scenario: drop steps,
jobs (with the steps naming them) and queue fields while the oracle and
hdrf still disagree (and hdrf still accepts the file).

    python3 -m oracle.minimize --hdrf PATH --seed N [--gate] [--user-limits]
"""

import argparse
import copy
import json

import yaml

from . import differential, scenario


def _disagrees(hdrf, doc):
    try:
        diffs = differential.check_sim(hdrf, doc)
    except Exception:           # the oracle refused the reduced case
        return False
    return bool(diffs) and not diffs[0].startswith("hdrf sim failed")


def _job_name(step):
    if isinstance(step, dict):
        (kind, args), = step.items()
        return args.get("name") if kind == "submit" else args.get("job")
    return None


def minimize(hdrf, doc):
    changed = True
    while changed:
        changed = False
        # steps, last first
        for index in reversed(range(len(doc["steps"]))):
            trial = copy.deepcopy(doc)
            del trial["steps"][index]
            if _disagrees(hdrf, trial):
                doc, changed = trial, True
        # jobs (initial or submitted) with every step naming them
        names = [j["name"] for j in doc.get("jobs", [])] + \
            [_job_name(s) for s in doc["steps"] if isinstance(s, dict) and "submit" in s]
        for name in names:
            trial = copy.deepcopy(doc)
            trial["jobs"] = [j for j in trial.get("jobs", []) if j["name"] != name]
            trial["steps"] = [s for s in trial["steps"] if _job_name(s) != name]
            if _disagrees(hdrf, trial):
                doc, changed = trial, True
        # queue fields, then whole queue entries
        for qi in reversed(range(len(doc.get("queues", [])))):
            for key in list(doc["queues"][qi]):
                if key == "path":
                    continue
                trial = copy.deepcopy(doc)
                del trial["queues"][qi][key]
                if _disagrees(hdrf, trial):
                    doc, changed = trial, True
            trial = copy.deepcopy(doc)
            path = trial["queues"][qi]["path"]
            used = any(j.get("queue", "").startswith(path) for j in trial.get("jobs", [])) or \
                any(isinstance(s, dict) and "submit" in s and
                    s["submit"].get("queue", "").startswith(path) for s in trial["steps"])
            if not used:
                del trial["queues"][qi]
                if _disagrees(hdrf, trial):
                    doc, changed = trial, True
        # job fields
        for where in ("jobs",):
            for ji in range(len(doc.get(where, []))):
                for key in ("weight", "minAvailable", "user"):
                    if key in doc[where][ji]:
                        trial = copy.deepcopy(doc)
                        del trial[where][ji][key]
                        if _disagrees(hdrf, trial):
                            doc, changed = trial, True
    return doc


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hdrf", required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--gate", action="store_true")
    parser.add_argument("--user-limits", action="store_true")
    parser.add_argument("--large", action="store_true")
    args = parser.parse_args()
    doc = differential.sim_scenario(args.seed, args.user_limits, args.gate, args.large)
    doc = minimize(args.hdrf, doc)
    print(yaml.safe_dump(doc, sort_keys=False))
    print("# oracle:", json.dumps(scenario.run(copy.deepcopy(doc))))
    for line in differential.check_sim(args.hdrf, doc):
        print("#", line)


if __name__ == "__main__":
    main()
