#!/usr/bin/env bash
# How LDP-UCB's one multiplier κ was chosen (docs/constants.md, "LDP-UCB"): run LDP-UCB alone on
# tables reported nowhere — the project's own tables of scripts/own-tables.py (trend, seasonal,
# trap) and the kinds of scripts/karmed-tables.py drawn with seed 21 (close3, heavy6, clicks20) —
# at horizons and ε off the reported grid (T = 3000, 30000; ε = 0.5, 2), for a grid of κ, and
# print its ratio to uniform play per setting, the geometric mean, the worst mean ratio, and the
# largest share of one setting's trials that ended worse than uniform play by more than 1 %.
# The rule (the K-armed learners' rule): the smallest geometric mean among the κ at which no
# setting ends worse than uniform play in more than a quarter of its trials.
# Never on the stock or light-sensor tables, nor on any paper figure.
# κ = KAPPA × --beta-scale (KAPPA as in learn/src/bandit/ldp_ucb.rs). A few minutes on 2 cores.
#
# Usage: scripts/choose-kappa-ldp-ucb.sh [OUT_DIR] [BIN] (default /tmp/choose-kappa-ldp-ucb and this
#        tree's release build); TRIALS (default 20) per setting, KAPPAS the grid.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/choose-kappa-ldp-ucb}
if [ -n "${2:-}" ]; then bin=$2; else
  cargo build --release -p host-sim --quiet
  bin=${CARGO_TARGET_DIR:-target}/release/host-sim
fi
mkdir -p "$out/tables"
python3 scripts/own-tables.py "$out/tables" > /dev/null
python3 scripts/karmed-tables.py "$out/tables" 21
t=$out/tables
settings=(
  "--arms $t/trend.csv --seed 2100 --horizon 3000 --eps 2"
  "--arms $t/trend.csv --seed 2200 --horizon 30000 --eps 0.5"
  "--arms $t/seasonal.csv --seed 2300 --horizon 30000 --eps 2"
  "--arms $t/trap.csv --seed 2400 --horizon 3000 --eps 2"
  "--arms $t/trap.csv --seed 2500 --horizon 30000 --eps 0.5"
  "--arms $t/close3.csv --seed 2600 --horizon 3000 --eps 2"
  "--arms $t/close3.csv --seed 2700 --horizon 30000 --eps 0.5"
  "--arms $t/heavy6.csv --seed 2800 --horizon 30000 --eps 2"
  "--arms $t/clicks20.csv --seed 2900 --horizon 30000 --eps 2"
)
read -r -a kappas <<< "${KAPPAS:-0.1 0.2 0.3 0.5 0.7 1.0}"
kappa0=$(sed -n 's/^pub const KAPPA: f64 = \([0-9.]*\);/\1/p' learn/src/bandit/ldp_ucb.rs)
scales=()
for k in "${kappas[@]}"; do scales+=("$(python3 -c "print($k / $kappa0)")"); done
for scale in "${scales[@]}"; do
  for setting in "${settings[@]}"; do
    name=${setting//$t\//}
    dir="$out/$scale/${name// /_}"
    [ -f "$dir/run.json" ] && continue
    # shellcheck disable=SC2086
    "$bin" run custom $setting --family bandit --algorithms LDP-UCB --trials "${TRIALS:-20}" \
      --beta-scale "$scale" --quiet --out "$dir" > /dev/null
  done
done
python3 - "$out" "$kappa0" "${scales[@]}" <<'PY'
import json, math, os, sys
out, kappa0, scales = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
names = sorted(os.listdir(os.path.join(out, scales[0])))
short = [n.replace("--arms_", "").replace(".csv", "").replace("--", "").replace("_", " ") for n in names]
print("| kappa | " + " | ".join(short) + " | geometric mean | worst | trials worse than uniform |")
print("|---" * (len(names) + 4) + "|")
for s in scales:
    cells, ratios, worse = [], [], 0.0
    for setting in names:
        run = json.load(open(os.path.join(out, s, setting, "run.json")))
        uniform = next(x for x in run["results"] if x["reference"])["final_mean"]
        x = next(x for x in run["results"] if x["label"] == "LDP-UCB")
        worse = max(worse, sum(f > 1.01 * uniform for f in x["finals"]) / len(x["finals"]))
        ratios.append(x["vs_uniform"])
        cells.append(f"{x['vs_uniform']:.2f}")
    gm = math.exp(sum(math.log(max(r, 1e-9)) for r in ratios) / len(ratios))
    print(f"| {kappa0 * float(s):.2f} | " + " | ".join(cells) + f" | {gm:.3f} | {max(ratios):.2f} | {worse:.0%} |")
PY
