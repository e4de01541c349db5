"""Seed 001 (001_50c9ec885c831f52.txt) Figure 5 and Table 2 with the throughput cost model.

Figure 5: forwarding rate of L3-Switch, MPLS and Firewall against 1 to 6 MEs for the five
configurations Base, RES, COMM, TDPM-S and TDPM-all, "3 Gbps packet line rate with the minimum
packet size of 64B". Table 2: TDPM-all's forwarding rate as a percent of OC-48 (2.488 Gb/s).

Rates here are the cost model's prediction (crates/tdpm, docs/tdpm.md) on the ixp2400 preset,
capped at the offered 3 Gb/s; the timing-simulator column of issue 5 is not produced yet (see
docs/reproductions.md). Run:

    python experiments/tdpm_fig5.py [--packets 5000] [--plot out/tdpm_fig5.png] [--json out/tdpm_fig5.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pktflow import tdpm

APPS = ("l3switch", "mpls", "firewall")
CONFIGS = (("base", "Base"), ("res", "RES"), ("comm", "COMM"), ("tdpm-s", "TDPM-S"), ("tdpm", "TDPM-all"))
OFFERED_GBPS = 3.0
OC48_GBPS = 2.488
PAPER_TABLE2 = {  # seed 001 Table 2, percent of OC-48 (MEs 1-4)
    "l3switch": [31.48, 62.66, 93.47, 100.0],
    "firewall": [30.79, 61.46, 91.87, 100.0],
    "mpls": [29.42, 58.82, 88.19, 100.0],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packets", type=int, default=5000, help="synthetic packets of each functional run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--plot", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()

    rows = []
    for app in APPS:
        for key, label in CONFIGS:
            for n in range(1, 7):
                r = tdpm.map_app(
                    app,
                    mapper=key,
                    engines=n,
                    packets=a.packets,
                    seed=a.seed,
                    offered_gbps=OFFERED_GBPS,
                    packet_bytes=64,
                )
                rows.append(
                    {
                        "app": app,
                        "config": label,
                        "mes": n,
                        "predicted_gbps": r["gbps"],
                        "forwarding_gbps": r["forwarding_gbps"],
                        "me_tasks": sum(1 for t in r["tasks"] if t["processor"] == "me"),
                        "copies": r["copies"],
                        "binding": r["binding"],
                    }
                )

    print(f"Figure 5 (cost model): forwarding rate, Gb/s, 64-byte packets offered at {OFFERED_GBPS} Gb/s")
    for app in APPS:
        print(f"\n{app}")
        print("config    " + "".join(f"{n:>8d}" for n in range(1, 7)))
        for _, label in CONFIGS:
            v = [r["forwarding_gbps"] for r in rows if r["app"] == app and r["config"] == label]
            print(f"{label:<10}" + "".join(f"{x:8.3f}" for x in v))

    print("\nTable 2 (cost model): TDPM-all forwarding rate, percent of OC-48 (paper in brackets)")
    print("MEs  " + "".join(f"{app:>20}" for app in APPS))
    for n in range(1, 7):
        cells = []
        for app in APPS:
            v = next(
                r["forwarding_gbps"] for r in rows if r["app"] == app and r["config"] == "TDPM-all" and r["mes"] == n
            )
            pct = min(100.0, 100.0 * v / OC48_GBPS)
            paper = PAPER_TABLE2[app][n - 1] if n <= 4 else None
            cells.append(f"{pct:7.2f}%" + (f" [{paper:6.2f}%]" if paper is not None else " " * 10))
        print(f"{n:<5}" + "".join(f"{c:>20}" for c in cells))

    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(rows, indent=2))
    if a.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), sharey=True)
        for ax, app in zip(axes, APPS, strict=True):
            for _, label in CONFIGS:
                v = [r["forwarding_gbps"] for r in rows if r["app"] == app and r["config"] == label]
                ax.plot(range(1, 7), v, marker="o", label=label)
            ax.set_title(app)
            ax.set_xlabel("MEs")
            ax.axhline(OC48_GBPS, color="grey", lw=0.8, ls=":")
        axes[0].set_ylabel("forwarding rate (Gb/s, cost model)")
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        a.plot.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(a.plot, dpi=120)


if __name__ == "__main__":
    main()
