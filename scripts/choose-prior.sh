#!/usr/bin/env bash
# How the default prior of a data table was chosen (docs/constants.md, "The prior of a data
# table"): run every seed-000 learner, with UCB1 beside them, under each `--prior` on settings
# that are reported nowhere (the real-data figures at other seeds, horizons and ε, and the
# project's own tables from scripts/own-tables.py), and print each learner's ratio to uniform
# play, the geometric mean over all (learner, setting) and the worst ratio. About 5 minutes on
# 2 cores.
#
# Usage: scripts/choose-prior.sh [OUT_DIR] (default /tmp/choose-prior).
# shellcheck source=scripts/grid.sh
source "$(dirname "$0")/grid.sh"
out=${1:-/tmp/choose-prior}
data=${DATA:-data}
release_host_sim
python3 scripts/own-tables.py "$out/tables"
settings=(
  "fig2b --seed 9100 --horizon 2000 --eps 1"
  "fig2c --seed 8100 --horizon 2000 --eps 2"
  "fig2e --seed 6100 --horizon 2000"
  "fig2f --seed 7100 --horizon 1500"
  "custom --arms $out/tables/trend.csv --seed 11 --horizon 2000 --eps 1"
  "custom --arms $out/tables/seasonal.csv --seed 12 --horizon 2000 --eps 2"
  "custom --arms $out/tables/trap.csv --seed 13 --horizon 2000 --eps none"
  "custom --arms $out/tables/heavy.csv --seed 14 --horizon 2000 --eps none"
)
priors=(independent shrunk empirical)
run_one() {
  # shellcheck disable=SC2086
  "$bin" run $2 --data "$data" --prior "$1" --quiet --out "$3" > /dev/null 2>&1
}
run_grid "$out/tables/" "${priors[@]}"
python3 - "$out" "${priors[@]}" <<'PY'
import json, math, os, sys
out, priors = sys.argv[1], sys.argv[2:]
names = sorted(os.listdir(os.path.join(out, priors[0])))
print("| prior | " + " | ".join(names) + " | geometric mean | worst |")
print("|---" * (len(names) + 3) + "|")
for p in priors:
    cells, ratios = [], []
    for name in names:
        run = json.load(open(os.path.join(out, p, name, "run.json")))
        r = [x["vs_uniform"] for x in run["results"] if not x["reference"] and x["label"] != "UCB1"]
        u = [x["vs_uniform"] for x in run["results"] if x["label"] == "UCB1"]
        ratios += r
        cells.append("/".join(f"{x:.2f}" for x in r) + (f" (UCB1 {u[0]:.2f})" if u else ""))
    gm = math.exp(sum(math.log(max(x, 1e-9)) for x in ratios) / len(ratios))
    print(f"| {p} | " + " | ".join(cells) + f" | {gm:.3f} | {max(ratios):.2f} |")
PY
