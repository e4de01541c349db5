"""Figures 9 and 10 of the NPIRE paper (the task transformations) with the NP timing simulator.

Figure 9: throughput speedup of Router (a) and NAT (b) over 4 PEs with no transformation, for 4
to 32 PEs, every configuration with replication and a global task queue: no further
transformation, locality (wide memory operations), early signalling, speculation, and task
splitting. Figure 10: Router with subset replication with and without splitting (a); Router
with locality and without it, with no replication and with replication on a PE (b).
Beside the figures: the speculation failure rates (section 5 quotes 5% at 8 PEs and 6.5% at 32
for Router; 1.8% at 12 and 2.2% at 32 for NAT), the locality transformation's request savings,
the splitting loop's decisions, and the packet latency with and without early signalling at
half the untransformed maximum rate (section 5: 8% lower on average for Router).

The set-up: the `npire` preset, FIFO scheduling, one request per 32-bit word and locks released
once the section's last access is issued (as in experiments/npire_fig7_fig8.py), the greedy
mapper (Figure 7 there: greedy+replicate) and destinations loading both output ports equally
(Figures 7 and 8 there: the generator's Zipf default; its sensitivity table shows what this
choice changes). The transformations' own conventions are in docs/npsim-transforms.md. Run:

    python experiments/npire_fig9_fig10.py [--packets 2000] [--pes 4:32:4] [--out out/npire-xform]

It writes fig9.csv, fig9.png, fig10.csv, fig10.png, early_latency.csv and summary.json under
--out (about 10-20 minutes on two shared cores with the defaults).
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

from pktflow import npsim
from rich.console import Console
from pktflow._ui import Tasks as Progress
from rich.table import Table

APPS = ("router", "nat")
# The set-up of Figures 7 and 8 (experiments/npire_fig7_fig8.py) with per-port destinations.
SETUP = {"scheduling": "fifo", "lock_release": "after-issue", "wide_accesses": False, "destinations": "per-port"}
# Figure 9's lines: (label, transformations), all with a global task queue.
FIG9 = (
    ("rep + global task queue", None),
    ("locality", "locality"),
    ("early", "early"),
    ("speculation", "speculate"),
    ("split", "split"),
)
# Figure 10's lines: (panel, label, replication, transformations).
FIG10 = (
    ("a", "split+subset_rep", "subset", "split"),
    ("a", "subset_rep", "subset", None),
    ("b", "locality+rep_on_PE", "pe", "locality"),
    ("b", "rep_on_PE", "pe", None),
    ("b", "locality", "none", "locality"),
    ("b", "no_transformation", "none", None),
)

console = Console()


def sim_of(transform) -> dict:
    s = npsim.model_options(SETUP["scheduling"], SETUP["lock_release"], SETUP["wide_accesses"], transform)
    return s


def write_csv(path: Path, rows: list) -> None:
    keys: list = []
    for r in rows:
        keys.extend(k for k in r if k not in keys)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def progress_bar() -> Progress:
    """Progress of every step: a bar on a terminal, a line with rate and ETA every few seconds in a log."""
    return Progress()


def sweep(a, prog: Progress, app: str, replication: str, transform, what: str) -> dict:
    task = prog.add_task(what, total=None)

    def progress(done: int, total: int, label: str) -> None:
        prog.update(task, total=total, completed=done, description=f"{what}: {label}")

    doc = npsim.explore(
        app,
        pes=a.pes,
        replication=[replication],
        mapper=a.mapper,
        packets=a.packets,
        seed=a.seed,
        bottleneck=False,
        sim=sim_of(transform),
        destinations=SETUP["destinations"],
        progress=progress,
    )
    prog.remove_task(task)
    return doc


def rows_of(doc: dict, **extra) -> list:
    out = []
    for p in doc["points"]:
        tr = p.get("transform") or {}
        spec = tr.get("speculate") or {}
        loc = tr.get("locality") or {}
        early = tr.get("early") or {}
        split = p.get("split") or {}
        out.append(
            {
                **extra,
                "pes": p["pes"],
                "replication": p["replication"],
                "packets_per_second": p["packets_per_second"],
                "speedup": p["speedup"],
                "baseline_packets_per_second": doc["baseline_packets_per_second"],
                "mean_pe_busy": p["mean_pe_busy"],
                "speculation_failure_rate": spec.get("window_failure_rate"),
                "speculative_sections": spec.get("window_attempts"),
                "locality_saved_fraction": loc.get("saved_fraction"),
                "early_instances_per_visit": (early["early_instances"] / early["visits"]) if early.get("visits") else None,
                "splits_kept": ";".join(split.get("final_splits", [])) if split else None,
                "split_iterations": len(split.get("iterations", [])) if split else None,
            }
        )
    return out


def early_latency(a, prog: Progress, fig9_rows: list) -> list:
    """Mean packet latency with and without early signalling at half the untransformed maximum
    rate of each (app, PE count) of Figure 9 (global task queue)."""
    out = []
    base = [r for r in fig9_rows if r["variant"] == "rep + global task queue"]
    task = prog.add_task("early-signalling latency", total=2 * len(base))
    k = 0
    for r in base:
        ia = 2.0 * 1e9 / r["packets_per_second"]  # PE cycles at 1 GHz, half the maximum rate
        lat = {}
        for label, tf in (("without", None), ("with", "early")):
            prog.update(task, completed=k, description=f"early latency: {r['app']} {r['pes']} PEs {label}")
            s = npsim.simulate(
                r["app"],
                inter_arrival_cycles=ia,
                pes=r["pes"],
                replication="global",
                mapper=a.mapper,
                packets=a.packets,
                seed=a.seed,
                sim=sim_of(tf),
                destinations=SETUP["destinations"],
            )
            lat[label] = s["latency"]["mean_cycles"]
            k += 1
        out.append(
            {
                "app": r["app"],
                "pes": r["pes"],
                "inter_arrival_cycles": ia,
                "latency_without_early_cycles": lat["without"],
                "latency_with_early_cycles": lat["with"],
                "change": lat["with"] / lat["without"] - 1.0,
            }
        )
    prog.remove_task(task)
    return out


def plot(fig9: list, fig10: list, p9: Path, p10: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, app in zip(axes, APPS, strict=True):
        for label, _ in FIG9:
            pts = sorted((r["pes"], r["speedup"]) for r in fig9 if r["app"] == app and r["variant"] == label)
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=label)
        ax.set_title(f"({'ab'[APPS.index(app)]}) {app.upper() if app == 'nat' else app.capitalize()}")
        ax.set_xlabel("Number of PEs")
        ax.set_ylabel("Throughput speedup over 4 PEs, no transformation")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Figure 9 of the NPIRE paper on the pktflow NP simulator (npire preset)")
    fig.tight_layout()
    fig.savefig(p9, dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, panel, title in zip(axes, "ab", ("(a) task splitting, Router", "(b) locality, Router"), strict=True):
        for pn, label, _, _ in FIG10:
            if pn != panel:
                continue
            pts = sorted((r["pes"], r["speedup"]) for r in fig10 if r["variant"] == label)
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=label)
        ax.set_title(title)
        ax.set_xlabel("Number of PEs")
        ax.set_ylabel("Throughput speedup over 4 PEs, no transformation")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Figure 10 of the NPIRE paper on the pktflow NP simulator (npire preset)")
    fig.tight_layout()
    fig.savefig(p10, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packets", type=int, default=2000, help="synthetic packets per simulation")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pes", default="4:32:4", help="PE counts")
    ap.add_argument(
        "--mapper", default="greedy", help="greedy (the default) or greedy+replicate (Figure 7's in npire_fig7_fig8.py)"
    )
    ap.add_argument("--out", type=Path, default=Path("out/npire-xform"))
    ap.add_argument("--skip-fig10", action="store_true")
    ap.add_argument("--skip-latency", action="store_true")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    fig9, fig10, lat = [], [], []
    with progress_bar() as prog:
        for app in APPS:
            for label, tf in FIG9:
                doc = sweep(a, prog, app, "global", tf, f"Figure 9 {app} {label}")
                fig9 += rows_of(doc, app=app, variant=label, transform=tf or "none")
        if not a.skip_fig10:
            for panel, label, rep, tf in FIG10:
                doc = sweep(a, prog, "router", rep, tf, f"Figure 10({panel}) {label}")
                fig10 += rows_of(doc, panel=panel, variant=label, transform=tf or "none")
        if not a.skip_latency:
            lat = early_latency(a, prog, fig9)
    write_csv(a.out / "fig9.csv", fig9)
    if fig10:
        write_csv(a.out / "fig10.csv", fig10)
    if lat:
        write_csv(a.out / "early_latency.csv", lat)
    plot(fig9, fig10, a.out / "fig9.png", a.out / "fig10.png")

    def mean_ratio(app: str, label: str) -> float:
        base = {r["pes"]: r["packets_per_second"] for r in fig9 if r["app"] == app and r["variant"] == FIG9[0][0]}
        xs = [r["packets_per_second"] / base[r["pes"]] for r in fig9 if r["app"] == app and r["variant"] == label]
        return sum(xs) / len(xs)

    summary = {
        "setup": SETUP,
        "packets": a.packets,
        "mapper": a.mapper,
        "wall_seconds": time.monotonic() - t0,
        "throughput_vs_global_queue_mean": {
            app: {label: mean_ratio(app, label) for label, _ in FIG9[1:]} for app in APPS
        },
        "early_latency_change_mean": {
            app: (sum(r["change"] for r in lat if r["app"] == app) / max(1, sum(1 for r in lat if r["app"] == app)))
            for app in APPS
        }
        if lat
        else None,
    }
    (a.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")

    for app in APPS:
        t = Table(title=f"Figure 9 ({app}): speedup over 4 PEs with no transformation (global task queue)")
        t.add_column("PEs", justify="right")
        for label, _ in FIG9:
            t.add_column(label, justify="right")
        t.add_column("spec. failures", justify="right")
        for n in sorted({r["pes"] for r in fig9}):
            cells = {r["variant"]: r for r in fig9 if r["app"] == app and r["pes"] == n}
            fail = cells.get("speculation", {}).get("speculation_failure_rate")
            t.add_row(
                str(n),
                *(f"{cells[label]['speedup']:.2f}x" if label in cells else "-" for label, _ in FIG9),
                f"{fail:.1%}" if fail is not None else "-",
            )
        console.print(t)
    if fig10:
        t = Table(title="Figure 10 (Router): speedup over 4 PEs with no transformation")
        t.add_column("PEs", justify="right")
        for _, label, _, _ in FIG10:
            t.add_column(label, justify="right")
        for n in sorted({r["pes"] for r in fig10}):
            cells = {r["variant"]: r["speedup"] for r in fig10 if r["pes"] == n}
            t.add_row(str(n), *(f"{cells[label]:.2f}x" if label in cells else "-" for _, label, _, _ in FIG10))
        console.print(t)
    if lat:
        t = Table(title="Mean packet latency at half the untransformed maximum rate (global task queue)")
        for c in ("app", "PEs", "without early (cycles)", "with early (cycles)", "change"):
            t.add_column(c, justify="right")
        for r in lat:
            t.add_row(
                r["app"],
                str(r["pes"]),
                f"{r['latency_without_early_cycles']:.0f}",
                f"{r['latency_with_early_cycles']:.0f}",
                f"{r['change']:+.1%}",
            )
        console.print(t)
    console.print(json.dumps(summary["throughput_vs_global_queue_mean"], indent=1))
    console.print(f"wrote {a.out}/fig9.csv, fig9.png, fig10.csv, fig10.png, summary.json in {summary['wall_seconds']:.0f} s")


if __name__ == "__main__":
    main()
