#!/usr/bin/env python3
"""Final regret against the batch size q: runs `host-sim run EXPERIMENT --batch q` for each q
(unless its output directory is there already) and draws mean final regret (± 1 s.e.) and the
median against q, every learner and uniform play, as an SVG with a log x-axis, and a markdown
table. Standard library only.

  scripts/batch-sweep.py BIN EXPERIMENT OUTDIR [--trials 8] [--horizon 10000] [--q 1,3,10,...]
                         [-- extra host-sim flags]
"""

import csv
import math
import os
import statistics
import subprocess
import sys


def main():
    args = sys.argv[1:]
    extra = args[args.index("--") + 1 :] if "--" in args else []
    args = args[: args.index("--")] if "--" in args else args
    if len(args) < 3:
        sys.exit(__doc__)
    binary, experiment, out = args[:3]
    opts = dict(zip(args[3::2], args[4::2]))
    qs = [int(q) for q in opts.get("--q", "1,3,10,30,100,300,1000").split(",")]
    trials, horizon = opts.get("--trials", "8"), opts.get("--horizon")
    rows = {}
    for q in qs:
        d = os.path.join(out, f"{experiment}-q{q}")
        if not os.path.exists(os.path.join(d, "finals.csv")):
            cmd = [binary, "run", experiment, "--batch", str(q), "--trials", trials, "--out", d, "--quiet"]
            cmd += ["--horizon", horizon] if horizon else []
            subprocess.run(cmd + extra, check=True)
        with open(os.path.join(d, "finals.csv")) as f:
            for r in csv.DictReader(f):
                rows.setdefault(r["algorithm"], {}).setdefault(q, []).append(float(r["final_regret"]))
        with open(os.path.join(d, "regret.csv")) as f:
            last = list(csv.DictReader(f))[-1]
            for key, value in last.items():
                if key.startswith("uniform") and key.endswith("mean"):
                    rows.setdefault("uniform play", {})[q] = [float(value)]
    table = [f"| learner | " + " | ".join(f"q = {q}" for q in qs) + " |", "|---" * (len(qs) + 1) + "|"]
    for name, by_q in rows.items():
        cells = []
        for q in qs:
            v = by_q.get(q, [])
            if len(v) > 1:
                se = statistics.stdev(v) / math.sqrt(len(v))
                cells.append(f"{statistics.mean(v):.0f} ± {se:.0f} (median {statistics.median(v):.0f})")
            else:
                cells.append(f"{v[0]:.0f}" if v else "")
        table.append(f"| {name} | " + " | ".join(cells) + " |")
    with open(os.path.join(out, f"{experiment}-batch.md"), "w") as f:
        f.write("\n".join(table) + "\n")
    svg(rows, qs, os.path.join(out, f"{experiment}-batch.svg"), experiment)
    print("\n".join(table))


def svg(rows, qs, path, title):
    w, h, left, bottom, top, right = 720, 420, 70, 50, 40, 170
    ymax = max(max(v) for by_q in rows.values() for v in by_q.values()) * 1.05
    x = lambda q: left + (w - left - right) * math.log10(q) / max(1e-9, math.log10(max(qs)))
    y = lambda v: h - bottom - (h - bottom - top) * v / ymax
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#7f7f7f", "#8c564b"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<text x="{left}" y="20" font-size="14">{title}: final regret against the batch size q (mean ± 1 s.e. of the trials)</text>',
           f'<line x1="{left}" y1="{h-bottom}" x2="{w-right}" y2="{h-bottom}" stroke="black"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h-bottom}" stroke="black"/>',
           f'<text x="{(left + w - right) / 2}" y="{h - 10}">q (log scale)</text>']
    for q in qs:
        out.append(f'<text x="{x(q):.1f}" y="{h-bottom+16}" text-anchor="middle">{q}</text>')
    for k in range(6):
        v = ymax * k / 5
        out.append(f'<text x="{left-6}" y="{y(v)+4:.1f}" text-anchor="end">{v:.0f}</text>')
    for i, (name, by_q) in enumerate(rows.items()):
        c = colours[i % len(colours)]
        pts = [(q, statistics.mean(by_q[q]), (statistics.stdev(by_q[q]) / math.sqrt(len(by_q[q]))) if len(by_q[q]) > 1 else 0) for q in qs if q in by_q]
        dash = ' stroke-dasharray="6,4"' if name == "uniform play" else ""
        out.append(f'<polyline fill="none" stroke="{c}" stroke-width="2"{dash} points="' + " ".join(f"{x(q):.1f},{y(m):.1f}" for q, m, _ in pts) + '"/>')
        for q, m, se in pts:
            out.append(f'<line x1="{x(q):.1f}" y1="{y(m-se):.1f}" x2="{x(q):.1f}" y2="{y(m+se):.1f}" stroke="{c}"/>')
        out.append(f'<text x="{w-right+10}" y="{top + 18 * i + 10}" fill="{c}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
