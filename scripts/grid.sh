# What the scripts that choose a constant on a grid of settings share (choose-kappa.sh,
# choose-kappa-karmed.sh, choose-kappa-ldp-ucb.sh, choose-prior.sh). Sourced first: it makes the
# shell strict and goes to the repository's root.
set -euo pipefail
cd "$(dirname "$0")/.."

# Builds this tree's release host-sim; `bin` is its path.
release_host_sim() {
  cargo build --release -p host-sim --quiet
  bin=${CARGO_TARGET_DIR:-target}/release/host-sim
}

# `kappa0`, the `pub const KAPPA` of the Rust file $1, and `scales`: the --beta-scale of each κ in
# `kappas`.
beta_scales() {
  kappa0=$(sed -n 's/^pub const KAPPA: f64 = \([0-9.]*\);/\1/p' "$1")
  scales=()
  for k in "${kappas[@]}"; do scales+=("$(python3 -c "print($k / $kappa0)")"); done
}

# For each grid value in $2… and each of `settings`: `run_one VALUE SETTING DIR` (the caller's),
# DIR = $out/VALUE/the setting without the text $1, spaces as `_` — unless DIR holds a run.json
# already (a run cut short goes on where it stopped).
run_grid() {
  local strip=$1 value setting name dir
  shift
  for value in "$@"; do
    for setting in "${settings[@]}"; do
      name=${setting//$strip/}
      dir="$out/$value/${name// /_}"
      [ -f "$dir/run.json" ] && continue
      run_one "$value" "$setting" "$dir"
    done
  done
}
