#!/usr/bin/env bash
# Records what the host-sim binary prints and writes for a fixed set of commands, so that a
# restructuring can be shown to keep every output byte:
#
#   scripts/snapshot-outputs.sh BIN DIR     # e.g. target/release/host-sim /tmp/before
#   (change the code, rebuild)
#   scripts/snapshot-outputs.sh BIN DIR2 && diff -r DIR DIR2
#
# Covers every `--help`, `list`, a refused command's stderr and exit code, the default run,
# `custom` (GP and bandit, an ε sweep), `privatise` and `reproduce --quick`. Wall times, the
# only outputs that differ from run to run, are replaced by `<time>` before the files are kept.
# SKIP_REPRODUCE=1 leaves out `reproduce --quick` (about 10 minutes on 2 cores).
set -euo pipefail

# Wall times and the job times summed over threads are the only outputs that change from run
# to run: each becomes `<time>`, the table's s/trial column too; run locks (a process id) go, jobs
# are sorted (threads finish them in any order), and the working directory's path becomes `<repo>`.
# `scripts/snapshot-outputs.sh --mask DIR [PATH]` masks a snapshot again.
mask() {
    find "$1" -name run.lock -delete # it holds the writer's process id
    find "$1" -name jobs.jsonl -exec sort -o {} {} \; # jobs are appended as threads finish them
    find "$1" -type f \( -name '*.json' -o -name '*.md' -o -name '*.out' -o -name '*.err' -o -name '*.csv' -o -name '*.jsonl' \) -print0 |
        xargs -0 sed -i -E \
            -e 's/("(wall|elapsed|seconds|wall_s|wall_seconds|started|finished)[a-z_]*": *)[0-9.e+-]+/\1<time>/g' \
            -e 's/[0-9]+(\.[0-9]+)? s (of wall time|of job time|summed over threads)/<time> \2/g' \
            -e 's/[0-9]+(\.[0-9]+)? s; wrote/<time>; wrote/g' \
            -e 's/in [0-9]+(\.[0-9]+)? ?(s|ms|min)\b/in <time>/g' \
            -e '/s\/trial/,/^$/ s/ +[0-9]+\.[0-9]+$/ <s\/trial>/' \
            -e "s#${2:-<none>}#<repo>#g"
}

if [ "${1:-}" = --mask ]; then
    mask "$2" "${3:-}"
    exit 0
fi
bin_given=$(realpath "$1")
out=$2
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(realpath "$out")
# One fixed working directory, the data copied into it: a run's id hashes its data file's path,
# so two snapshots compare only when they read the same paths.
work=${TMPDIR:-/tmp}/ldp-bo-snapshot
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
cp -r "$repo/data" "$work/data"
cd "$work"
# clap prints the binary's file name in every `Usage:` line: run it as `host-sim` whatever its path.
mkdir bin
cp "$bin_given" bin/host-sim
bin=$work/bin/host-sim

# A command's stdout, stderr and exit code, into $out/cmd/<name>.{out,err,code}.
record() {
    local name=$1
    shift
    mkdir -p "$out/cmd"
    set +e
    "$bin" "$@" >"$out/cmd/$name.out" 2>"$out/cmd/$name.err"
    echo $? >"$out/cmd/$name.code"
    set -e
}

record help --help
record version --version
for c in list run merge plot reproduce audit privatise live fleet; do record "help-$c" "$c" --help; done
for c in devices bridge bench; do record "help-fleet-$c" fleet "$c" --help; done
record list list
record refused-experiment run no-such-experiment
record refused-flag run fig2a --trials 0
record refused-eps run custom --arms data/stocks_adjclose.csv --eps -1

record default-run  # `cargo run --release`: no arguments, into results/fig2a
record custom-gp run custom --arms data/stocks_adjclose.csv --trials 2 --horizon 200 --out custom-gp
record custom-bandit run custom --arms data/stocks_adjclose.csv --family bandit --trials 2 --horizon 300 --out custom-bandit
record custom-sweep run custom --arms data/stocks_adjclose.csv --eps 0.5,2 --trials 2 --horizon 100 --algorithms ldp-tgp-ucb,ucb1 --out custom-sweep
record privatise privatise --eps 0.5
[ "${SKIP_REPRODUCE:-0}" = 1 ] || record reproduce-quick reproduce --quick --out quick --data data

# The files the runs wrote, wall times masked.
for d in results custom-gp custom-bandit custom-sweep quick; do
    [ -d "$d" ] && cp -r "$d" "$out/files-$d"
done
mask "$out" "$work"
echo "snapshot of $bin in $out"
