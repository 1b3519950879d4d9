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
# shellcheck source=scripts/grid.sh
source "$(dirname "$0")/grid.sh"
out=${1:-/tmp/choose-kappa-ldp-ucb}
if [ -n "${2:-}" ]; then bin=$2; else release_host_sim; fi
read -r -a kappas <<< "${KAPPAS:-0.1 0.2 0.3 0.5 0.7 1.0}"
beta_scales learn/src/bandit/ldp_ucb.rs
run_one() {
  # shellcheck disable=SC2086
  "$bin" run custom $2 --family bandit --algorithms LDP-UCB --trials "${TRIALS:-20}" \
    --beta-scale "$1" --quiet --out "$3" > /dev/null
}
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
run_grid "$t/" "${scales[@]}"
python3 scripts/kappa-table.py "$out" "$kappa0" LDP-UCB --arms_,.csv "${scales[@]}"
