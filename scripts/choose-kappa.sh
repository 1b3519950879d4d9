#!/usr/bin/env bash
# How the calibrated constants' one multiplier κ was chosen (docs/constants.md): run every
# seed-000 learner on settings that are reported nowhere (other seeds, horizons, ε, noise and
# environments, including the data tables at other horizons and ε) for a grid of κ, and print
# each learner's ratio to uniform play and the geometric mean over all (learner, setting).
# κ = KAPPA × --beta-scale (KAPPA as in learn/src/bo/calibrated.rs). About 10 minutes on 2 cores.
#
# Usage: scripts/choose-kappa.sh [OUT_DIR] (default /tmp/choose-kappa).
# shellcheck source=scripts/grid.sh
source "$(dirname "$0")/grid.sh"
out=${1:-/tmp/choose-kappa}
data=${DATA:-data}
release_host_sim
settings=(
  "fig2a --seed 1000 --horizon 2000 --eps 2"
  "fig3a --seed 2000 --horizon 500 --eps 0.5"
  "fig2d --seed 3000 --horizon 2000 --noise gaussian"
  "fig2d --seed 4000 --horizon 500"
  "device --seed 5000 --horizon 1000 --eps 1"
  "fig2e --seed 6000 --horizon 2000"
  "fig2f --seed 7000 --horizon 500"
  "fig2c --seed 8000 --horizon 2000 --eps 2"
  "fig2b --seed 9000 --horizon 500 --eps 1"
)
kappas=(0.05 0.1 0.2 0.3 0.4 0.6 1.0)
beta_scales learn/src/bo/calibrated.rs
run_one() {
  # shellcheck disable=SC2086
  "$bin" run $2 --data "$data" --beta-scale "$1" --quiet --out "$3" > /dev/null
}
run_grid "" "${scales[@]}"
python3 - "$out" "$kappa0" "${scales[@]}" <<'EOF'
import json, math, os, sys
out, kappa0, scales = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
print("| kappa | " + " | ".join(sorted(os.listdir(os.path.join(out, scales[0])))) + " | geometric mean | worst |")
print("|---" * (len(os.listdir(os.path.join(out, scales[0]))) + 3) + "|")
for s in scales:
    cells, ratios = [], []
    for setting in sorted(os.listdir(os.path.join(out, s))):
        run = json.load(open(os.path.join(out, s, setting, "run.json")))
        r = [x["vs_uniform"] for x in run["results"] if not x["reference"] and x["label"] != "UCB1"]
        ratios += r
        cells.append("/".join(f"{x:.2f}" for x in r))
    gm = math.exp(sum(math.log(max(x, 1e-9)) for x in ratios) / len(ratios))
    print(f"| {kappa0 * float(s):.2f} | " + " | ".join(cells) + f" | {gm:.3f} | {max(ratios):.2f} |")
EOF
