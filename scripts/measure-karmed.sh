#!/usr/bin/env bash
# The K-armed learners' ratio to uniform play (± s.e.) on the data tables, tables of other kinds
# (scripts/karmed-tables.py, seed 0) and seed 004's experiments: the figures of docs/constants.md,
# "K-armed learners". Release build, fixed seeds (--seed 0), 30 trials (tao-*: 90, the default).
#
# Usage: scripts/measure-karmed.sh [OUT_DIR] [BIN] (default /tmp/measure-karmed and this tree's
#        release build; BIN lets an older build be measured the same way); needs ../shared/data.
#        CONSTANTS=paper|practical|calibrated (default calibrated), TRIALS, HORIZONS, TAO=0 to skip
#        the seed-004 sweeps.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/measure-karmed}
data=${DATA:-../shared/data}
if [ -n "${2:-}" ]; then bin=$2; else
  cargo build --release -p host-sim --quiet
  bin=${CARGO_TARGET_DIR:-target}/release/host-sim
fi
constants=${CONSTANTS:-calibrated}
trials=${TRIALS:-30}
horizons=${HORIZONS:-"1000 10000 100000"}
mkdir -p "$out/tables" "$out/$constants"
DATA=$data python3 scripts/karmed-tables.py "$out/tables" 0
tables=("$out/tables/stocks10.csv" "$data/stocks_adjclose.csv" "$data/lightsensor_train.csv"
  "$out/tables/close3.csv" "$out/tables/heavy6.csv" "$out/tables/clicks20.csv")
for table in "${tables[@]}"; do
  name=$(basename "$table" .csv)
  for t in $horizons; do
    for eps in 1 none; do
      dir="$out/$constants/$name-T$t-eps$eps"
      [ -f "$dir/run.json" ] && continue
      "$bin" run custom --arms "$table" --family bandit --eps "$eps" --horizon "$t" --trials "$trials" \
        --seed 0 --constants "$constants" --quiet --out "$dir" > /dev/null 2> "$dir.err" || true
    done
  done
done
if [ "${TAO:-1}" != 0 ]; then
  for e in tao-s1 tao-s2 tao-s3 tao-ldp; do
    dir="$out/$constants/$e"
    [ -f "$dir/run.json" ] && continue
    "$bin" run "$e" --seed 0 --constants "$constants" --quiet --out "$dir" > /dev/null
  done
fi
python3 - "$out/$constants" <<'EOF'
import json, math, os, sys
root = sys.argv[1]
print("| setting | learner | ratio to uniform ± s.e. |")
print("|---|---|---|")
for name in sorted(os.listdir(root)):
    path = os.path.join(root, name, "run.json")
    if not os.path.isfile(path):
        err = os.path.join(root, name)
        if name.endswith(".err") and not os.path.isfile(os.path.join(root, name[:-4], "run.json")):
            lines = [l for l in open(err).read().splitlines() if l.startswith("error")]
            print(f"| {name[:-4]} | – | not run: {(lines or ['?'])[0][:100]} |")
        continue
    run = json.load(open(path))
    refs = {r["label"]: r for r in run["results"] if r["reference"]}
    for r in run["results"]:
        if r["reference"]:
            continue
        # The uniform row of this curve: the one labelled with the same v (sweeps), else the only one.
        ref = next((x for l, x in refs.items() if l != "uniform play" and l.split(" ", 2)[-1] in r["label"]),
                   refs.get("uniform play") or next(iter(refs.values())))
        u = ref["final_mean"]
        n = len(r["finals"])
        se = r["final_std"] / math.sqrt(n) / u if n > 1 else 0.0
        print(f"| {name} | {r['label']} | {r['final_mean'] / u:.3f} ± {se:.3f} |")
EOF
