"""Reproduce Seo & Thottethodi, "Disjoint-Path Routing" (IPDPS 2009): Figure 5 (saturation
throughput of the nine StreamIt benchmarks under pull+DOR, pull+adaptive, push+DOR, push+adaptive,
tentacle and ideal, normalized to push+adaptive, on 4x4 and 6x6, with geometric means over the
high-contention benchmarks and over all), Figure 3 (streams per link under DOR), Table 3 (circuit
set-up cycles), and routing success on perturbed layouts (beyond the paper).

Usage:  python experiments/noc_fig5.py [--quick] [--out out/experiments/noc]
Writes CSV + PNG into the output folder and prints a summary (also summary.json).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path

from pktflow import noc

CONFIGS = [
    ("pull+DOR", "dor", "pull"),
    ("pull+adaptive", "adaptive", "pull"),
    ("push+DOR", "dor", "push"),
    ("push+adaptive", "adaptive", "push"),
    ("tentacle", "tentacle", "push"),
    ("ideal", "ideal", "push"),
]
# Paper Table 2: benchmarks with high link contention
PAPER_HIGH = {
    "4x4": {"AudioBeam", "BeamFormer", "ChannelVocoder", "FilterBank", "FMRadio"},
    "6x6": {"BeamFormer", "BitonicSort", "ChannelVocoder", "FilterBank", "FMRadio"},
}
# Paper section 4.3 / abstract
PAPER = {
    "4x4": {"tentacle_all": 1.28, "tentacle_high": 1.55, "ideal_gap": 0.06},
    "6x6": {"tentacle_all": 1.41, "tentacle_high": 1.84, "ideal_gap": 0.11},
}
# Paper Table 3 (cycles): min, max, average single-path set-up time and total overhead
PAPER_T3 = {
    "4x4": {
        "AudioBeam": (5, 13, 7.29, 605),
        "BeamFormer": (5, 21, 7.97, 1613),
        "BitonicSort": (5, 5, 5, 1505),
        "ChannelVocoder": (5, 31, 10.29, 1125),
        "DES": (5, 17, 6.41, 1709),
        "FilterBank": (5, 59, 11.61, 826),
        "FMRadio": (5, 33, 12.2, 2009),
        "TDE": (5, 9, 6.07, 1509),
        "Vocoder": (5, 9, 5.33, 1205),
    },
    "6x6": {
        "AudioBeam": (5, 41, 13.46, 741),
        "BeamFormer": (5, 29, 9.25, 2729),
        "BitonicSort": (5, 21, 6.52, 2917),
        "ChannelVocoder": (5, 65, 11.17, 1625),
        "DES": (5, 17, 6.41, 1709),
        "FilterBank": (5, 41, 14.18, 2241),
        "FMRadio": (5, 33, 12.2, 2009),
        "TDE": (5, 9, 5.26, 3109),
        "Vocoder": (5, 18, 6.88, 3105),
    },
}


def gmean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="out/experiments/noc")
    ap.add_argument("--quick", action="store_true", help="short runs (20k measured cycles, 3 scales)")
    ap.add_argument("--meshes", default="4x4,6x6")
    ap.add_argument("--retries", type=int, default=3)
    ap.add_argument("--perturb-trials", type=int, default=10)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    warmup, measure = (5_000, 20_000) if args.quick else (10_000, 100_000)
    benches = noc.benchmarks()
    meshes = args.meshes.split(",")
    t_start = time.time()

    rows = []  # one per benchmark x mesh x config
    setup_rows = []
    link_rows = []
    map_rows = []
    for mesh in meshes:
        for b in benches:
            # routing-only pass: DOR link loads (Figure 3) and layout facts
            base = noc.run_stream(b, mesh=mesh, routing="dor", simulate=False)
            for ln in base["link_loads"]:
                link_rows.append(
                    {
                        "mesh": mesh,
                        "benchmark": b,
                        "link": ln["index"],
                        "from": str(ln["from"]),
                        "dir": ln["dir"],
                        "streams": ln["streams"],
                    }
                )
            scales = None
            for label, routing, comm in CONFIGS:
                t0 = time.time()
                kw = dict(
                    mesh=mesh,
                    routing=routing,
                    comm=comm,
                    warmup=warmup,
                    measure=measure,
                    retries=args.retries if routing == "tentacle" else 0,
                )
                if scales is not None:
                    kw["scales"] = scales
                r = noc.run_stream(b, **kw)
                if scales is None:
                    scales = [p["scale"] for p in r["points"]]
                    if args.quick:
                        scales = [scales[1], scales[3], scales[4]]
                ro = r["route"]
                rows.append(
                    {
                        "mesh": mesh,
                        "benchmark": b,
                        "config": label,
                        "routing": routing,
                        "comm": comm,
                        "saturation_throughput": r["saturation_throughput"],
                        "throughputs": ";".join(f"{p['scale']:.4g}:{p['throughput']:.4f}" for p in r["points"]),
                        "circuits": ro["circuits"],
                        "fallback": ro["fallback"],
                        "attempts": ro["attempts"],
                        "layout_retries": r["layout"]["layout_retries"],
                        "max_link_load": r["max_link_load"],
                        "dor_max_link_load": r["dor_max_link_load"],
                        "dor_contended_links": r["dor_contended_links"],
                        "actors": len(r["actors"]),
                        "streams": len(r["routes"]),
                        "balance": r["balance"],
                        "wall_s": round(time.time() - t0, 3),
                    }
                )
                if routing == "tentacle":
                    map_rows.append({"mesh": mesh, "benchmark": b, **r["timing"], "circuits": ro["circuits"]})
                    if r["setup"]:
                        s = r["setup"]
                        p = PAPER_T3[mesh][b]
                        setup_rows.append(
                            {
                                "mesh": mesh,
                                "benchmark": b,
                                "paths": len(s["per_path"]),
                                "min": s["min"],
                                "max": s["max"],
                                "mean": round(s["mean"], 2),
                                "total": s["total"],
                                "paper_min": p[0],
                                "paper_max": p[1],
                                "paper_mean": p[2],
                                "paper_total": p[3],
                            }
                        )
                print(
                    f"[{time.time() - t_start:6.0f}s] {mesh} {b:15s} {label:14s} "
                    f"sat={r['saturation_throughput']:.3f} circuits={ro['circuits']}",
                    file=sys.stderr,
                )

    # normalize to push+adaptive
    norm = {}
    for row in rows:
        key = (row["mesh"], row["benchmark"])
        basev = next(
            x["saturation_throughput"]
            for x in rows
            if (x["mesh"], x["benchmark"]) == key and x["config"] == "push+adaptive"
        )
        row["normalized"] = row["saturation_throughput"] / basev if basev > 0 else float("nan")
        norm[(row["mesh"], row["benchmark"], row["config"])] = row["normalized"]

    with open(out / "fig5_throughput.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    with open(out / "fig3_link_loads.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(link_rows[0].keys()))
        w.writeheader()
        w.writerows(link_rows)
    if setup_rows:
        with open(out / "table3_setup.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(setup_rows[0].keys()))
            w.writeheader()
            w.writerows(setup_rows)
    with open(out / "map_route_times.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(map_rows[0].keys()))
        w.writeheader()
        w.writerows(map_rows)

    summary = {"warmup_cycles": warmup, "measure_cycles": measure, "meshes": {}}
    for mesh in meshes:
        own_high = {
            r["benchmark"]
            for r in rows
            if r["mesh"] == mesh and r["config"] == "push+DOR" and r["dor_max_link_load"] > 1.0 + 1e-9
        }
        s = {"configs": {}}
        for label, _, _ in CONFIGS:
            vals = {b: norm[(mesh, b, label)] for b in benches}
            s["configs"][label] = {
                "gmean_all": gmean(vals.values()),
                "gmean_high_paper_set": gmean([vals[b] for b in sorted(PAPER_HIGH[mesh])]),
                "gmean_high_own_set": gmean([vals[b] for b in sorted(own_high)]) if own_high else float("nan"),
                "per_benchmark": vals,
            }
        t_all = s["configs"]["tentacle"]["gmean_all"]
        i_all = s["configs"]["ideal"]["gmean_all"]
        s["tentacle_vs_ideal_gap_all"] = 1 - t_all / i_all
        s["own_high_contention_set"] = sorted(own_high)
        s["tentacle_success"] = {
            r["benchmark"]: r["circuits"] for r in rows if r["mesh"] == mesh and r["config"] == "tentacle"
        }
        s["paper"] = PAPER[mesh]
        summary["meshes"][mesh] = s

    # perturbed layouts: routing success (beyond the paper)
    pert = []
    if args.perturb_trials > 0:
        for b in benches:
            r = noc.perturbed_routing(b, mesh="4x4", trials=args.perturb_trials, swaps=2, exact_budget=200_000)
            for x in r["results"]:
                pert.append(
                    {
                        "benchmark": b,
                        "router": x["router"],
                        "success": x["success"],
                        "trials": x["trials"],
                        "exact_proven_infeasible": r["exact_proven_infeasible"],
                    }
                )
        with open(out / "perturbed_routing.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(pert[0].keys()))
            w.writeheader()
            w.writerows(pert)
        tot = {}
        for p in pert:
            tot.setdefault(p["router"], [0, 0])
            tot[p["router"]][0] += p["success"]
            tot[p["router"]][1] += p["trials"]
        summary["perturbed_4x4_2swaps"] = {k: {"success": v[0], "trials": v[1]} for k, v in tot.items()}

    summary["wall_seconds"] = time.time() - t_start
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    _plots(out, rows, link_rows, meshes, benches)
    print(json.dumps(summary, indent=2))
    return 0


def _plots(out: Path, rows, link_rows, meshes, benches) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [c[0] for c in CONFIGS]
    fig, axes = plt.subplots(len(meshes), 1, figsize=(13, 4.2 * len(meshes)), squeeze=False)
    for ax, mesh in zip(axes[:, 0], meshes, strict=True):
        cols = benches + ["GM high (paper set)", "GM all"]
        width = 0.13
        for k, lab in enumerate(labels):
            vals = [
                next(r["normalized"] for r in rows if r["mesh"] == mesh and r["benchmark"] == b and r["config"] == lab)
                for b in benches
            ]
            high = [v for b, v in zip(benches, vals, strict=True) if b in PAPER_HIGH[mesh]]
            vals = vals + [gmean(high), gmean(vals)]
            ax.bar([i + (k - 2.5) * width for i in range(len(cols))], vals, width, label=lab)
        ax.set_xticks(range(len(cols)))
        ax.set_xticklabels(cols, rotation=30, ha="right")
        ax.set_ylabel("saturation throughput / push+adaptive")
        ax.set_title(f"Figure 5 ({mesh})")
        ax.axhline(1.0, c="gray", lw=0.5)
        ax.legend(ncol=6, fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "fig5_throughput.png", dpi=120)
    plt.close(fig)

    sel = ["FilterBank", "FMRadio", "Vocoder", "BitonicSort"]
    fig, axes = plt.subplots(2, 2, figsize=(11, 6))
    for ax, b in zip(axes.flat, sel, strict=True):
        loads = [r["streams"] for r in link_rows if r["mesh"] == "4x4" and r["benchmark"] == b]
        ax.bar(range(len(loads)), loads)
        ax.set_title(f"{b} (4x4, DOR)")
        ax.set_xlabel("link")
        ax.set_ylabel("streams")
    fig.suptitle("Figure 3: link load distribution")
    fig.tight_layout()
    fig.savefig(out / "fig3_link_loads.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
