#!/usr/bin/env python3
"""Cost versus size: the table and the plot of bench/README.md (issue 16).

Reads the JSON output of one engine_bench run of the cost-versus-size
benchmarks and writes
  - a Markdown table on stdout: wall ns per event for plain (`BM_Ingest`)
    and batched (`BM_IngestBatched`) ingest, 1 and 2 threads, per job count,
    and memory per job (`BM_MemoryPerJob`) where the run has it;
  - an SVG line plot (log-log: jobs against ns per event), one line per
    series, to the path given with --svg.

Usage (bench/README.md "Cost versus size" gives the whole command):
  build/release/bench/engine_bench --benchmark_filter='BM_Ingest(Batched)?/jobs:|BM_MemoryPerJob' \
      --benchmark_out=/tmp/cost.json --benchmark_out_format=json
  python3 bench/plot_cost_vs_size.py /tmp/cost.json --svg bench/cost_vs_size.svg

Only the standard library: no plotting package is needed on the machine.
"""
import argparse
import json
import math
import re
import sys

SERIES = [  # (benchmark, threads, label, colour)
    ("BM_Ingest", 1, "plain, 1 thread", "#1f77b4"),
    ("BM_IngestBatched", 1, "batched, 1 thread", "#ff7f0e"),
    ("BM_Ingest", 2, "plain, 2 threads", "#2ca02c"),
    ("BM_IngestBatched", 2, "batched, 2 threads", "#d62728"),
]
NAME = re.compile(r"^(BM_\w+)/jobs:(\d+)/.*threads:(\d+)$")


def load(path):
    """{(bench, threads): {jobs: ns_per_event}}, {jobs: (alloc B/job, rss B/job)}."""
    with open(path) as f:
        doc = json.load(f)
    cost, memory = {}, {}
    for b in doc["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b["name"].removesuffix("_median")
        m = NAME.match(name)
        if m and b.get("items_per_second"):
            key = (m.group(1), int(m.group(3)))
            cost.setdefault(key, {})[int(m.group(2))] = 1e9 / b["items_per_second"]
        # Memory as an embedder gets it by default (no EngineOptions::reserve_jobs).
        mm = re.match(r"^BM_MemoryPerJob/jobs:(\d+)(/reserve:(\d+))?", name)
        if mm and mm.group(3) in (None, "0"):
            memory[int(mm.group(1))] = (b.get("bytes_per_job"), b.get("rss_bytes_per_job"))
    return cost, memory


def table(cost, memory):
    jobs = sorted({j for series in cost.values() for j in series})
    head = "| jobs | " + " | ".join(s[2] for s in SERIES) + " | memory per job, no reserve (alloc / RSS) |"
    lines = [head, "|" + "---|" * (len(SERIES) + 2)]
    for j in jobs:
        cells = []
        for bench, threads, _, _ in SERIES:
            v = cost.get((bench, threads), {}).get(j)
            cells.append(f"{v:,.0f}" if v is not None else "")
        mem = memory.get(j)
        m = f"{mem[0]:.1f} / {mem[1]:.1f} B" if mem and mem[0] and mem[1] else ""
        lines.append(f"| 10^{round(math.log10(j))} | " + " | ".join(cells) + f" | {m} |")
    return "\n".join(lines)


def svg(cost, title):
    W, H, L, R, T, B = 640, 400, 70, 190, 40, 50
    pts = [(j, v) for s in cost.values() for j, v in s.items()]
    if not pts:
        raise SystemExit("no BM_Ingest/BM_IngestBatched results in the input")
    x0, x1 = math.floor(math.log10(min(p[0] for p in pts))), math.ceil(math.log10(max(p[0] for p in pts)))
    y0 = math.floor(math.log10(min(p[1] for p in pts)) * 4) / 4
    y1 = math.ceil(math.log10(max(p[1] for p in pts)) * 4) / 4
    x1 = max(x1, x0 + 1)
    y1 = max(y1, y0 + 0.25)

    def X(j):
        return L + (math.log10(j) - x0) / (x1 - x0) * (W - L - R)

    def Y(v):
        return H - B - (math.log10(v) - y0) / (y1 - y0) * (H - T - B)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{L}" y="22" font-size="14">{title}</text>',
           f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>',
           f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">jobs in the engine</text>',
           f'<text x="16" y="{(T + H - B) / 2}" transform="rotate(-90 16 {(T + H - B) / 2})" '
           'text-anchor="middle">wall ns per event</text>']
    for e in range(x0, x1 + 1):
        x = X(10 ** e)
        out.append(f'<line x1="{x:.1f}" y1="{T}" x2="{x:.1f}" y2="{H - B}" stroke="#ddd"/>')
        out.append(f'<text x="{x:.1f}" y="{H - B + 16}" text-anchor="middle">10^{e}</text>')
    for tick in sorted({v for e in range(int(y0) - 1, int(y1) + 2) for v in (10 ** e, 2 * 10 ** e, 5 * 10 ** e)}):
        if not (y0 <= math.log10(tick) <= y1):
            continue
        y = Y(tick)
        out.append(f'<line x1="{L}" y1="{y:.1f}" x2="{W - R}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:g}</text>')
    for i, (bench, threads, label, colour) in enumerate(SERIES):
        series = sorted(cost.get((bench, threads), {}).items())
        if not series:
            continue
        path = " ".join(f"{X(j):.1f},{Y(v):.1f}" for j, v in series)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for j, v in series:
            out.append(f'<circle cx="{X(j):.1f}" cy="{Y(v):.1f}" r="3" fill="{colour}"/>')
        ly = T + 10 + 20 * i
        out.append(f'<line x1="{W - R + 12}" y1="{ly}" x2="{W - R + 36}" y2="{ly}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{W - R + 42}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", help="engine_bench --benchmark_out file (JSON)")
    ap.add_argument("--svg", help="write the plot here")
    ap.add_argument("--title", default="hdrf engine: cost per task event against the number of jobs")
    a = ap.parse_args()
    cost, memory = load(a.json)
    print(table(cost, memory))
    if a.svg:
        with open(a.svg, "w") as f:
            f.write(svg(cost, a.title))
        print(f"plot: {a.svg}", file=sys.stderr)


if __name__ == "__main__":
    main()
