#!/usr/bin/env bash
# How the box learners' κ (BOX_KAPPA, learn/src/domain/mod.rs) was chosen (docs/boxes.md, "The
# constants"): LDP-TGP-UCB (TGP-UCB with --eps none) on functions drawn from a GP prior of known
# lengthscale, seeds and settings reported nowhere, for a grid of κ; prints each setting's R_T
# (summed over 6 trials) over uniform random search's, and for each κ the geometric mean and the
# worst of its ratio to the best κ of each setting. Each κ runs as --beta-scale κ / BOX_KAPPA.
# (The table in docs/boxes.md was measured before BOX_KAPPA existed, as 0.3 × a multiplier;
# a κ that differs in its last bit may change a trial.) About 35 minutes on 2 cores.
#
# With --points, the same for the large point sets' κ (POINT_SET_KAPPA,
# learn/src/domain/points.rs; docs/your-problem.md, "Many points"): the learner of
# ldp_learn::domain::points on 10⁴ or 10⁵ points drawn uniformly from the unit cube (a new set
# each trial). About 50 minutes on 2 cores.
#
# With --moma, the box settings for (LDP-)MoMA-GP-UCB's κ on a box (BOX_MOMA_KAPPA,
# learn/src/domain/moma.rs; docs/boxes.md, "The constants"). About 15 minutes on 2 cores.
#
# Usage: scripts/choose-box-kappa.sh [--points | --moma] [OUT_DIR] (default
# /tmp/choose-box-kappa, /tmp/choose-point-set-kappa or /tmp/choose-box-moma-kappa).
set -euo pipefail
mode=${1:-}
case $mode in --points | --moma) shift ;; *) mode= ;; esac
cargo build --release -q -p ldp-learn --example box_calibration
bin=${CARGO_TARGET_DIR:-target}/release/examples/box_calibration
learner=tgp
box_settings=(
  "d2 --d 2 --lengthscale 0.3 --horizon 10000 --seed 6100"
  "d3 --d 3 --lengthscale 0.25 --horizon 10000 --seed 6200"
  "d5 --d 5 --lengthscale 0.35 --horizon 10000 --seed 6300"
  "d3-raw --d 3 --lengthscale 0.25 --eps none --horizon 10000 --seed 6400"
  "d2-T2000 --d 2 --lengthscale 0.15 --horizon 2000 --seed 6500"
)
if [ "$mode" = --moma ]; then
  out=${1:-/tmp/choose-box-moma-kappa}
  kappas=${KAPPAS:-"0.009375 0.01875 0.0375 0.075 0.15 0.3 0.6"}
  unit=$(sed -n 's/^pub const BOX_MOMA_KAPPA: f64 = \(.*\);/\1/p' learn/src/domain/moma.rs)
  learner=moma
  settings=("${box_settings[@]}")
elif [ "$mode" = --points ]; then
  out=${1:-/tmp/choose-point-set-kappa}
  kappas=${KAPPAS:-"0.0375 0.075 0.15 0.21 0.3"}
  unit=$(sed -n 's/^pub const POINT_SET_KAPPA: f64 = \(.*\);/\1/p' learn/src/domain/points.rs)
  settings=(
    "p2 --points 10000 --d 2 --lengthscale 0.3 --horizon 10000 --seed 8100"
    "p3 --points 100000 --d 3 --lengthscale 0.25 --horizon 10000 --seed 8200"
    "p5 --points 10000 --d 5 --lengthscale 0.35 --horizon 10000 --seed 8300"
    "p3-raw --points 10000 --d 3 --lengthscale 0.25 --eps none --horizon 10000 --seed 8400"
    "p2-T2000 --points 100000 --d 2 --lengthscale 0.15 --horizon 2000 --seed 8500"
  )
else
  out=${1:-/tmp/choose-box-kappa}
  kappas=${KAPPAS:-"0.03 0.045 0.075 0.105 0.15 0.21 0.3"}
  unit=$(sed -n 's/^pub const BOX_KAPPA: f64 = \(.*\);/\1/p' learn/src/domain/mod.rs)
  settings=("${box_settings[@]}")
fi
mkdir -p "$out"
runs=$(for k in $kappas; do printf 'fitted@%s,' "$(python3 -c "print($k / $unit)")"; done)
runs=${runs%,}
for s in "${settings[@]}"; do
  name=${s%% *}
  # shellcheck disable=SC2086
  "$bin" ${s#* } --learner "$learner" --trials 6 --runs "$runs" > "$out/$name.txt"
done
python3 - "$out" "$unit" "${settings[@]%% *}" <<'PY'
import math, sys
out, unit, names = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
table = {}
for name in names:
    sums = {}
    for line in open(f"{out}/{name}.txt"):
        p = line.strip().split(",")
        if len(p) == 6 and p[0].isdigit():
            r = sums.setdefault(p[1], [0.0, 0.0])
            r[0] += float(p[2]); r[1] += float(p[3])
    table[name] = {run: a / b for run, (a, b) in sums.items()}
runs = sorted(set.intersection(*(set(t) for t in table.values())), key=lambda r: float(r.split("@")[1]))
print("| κ | " + " | ".join(names) + " | geometric mean / best | worst / best |")
print("|---" * (len(names) + 3) + "|")
for r in runs:
    ratios = [table[n][r] / min(table[n][q] for q in runs) for n in names]
    gm = math.exp(sum(map(math.log, ratios)) / len(ratios))
    cells = " | ".join(f"{table[n][r]:.3f}" for n in names)
    print(f"| {unit * float(r.split('@')[1]):.3g} | {cells} | {gm:.3f} | {max(ratios):.3f} |")
PY
