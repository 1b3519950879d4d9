#!/usr/bin/env python3
"""The table of a grid of kappa (scripts/choose-kappa-karmed.sh, choose-kappa-ldp-ucb.sh): per
kappa, the ratio to uniform play of the learner LEARNER in each setting (`all`: of every learner
but uniform play and UCB1, joined by /), the geometric mean over all (learner, setting), the worst
mean ratio, and the largest share of one (learner, setting)'s trials that ended worse than
uniform play by more than 1 %.

Usage: scripts/kappa-table.py OUT KAPPA0 LEARNER DROP SCALE...
  reads OUT/SCALE/SETTING/run.json for each --beta-scale SCALE; KAPPA0 is the KAPPA they
  multiply; DROP, comma-separated, the parts of a setting's directory name that its column
  heading leaves out.
"""
import json
import math
import os
import sys

out, kappa0, learner, drop, scales = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]


def heading(name):
    for part in drop.split(","):
        name = name.replace(part, "")
    return name.replace("--", "").replace("_", " ")


def learners(results):
    if learner == "all":
        return [x for x in results if not x["reference"] and x["label"] != "UCB1"]
    return [next(x for x in results if x["label"] == learner)]


names = sorted(os.listdir(os.path.join(out, scales[0])))
print("| kappa | " + " | ".join(heading(n) for n in names) + " | geometric mean | worst | trials worse than uniform |")
print("|---" * (len(names) + 4) + "|")
for s in scales:
    cells, ratios, worse = [], [], 0.0
    for setting in names:
        run = json.load(open(os.path.join(out, s, setting, "run.json")))
        uniform = next(x for x in run["results"] if x["reference"])["final_mean"]
        rows = learners(run["results"])
        for x in rows:
            worse = max(worse, sum(f > 1.01 * uniform for f in x["finals"]) / len(x["finals"]))
        r = [x["vs_uniform"] for x in rows]
        ratios += r
        cells.append("/".join(f"{x:.2f}" for x in r))
    gm = math.exp(sum(math.log(max(x, 1e-9)) for x in ratios) / len(ratios))
    print(f"| {kappa0 * float(s):.2f} | " + " | ".join(cells) + f" | {gm:.3f} | {max(ratios):.2f} | {worse:.0%} |")
