#!/usr/bin/env bash
# How the K-armed learners' one multiplier κ was chosen (docs/constants.md, "K-armed learners"):
# run Robust-UCB, DP-RUCB, DP-RSE and LDP-RSE under the calibrated rule on settings that are
# reported nowhere (seed 004's instances at other seeds, horizons and ε; tables of the kinds of
# scripts/karmed-tables.py drawn with another seed, at other horizons and ε), for a grid of κ, and
# print each learner's ratio to uniform play, the geometric mean over all (learner, setting), the
# worst mean ratio, and the largest share of one (learner, setting)'s trials that ended worse
# than uniform play by more than 1 % (a learner that removes the best arm or locks in on a bad
# one does so in some trials only, which the mean over 20 trials hides in its s.e.).
# The rule: the smallest geometric mean among the κ at which no (learner, setting) ends worse
# than uniform play in more than a quarter of its trials.
# κ = KAPPA × --beta-scale (KAPPA as in core/src/bandit/rule.rs). About 15 minutes on 2 cores.
#
# Usage: scripts/choose-kappa-karmed.sh [OUT_DIR] (default /tmp/choose-kappa-karmed); TRIALS
#        (default 20) per setting.
# shellcheck source=scripts/grid.sh
source "$(dirname "$0")/grid.sh"
out=${1:-/tmp/choose-kappa-karmed}
release_host_sim
read -r -a kappas <<< "${KAPPAS:-0.1 0.2 0.3 0.5 0.7 1.0}"
beta_scales core/src/bandit/rule.rs
run_one() {
  # shellcheck disable=SC2086
  "$bin" run $2 --trials "${TRIALS:-20}" --beta-scale "$1" --quiet --out "$3" > /dev/null
}
mkdir -p "$out/tables"
python3 scripts/karmed-tables.py "$out/tables" 7
t=$out/tables
settings=(
  "tao-s1 --seed 1100 --horizon 30000 --eps 2"
  "tao-s2 --seed 1200 --horizon 50000 --eps 0.25"
  "tao-s3 --seed 1300 --horizon 20000 --eps 2"
  "tao-ldp --seed 1400 --horizon 50000 --eps 2"
  "custom --arms $t/close3.csv --family bandit --seed 1500 --horizon 3000 --eps 2"
  "custom --arms $t/close3.csv --family bandit --seed 1600 --horizon 3000 --eps none"
  "custom --arms $t/heavy6.csv --family bandit --seed 1700 --horizon 30000 --eps 0.5"
  "custom --arms $t/heavy6.csv --family bandit --seed 1800 --horizon 3000 --eps none"
  "custom --arms $t/clicks20.csv --family bandit --seed 1900 --horizon 30000 --eps 2"
  "custom --arms $t/clicks20.csv --family bandit --seed 2000 --horizon 30000 --eps none"
)
run_grid "$t/" "${scales[@]}"
python3 scripts/kappa-table.py "$out" "$kappa0" all --family_bandit_ "${scales[@]}"
