"""The TDPM paper's (Liu et al., HiPEAC 2007) Figure 5 and Table 2 by the cost model and the timing simulator.

Figure 5: forwarding rate of L3-Switch, MPLS and Firewall against 1 to 6 MEs for the five
configurations Base, RES, COMM, TDPM-S and TDPM-all, "3 Gbps packet line rate with the minimum
packet size of 64B". Table 2: TDPM-all's forwarding rate as a percent of OC-48 (2.488 Gb/s).

Each point is mapped by crates/tdpm and evaluated twice: by the throughput cost model (docs/tdpm.md)
and by the timing simulator (crates/npsim) running the same plan on the ixp2400 preset (ME tasks on
their MEs, XScale tasks on the control core, a DRAM hand-off where a packet changes task; the
maximum sustainable rate by bisection). Both are capped at the offered 3 Gb/s; Gb/s are counted at
64 bytes per packet. Error = (model - simulation) / simulation, on the uncapped packet rates.
Run:

    python experiments/tdpm_fig5.py [--packets 5000] [--sim-packets 5000] [--csv out/tdpm_fig5.csv]
        [--plot out/tdpm_fig5.png] [--json out/tdpm_fig5.json] [--no-sim] [--lock-free-tx] [--workers N]

The points run on every core (--workers N: N processes; the results are the same for any N).
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

from pktflow import tdpm
from pktflow.sweep.pool import map_ordered

APPS = ("l3switch", "mpls", "firewall")
CONFIGS = (("base", "Base"), ("res", "RES"), ("comm", "COMM"), ("tdpm-s", "TDPM-S"), ("tdpm", "TDPM-all"))
OFFERED_GBPS = 3.0
OC48_GBPS = 2.488
PAPER_TABLE2 = {  # the TDPM paper's Table 2, percent of OC-48 (MEs 1-4)
    "l3switch": [31.48, 62.66, 93.47, 100.0],
    "firewall": [30.79, 61.46, 91.87, 100.0],
    "mpls": [29.42, 58.82, 88.19, 100.0],
}


def point(app: str, key: str, label: str, n: int, a: argparse.Namespace) -> dict:
    common = dict(mapper=key, engines=n, packets=a.packets, seed=a.seed, offered_gbps=OFFERED_GBPS, packet_bytes=64)
    if a.no_sim:
        r = tdpm.map_app(app, **common)
        model, sim = r, None
    else:
        r = tdpm.simulate_plan(app, sim_packets=a.sim_packets, lock_free_tx=a.lock_free_tx, **common)
        model, sim = r["model"], r["point"]
    row = {
        "app": app,
        "config": label,
        "mes": n,
        "model_gbps": model["gbps"],
        "model_forwarding_gbps": model["forwarding_gbps"],
        "me_tasks": sum(1 for t in model["tasks"] if t["processor"] == "me"),
        "xscale_tasks": sum(1 for t in model["tasks"] if t["processor"] == "xscale"),
        "copies": model["copies"],
        "model_binding": model["binding"],
    }
    if sim is not None:
        row.update(
            {
                "model_mpps": sim["model_packets_per_second"] / 1e6,
                "sim_mpps": sim["sim_packets_per_second"] / 1e6,
                "sim_gbps": sim["sim_gbps"],
                "sim_forwarding_gbps": sim["sim_forwarding_gbps"],
                "error_pct": sim["error_pct"],
                "forwarding_error_pct": sim["forwarding_error_pct"],
                "sim_limits": "; ".join(f"{n} {100 * u:.0f}%" for n, u in sim["sim_limits"]),
                "handoffs_sim": sim["handoff_requests_per_packet"],
                "handoffs_model": sim["model_handoff_requests_per_packet"],
            }
        )
    return row


def table(rows: list[dict], key: str, title: str) -> None:
    print(title)
    for app in APPS:
        print(f"\n{app}")
        print("config    " + "".join(f"{n:>8d}" for n in range(1, 7)))
        for _, label in CONFIGS:
            v = [r[key] for r in rows if r["app"] == app and r["config"] == label]
            print(f"{label:<10}" + "".join(f"{x:8.3f}" for x in v))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packets", type=int, default=5000, help="synthetic packets of the profiling run")
    ap.add_argument("--sim-packets", type=int, default=5000, help="synthetic packets of each simulation")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-sim", action="store_true", help="cost model only")
    ap.add_argument("--lock-free-tx", action="store_true", help="transmitter queues without locks (sensitivity)")
    ap.add_argument("--plot", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--csv", type=Path, default=None, help="one row per point: model, simulation, error")
    ap.add_argument("--workers", type=int, default=None, help="points at once, one process each (default: every core)")
    a = ap.parse_args()
    if a.workers is not None and a.workers < 1:
        ap.error("--workers must be at least 1")

    t0 = time.perf_counter()
    # Every point is independent: the sweep machinery's process pool, results in this order.
    grid = [(app, key, label, n, a) for app in APPS for key, label in CONFIGS for n in range(1, 7)]
    rows = map_ordered(point, grid, workers=a.workers, what="Figure 5", label=lambda x: f"{x[0]} {x[2]} {x[3]} MEs")
    wall = time.perf_counter() - t0
    sim = not a.no_sim

    table(
        rows,
        "model_forwarding_gbps",
        f"Figure 5 (cost model): forwarding rate, Gb/s, 64-byte packets at {OFFERED_GBPS} Gb/s",
    )
    if sim:
        print()
        table(rows, "sim_forwarding_gbps", "Figure 5 (timing simulator): forwarding rate, Gb/s")
        print("\nModel against simulation, error = (model - sim) / sim on packets/s (capped-rate error in brackets)")
        print(f"{'app':<9} {'config':<9}" + "".join(f"{n:>16d}" for n in range(1, 7)))
        for app in APPS:
            for _, label in CONFIGS:
                sel = [r for r in rows if r["app"] == app and r["config"] == label]
                cells = "".join(f"{r['error_pct']:+7.1f}% [{r['forwarding_error_pct']:+5.0f}%]" for r in sel)
                print(f"{app:<9} {label:<9}{cells}")
        print("\nper app: mean and max |error| over the 30 points (uncapped; capped)")
        for app in APPS:
            e = [abs(r["error_pct"]) for r in rows if r["app"] == app]
            f = [abs(r["forwarding_error_pct"]) for r in rows if r["app"] == app]
            print(
                f"{app:<9} mean {sum(e) / len(e):6.1f}%  max {max(e):6.1f}%   capped: mean {sum(f) / len(f):6.1f}%"
                f"  max {max(f):6.1f}%"
            )

    print("\nTable 2: TDPM-all forwarding rate, percent of OC-48: model / simulator [paper]")
    print("MEs  " + "".join(f"{app:>28}" for app in APPS))
    for n in range(1, 7):
        cells = []
        for app in APPS:
            r = next(r for r in rows if r["app"] == app and r["config"] == "TDPM-all" and r["mes"] == n)
            pct = min(100.0, 100.0 * r["model_forwarding_gbps"] / OC48_GBPS)
            cell = f"{pct:6.2f}%"
            if sim:
                cell += f" / {min(100.0, 100.0 * r['sim_forwarding_gbps'] / OC48_GBPS):6.2f}%"
            paper = PAPER_TABLE2[app][n - 1] if n <= 4 else None
            cells.append(cell + (f" [{paper:6.2f}%]" if paper is not None else " " * 10))
        print(f"{n:<5}" + "".join(f"{c:>28}" for c in cells))
    print(f"\n{len(rows)} points in {wall:.1f} s")

    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(rows, indent=2))
    if a.csv:
        a.csv.parent.mkdir(parents=True, exist_ok=True)
        with a.csv.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
    if a.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), sharey=True)
        for ax, app in zip(axes, APPS, strict=True):
            for k, (_, label) in enumerate(CONFIGS):
                color = f"C{k}"
                v = [r["model_forwarding_gbps"] for r in rows if r["app"] == app and r["config"] == label]
                ax.plot(range(1, 7), v, marker="o", color=color, label=f"{label} (model)")
                if sim:
                    s = [r["sim_forwarding_gbps"] for r in rows if r["app"] == app and r["config"] == label]
                    ax.plot(range(1, 7), s, marker="x", ls="--", color=color, label=f"{label} (sim)")
            ax.set_title(app)
            ax.set_xlabel("MEs")
            ax.axhline(OC48_GBPS, color="grey", lw=0.8, ls=":")
        axes[0].set_ylabel("forwarding rate (Gb/s)")
        axes[0].legend(fontsize=6, ncol=2)
        fig.tight_layout()
        a.plot.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(a.plot, dpi=120)


if __name__ == "__main__":
    main()
