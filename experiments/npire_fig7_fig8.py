"""The NPIRE paper's (Labrecque & Steffan, NPC 2006) Figure 7 and Figure 8 with the NP timing simulator.

Figure 7: throughput speedup of Router and NAT over 4 PEs with no transformation, for 4 to 32
PEs, under the four replication scopes (no transformation, rep on PE, subset rep, rep + global
task queue). Figure 8: idealized executions (I infinite PEs, Z zero-cycle instructions, S no
synchronization, B perfect bus pipelining, M 1-cycle memory occupancy) of the global-queue
configuration. A third table, not in the paper, measures how the model choices the paper leaves
open move the Router's two ends (4 PEs with no transformation, 32 PEs with a global queue).

The set-up is the simulator's defaults (docs/npsim.md quotes the paper's text behind each),
on transit traffic (`--destinations transit`: the paper's trace is a backbone link's):
the `npire` preset (Table 3), FIFO task scheduling (section 3.1), one request per 32-bit word
(no locality transformation, section 2.8), locks released after the section's last access
(section 2.4), the global queue over every PE (section 5), and the greedy+replicate mapper
(section 3.1 steps 1-3: replicate the task with the longest queue time until the NP is well
utilized). Run:

    python experiments/npire_fig7_fig8.py [--packets 3000] [--pes 4,8,...,30,32] [--out out/npire]

It writes fig7.csv, fig7.png, fig8.csv, fig8.png, sensitivity.csv and summary.json under --out.
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
LABELS = {
    "none": "no transformation",
    "pe": "rep on PE",
    "subset": "subset rep",
    "global": "rep + global task queue",
}
CHAIN = ("none", "I", "IZ", "IZS", "IZSB", "IZSBM")
# The reproduction's set-up: the simulator's defaults, with transit destinations (only routes
# through a gateway): the paper measures "modified packet traces from the Teragrid-I 10GigE NLANR
# trace", a backbone link whose packets a router forwards to a next-hop router. The generator's
# default (Zipf over every route) sends most flows to hosts of the directly attached subnets, one
# ARP query per new host; it is a sensitivity variant below.
SETUP = {"scheduling": "fifo", "lock_release": "after-issue", "wide_accesses": False, "destinations": "transit"}
# Sensitivity: each variant changes the set-up in one or two places.
VARIANTS = (
    ("set-up (simulator defaults, transit traffic)", {}),
    ("locks wait for their accesses", {"lock_release": "after-completion"}),
    ("destinations load both ports equally", {"destinations": "per-port"}),
    ("destinations Zipf over every route (attached subnets included)", {"destinations": "zipf"}),
    ("first-eligible scheduling", {"scheduling": "first-eligible"}),
    ("wide accesses (locality)", {"wide_accesses": True}),
    # Not a model option: the npire preset with 4 cycles per instruction, standing for elements
    # with 4x the instructions our cost annotations estimate (NPIRE counts compiled Click code).
    ("4 cycles per instruction", {"arch_cpi": 4}),
)

console = Console()


def sim_of(setup: dict) -> dict:
    return npsim.model_options(setup["scheduling"], setup["lock_release"], setup["wide_accesses"])


def write_csv(path: Path, rows: list) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def progress_bar() -> Progress:
    """Progress of every step: a bar on a terminal, a line with rate and ETA every few seconds in a log."""
    return Progress()


def figure7(a, prog: Progress) -> tuple:
    rows, docs = [], {}
    for app in APPS:
        task = prog.add_task(f"Figure 7 {app}", total=None)

        def progress(done: int, total: int, label: str, task=task, app=app) -> None:
            prog.update(task, total=total, completed=done, description=f"Figure 7 {app}: {label}")

        doc = npsim.explore(
            app,
            pes=a.pes,
            mapper=a.mapper,
            packets=a.packets,
            seed=a.seed,
            bottleneck=False,
            sim=sim_of(SETUP),
            destinations=SETUP["destinations"],
            progress=progress,
        )
        prog.remove_task(task)
        docs[app] = doc
        for p in doc["points"]:
            rows.append(
                {
                    "app": app,
                    "pes": p["pes"],
                    "replication": p["replication"],
                    "packets_per_second": p["packets_per_second"],
                    "gbps": p["gbps"],
                    "speedup": p["speedup"],
                    "mean_pe_busy": p["mean_pe_busy"],
                    "replicated_tasks": len(p["replicated"]),
                    "baseline_packets_per_second": doc["baseline_packets_per_second"],
                    "binding_resource": p["limit"]["sentence"],
                }
            )
    return rows, docs


def figure8(a, prog: Progress) -> tuple:
    rows, docs = [], {}
    for app in APPS:
        task = prog.add_task(f"Figure 8 {app}", total=14)

        def progress(done: int, label: str, task=task, app=app) -> None:
            prog.update(task, completed=done, description=f"Figure 8 {app}: {label}")

        b = npsim.bottleneck(
            app,
            pes=a.fig8_pes,
            replication="global",
            packets=a.packets,
            seed=a.seed,
            chain=True,
            sim=sim_of(SETUP),
            destinations=SETUP["destinations"],
            progress=progress,
        )
        prog.remove_task(task)
        docs[app] = b
        runs = {r["ideal"]: r for r in b["runs"]}
        for label in sorted(runs, key=lambda k: (k not in CHAIN, CHAIN.index(k) if k in CHAIN else 0, k)):
            r = runs[label]
            rows.append(
                {
                    "app": app,
                    "pes": a.fig8_pes,
                    "ideal": label,
                    "in_figure_8_chain": label in CHAIN,
                    "packets_per_second": r["packets_per_second"],
                    "speedup_over_baseline": r["speedup"],
                }
            )
    return rows, docs


def sensitivity(a, prog: Progress) -> list:
    rows = []
    task = prog.add_task("sensitivity", total=2 * len(VARIANTS))
    k = 0
    for name, change in VARIANTS:
        setup = {**SETUP, **change}
        arch = "npire"
        if "arch_cpi" in setup:
            arch = str(a.out / f"npire_cpi{setup['arch_cpi']}.toml")
            text = (Path(__file__).resolve().parent.parent / "presets" / "npire.toml").read_text()
            Path(arch).write_text(
                text.replace("cycles_per_instruction = 1", f"cycles_per_instruction = {setup['arch_cpi']}")
            )
        rates = {}
        for pes, rep in ((4, "none"), (a.fig8_pes, "global")):
            prog.update(task, completed=k, description=f"sensitivity: {name}, {pes} PEs {rep}")
            m = npsim.maxrate(
                "router",
                arch=arch,
                pes=pes,
                replication=rep,
                packets=a.packets,
                seed=a.seed,
                mapper="greedy" if rep == "none" else "round-robin",
                sim=sim_of(setup),
                destinations=setup["destinations"],
            )
            rates[rep] = m["packets_per_second"]
            k += 1
        rows.append(
            {
                "variant": name,
                "none_4_packets_per_second": rates["none"],
                f"global_{a.fig8_pes}_packets_per_second": rates["global"],
                "ratio": rates["global"] / rates["none"],
            }
        )
    prog.remove_task(task)
    return rows


def plot7(rows: list, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, app in zip(axes, APPS, strict=True):
        for rep, marker, style in (("none", "o", "-"), ("pe", "s", "--"), ("subset", "^", "-."), ("global", "D", ":")):
            pts = sorted((r["pes"], r["speedup"]) for r in rows if r["app"] == app and r["replication"] == rep)
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker=marker, linestyle=style, label=LABELS[rep],
                    markerfacecolor="none")
        ax.set_title(f"({'ab'[APPS.index(app)]}) {app.upper() if app == 'nat' else app.capitalize()}")
        ax.set_xlabel("PEs")
        ax.set_ylabel("throughput speedup over 4 PEs, no transformation")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Figure 7 of the NPIRE paper on the pktflow NP simulator (npire preset)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot8(rows: list, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.0))
    for ax, app in zip(axes, APPS, strict=True):
        rs = [r for r in rows if r["app"] == app and r["in_figure_8_chain"]]
        ax.bar([r["ideal"] for r in rs], [r["speedup_over_baseline"] for r in rs], color="tab:blue")
        ax.set_title(f"{app}: global task queue, {rs[0]['pes']} PEs, idealized")
        ax.set_ylabel("speedup over the same configuration")
        ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packets", type=int, default=3000, help="synthetic packets per simulation")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pes", default="4,8,12,16,20,24,28,30,32", help="PE counts of Figure 7 (30: the paper's 27.2x point)")
    ap.add_argument("--fig8-pes", type=int, default=32, help="PEs of Figure 8's idealized runs")
    ap.add_argument(
        "--mapper",
        default="greedy+replicate",
        help="greedy+replicate (section 3.1 steps 1-3, the default) or greedy (steps 1-2; every task replicated as the scope allows)",
    )
    ap.add_argument("--out", type=Path, default=Path("out/npire"))
    ap.add_argument("--skip-sensitivity", action="store_true")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with progress_bar() as prog:
        f7, docs7 = figure7(a, prog)
        f8, docs8 = figure8(a, prog)
        sens = [] if a.skip_sensitivity else sensitivity(a, prog)
    write_csv(a.out / "fig7.csv", f7)
    write_csv(a.out / "fig8.csv", f8)
    if sens:
        write_csv(a.out / "sensitivity.csv", sens)
    plot7(f7, a.out / "fig7.png")
    plot8(f8, a.out / "fig8.png")
    summary = {
        "setup": SETUP,
        "packets": a.packets,
        "mapper": a.mapper,
        "wall_seconds": time.monotonic() - t0,
        "figure7_baseline_packets_per_second": {k: d["baseline_packets_per_second"] for k, d in docs7.items()},
        "figure8_summary": {k: d["summary"] for k, d in docs8.items()},
        "figure8_baseline_packets_per_second": {k: d["baseline_packets_per_second"] for k, d in docs8.items()},
    }
    (a.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")

    for app in APPS:
        t = Table(title=f"Figure 7 ({app}): speedup over 4 PEs with no transformation")
        t.add_column("PEs", justify="right")
        for rep in ("none", "pe", "subset", "global"):
            t.add_column(LABELS[rep], justify="right")
        for n in sorted({r["pes"] for r in f7}):
            cells = {r["replication"]: r["speedup"] for r in f7 if r["app"] == app and r["pes"] == n}
            t.add_row(str(n), *(f"{cells[k]:.2f}x" if k in cells else "-" for k in ("none", "pe", "subset", "global")))
        console.print(t)
    t = Table(title=f"Figure 8: idealized executions, global task queue, {a.fig8_pes} PEs")
    for c in ("app", "ideal", "packets/s", "speedup"):
        t.add_column(c, justify="right")
    for r in f8:
        t.add_row(r["app"], r["ideal"], f"{r['packets_per_second']:,.0f}", f"{r['speedup_over_baseline']:.2f}x")
    console.print(t)
    for app, d in docs8.items():
        console.print(f"{app}: {d['summary']}")
        if d.get("diagnosis"):
            console.print(f"{app} baseline: {d['diagnosis']['sentence']}")
    for app in APPS:
        for r in f7:
            if r["app"] == app and r["replication"] in ("pe", "global") and r["pes"] in (4, 16, 30, 32):
                console.print(f"{app} {r['pes']} PEs {r['replication']}: {r['speedup']:.2f}x; {r['binding_resource']}")
    if sens:
        t = Table(title="Router: model choices the paper leaves open")
        for c in ("variant", "4 PEs none (packets/s)", f"{a.fig8_pes} PEs global (packets/s)", "ratio"):
            t.add_column(c, justify="right")
        for r in sens:
            vals = list(r.values())
            t.add_row(vals[0], f"{vals[1]:,.0f}", f"{vals[2]:,.0f}", f"{vals[3]:.2f}x")
        console.print(t)
    wall = summary["wall_seconds"]
    console.print(f"wrote {a.out}/fig7.csv, fig7.png, fig8.csv, fig8.png, summary.json in {wall:.0f} s")


if __name__ == "__main__":
    main()
