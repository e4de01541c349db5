"""``pktflow simulate``, ``maxrate`` and ``bottleneck``: the network-processor timing simulator.

Wired into the main CLI by ``pktflow.cli`` through ``register(app)``. See docs/npsim.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pktflow import PktflowError
from pktflow import npsim as api

console = Console()
err = Console(stderr=True)

APP_HELP = "Built-in application (router, nat, router64) or a Click configuration file."


def _emit_json(doc) -> None:
    sys.stdout.write(json.dumps(doc, indent=2))
    sys.stdout.write("\n")


def _check_rep(replication: str) -> str:
    if replication not in api.REPLICATIONS:
        raise PktflowError(f"--replication must be one of {', '.join(api.REPLICATIONS)}, got {replication!r}")
    return replication


def _print_report(r: dict) -> None:
    w = r["window"]
    console.print(
        f"[bold]{r['spec']['app']}[/bold] on {r['pe_count']} PEs ({r['spec']['replication']}): "
        f"offered {r['offered_packets_per_second']:,.0f} packets/s, delivered "
        f"{r['throughput_packets_per_second']:,.0f} packets/s ({r['throughput_gbps']:.3f} Gb/s)"
    )
    console.print(
        f"window: {w['arrivals']} arrivals, {w['departures']} departures, in flight "
        f"{w['in_flight_at_start']} -> {w['in_flight_at_end']}, NP drops {w['sim_drops']}; "
        f"latency mean {r['latency']['mean_cycles']:.0f} p99 {r['latency']['p99_cycles']} cycles"
    )
    t = Table(title="PEs (share of time)")
    for c in ("PE", "busy", "memory wait", "lock wait", "idle"):
        t.add_column(c, justify="right")
    for p in r["pes"]:
        t.add_row(
            str(p["pe"]),
            *(f"{p[k]:.3f}" for k in ("busy", "memory_wait", "lock_wait", "idle")),
        )
    console.print(t)
    t = Table(title="buses and storage")
    for c in ("resource", "requests", "utilization", "queue delay (cycles)"):
        t.add_column(c, justify="right")
    for b in r["buses"] + r["storage"]:
        if b["requests"]:
            t.add_row(
                escape(b["name"]),
                str(b["requests"]),
                f"{b['utilization']:.3f}",
                f"{b['mean_queue_delay_cycles']:.1f}",
            )
    console.print(t)
    tasks = sorted(r["tasks"], key=lambda x: -x["mean_queue_cycles"])[:8]
    t = Table(title="tasks with the longest queue time")
    for c in ("task", "instances", "queue (cycles)", "lock held", "dropped"):
        t.add_column(c, justify="right")
    for x in tasks:
        t.add_row(
            escape(x["element"]),
            str(x["instances"]),
            f"{x['mean_queue_cycles']:.1f}",
            f"{x['lock_held']:.3f}",
            str(x["dropped"]),
        )
    console.print(t)
    for k, n in r["dropped_by_np"].items():
        console.print(f"NP drop: {escape(k)}: {n}")


MAPPER_HELP = "Task mapper (seed 000 section 3.1): round-robin, greedy, greedy+replicate or anneal."

# Options shared by simulate, maxrate, bottleneck and explore (declared once).
AppArg = Annotated[str, typer.Argument(help=APP_HELP)]
ArchOpt = Annotated[str, typer.Option("--arch", help="Architecture preset or TOML file.")]
PesOpt = Annotated[Optional[int], typer.Option("--pes", help="PEs (default: the preset's).")]
RepOpt = Annotated[str, typer.Option("--replication", help="none|pe|subset|global")]
TraceOpt = Annotated[Optional[str], typer.Option("--trace", help="pcap/pcapng file.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the synthetic trace.")]
MapperOpt = Annotated[str, typer.Option("--mapper", help=MAPPER_HELP)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
SchedOpt = Annotated[
    str,
    typer.Option(
        "--scheduling",
        help="fifo (seed 000: one queue per PE, head-of-line blocking) or first-eligible.",
    ),
]
ReleaseOpt = Annotated[
    str,
    typer.Option(
        "--lock-release",
        help="after-completion (a section waits for its accesses) or after-issue (optimistic).",
    ),
]
WideOpt = Annotated[
    bool,
    typer.Option("--wide-accesses", help="One request per traced access (locality transformation)."),
]
DestOpt = Annotated[
    str,
    typer.Option("--destinations", help="Synthetic destinations: zipf, uniform, address-space or per-port."),
]


def _check_mapper(mapper: str) -> str:
    if mapper not in api.MAPPERS:
        raise PktflowError(f"--mapper must be one of {', '.join(api.MAPPERS)}, got {mapper!r}")
    return mapper


def _explore_table(doc: dict) -> Table:
    t = Table(
        title=f"{doc['app']} on {doc['arch']} ({doc['mapper']} mapping): maximum sustainable rate; "
        f"speedup over {doc['baseline_pes']} PEs with no replication "
        f"({doc['baseline_packets_per_second']:,.0f} packets/s)"
    )
    for c in ("PEs", "replication", "packets/s", "Gb/s", "speedup", "PE busy", "replicated", "limited by"):
        t.add_column(c, justify="right" if c not in ("replication", "limited by") else "left", no_wrap=True)
    for p in doc["points"]:
        b = p.get("bottleneck")
        t.add_row(
            str(p["pes"]),
            p["replication"],
            f"{p['packets_per_second']:,.0f}",
            f"{p['gbps']:.3f}",
            f"{p['speedup']:.2f}x",
            f"{p['mean_pe_busy']:.2f}",
            str(len(p["replicated"])),
            _short_bottleneck(b, doc.get("threshold", 1.05)) if b else "-",
        )
    return t


def _short_bottleneck(b: dict, threshold: float) -> str:
    """The S/B/M gains that reach the threshold, largest first (the full sentence is in --json)."""
    names = {"S": "sync", "B": "buses", "M": "memories"}
    lim = sorted(((g, k) for k, g in b["gains"].items() if g >= threshold), reverse=True)
    if not lim:
        return "none of S/B/M alone"
    return ", ".join(f"{names[k]} ({k} {g:.2f}x)" for g, k in lim)


def _explore_plot(doc: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    labels = {
        "none": "no transformation",
        "pe": "rep on PE",
        "subset": "subset rep",
        "global": "rep + global task queue",
    }
    for rep in api.REPLICATIONS:
        pts = sorted((p["pes"], p["speedup"]) for p in doc["points"] if p["replication"] == rep)
        if pts:
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=labels[rep])
    ax.set_xlabel("PEs")
    ax.set_ylabel(f"throughput speedup over {doc['baseline_pes']} PEs, no transformation")
    ax.set_title(f"{doc['app']} on {doc['arch']} ({doc['mapper']} mapping)")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def register(app: typer.Typer) -> None:
    @app.command("simulate")
    def simulate_cmd(
        application: AppArg = "router",
        inter_arrival: Optional[float] = typer.Option(
            None, "--inter-arrival", help="Packet inter-arrival time, PE cycles (required unless --arrivals recorded)."
        ),
        arrivals: str = typer.Option(
            "fixed", "--arrivals", help="fixed (every --inter-arrival cycles) or recorded (the trace's timestamps)."
        ),
        time_scale: float = typer.Option(
            1.0, "--time-scale", help="Recorded arrivals: factor on the gaps (0.5 replays twice as fast)."
        ),
        arch: ArchOpt = "npire",
        pes: PesOpt = None,
        replication: RepOpt = "global",
        packets: int = typer.Option(20_000, "--packets", help="Synthetic packets."),
        trace: TraceOpt = None,
        seed: SeedOpt = 1,
        mapper: MapperOpt = "round-robin",
        scheduling: SchedOpt = "fifo",
        lock_release: ReleaseOpt = "after-completion",
        wide_accesses: WideOpt = False,
        destinations: DestOpt = "zipf",
        as_json: JsonOpt = False,
    ) -> None:
        """One timing simulation of APP on a network processor at a fixed packet rate (or as recorded)."""
        if arrivals not in ("fixed", "recorded"):
            raise PktflowError(f"--arrivals must be fixed or recorded, got {arrivals!r}")
        if arrivals == "fixed" and inter_arrival is None:
            raise PktflowError("--inter-arrival CYCLES is required (or use --arrivals recorded)")
        sim = api.model_options(scheduling, lock_release, wide_accesses)
        sim.update(arrivals=arrivals, time_scale=time_scale)
        r = api.simulate(
            application,
            inter_arrival_cycles=inter_arrival if inter_arrival is not None else 1000.0,
            arch=arch,
            pes=pes,
            replication=_check_rep(replication),
            packets=packets,
            trace=trace,
            seed=seed,
            mapper=_check_mapper(mapper),
            sim=sim,
            destinations=destinations,
        )
        if as_json:
            _emit_json(r)
        else:
            _print_report(r)

    @app.command("maxrate")
    def maxrate_cmd(
        application: AppArg = "router",
        arch: ArchOpt = "npire",
        pes: PesOpt = None,
        replication: RepOpt = "global",
        packets: int = typer.Option(20_000, "--packets", help="Synthetic packets per simulation."),
        trace: TraceOpt = None,
        seed: SeedOpt = 1,
        tolerance: float = typer.Option(0.02, "--tolerance", help="Keep-up tolerance (relative)."),
        precision: float = typer.Option(0.01, "--precision", help="Bracket width (relative)."),
        zero_drop: bool = typer.Option(False, "--zero-drop", help="Also require no drop in the window."),
        mapper: MapperOpt = "round-robin",
        scheduling: SchedOpt = "fifo",
        lock_release: ReleaseOpt = "after-completion",
        wide_accesses: WideOpt = False,
        destinations: DestOpt = "zipf",
        as_json: JsonOpt = False,
    ) -> None:
        """Maximum sustainable packet rate of APP (bisection over the inter-arrival time)."""
        m = api.maxrate(
            application,
            arch=arch,
            pes=pes,
            replication=_check_rep(replication),
            packets=packets,
            trace=trace,
            seed=seed,
            mapper=_check_mapper(mapper),
            sim=api.model_options(scheduling, lock_release, wide_accesses),
            destinations=destinations,
            search={"tolerance": tolerance, "precision": precision, "zero_drop": zero_drop},
        )
        if as_json:
            _emit_json(m)
            return
        lo, hi = m["bracket"]["inter_arrival_cycles"]
        console.print(
            f"[bold]{m['spec']['app']}[/bold] on {m['report']['pe_count']} PEs "
            f"({m['spec']['replication']}): {m['packets_per_second']:,.0f} packets/s = "
            f"{m['gbps']:.3f} Gb/s at {m['mean_wire_bytes']:.0f} B/packet; inter-arrival "
            f"bracket [{lo:.2f}, {hi:.2f}] cycles after {len(m['probes'])} simulations"
        )
        _print_report(m["report"])

    @app.command("bottleneck")
    def bottleneck_cmd(
        application: AppArg = "router",
        arch: ArchOpt = "npire",
        pes: PesOpt = None,
        replication: RepOpt = "global",
        packets: int = typer.Option(20_000, "--packets", help="Synthetic packets per simulation."),
        trace: TraceOpt = None,
        seed: SeedOpt = 1,
        ideal: Optional[str] = typer.Option(
            None,
            "--ideal",
            help="More combinations to run, comma-separated Figure 8 letters (e.g. SB,IS).",
        ),
        no_chain: bool = typer.Option(False, "--no-chain", help="Skip Figure 8's chain I, IZ, IZS, IZSB, IZSBM."),
        threshold: float = typer.Option(1.05, "--threshold", help="Smallest gain (factor) that counts as a limit."),
        mapper: MapperOpt = "round-robin",
        scheduling: SchedOpt = "fifo",
        lock_release: ReleaseOpt = "after-completion",
        wide_accesses: WideOpt = False,
        destinations: DestOpt = "zipf",
        as_json: JsonOpt = False,
    ) -> None:
        """What limits APP's throughput: maximum rates with resources idealized (seed 000 Fig. 8).

        I infinite PEs, Z zero-cycle instructions, S no synchronization, B perfect bus
        pipelining, M memories with 1-cycle unpipelined time.
        """
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        extra = [x.strip() for x in ideal.split(",") if x.strip()] if ideal else []
        # baseline + 5 alone + 4 with the top one + the chain's new ones (IZ..IZSBM) + extra
        total = 10 + (0 if no_chain else 4) + len(extra)
        with Progress(
            TextColumn("[bold]bottleneck[/bold] {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            transient=True,
            disable=as_json and not err.is_terminal,
        ) as prog:
            task = prog.add_task("baseline", total=total)

            def progress(done: int, label: str) -> None:
                prog.update(task, completed=done, description=f"max rate with {label}")

            b = api.bottleneck(
                application,
                arch=arch,
                pes=pes,
                replication=_check_rep(replication),
                packets=packets,
                trace=trace,
                seed=seed,
                chain=not no_chain,
                extra=extra,
                threshold=threshold,
                mapper=_check_mapper(mapper),
                sim=api.model_options(scheduling, lock_release, wide_accesses),
                destinations=destinations,
                progress=progress,
            )
        if as_json:
            _emit_json(b)
            return
        console.print(
            f"[bold]{b['spec']['app']}[/bold] ({b['spec']['replication']}, "
            f"{b['spec']['pes'] or 'preset'} PEs): baseline "
            f"{b['baseline_packets_per_second']:,.0f} packets/s ({b['baseline_gbps']:.3f} Gb/s)"
        )
        t = Table(title="idealized executions")
        for c in ("ideal", "packets/s", "Gb/s", "speedup"):
            t.add_column(c, justify="right")
        for r in b["runs"]:
            t.add_row(
                r["ideal"],
                f"{r['packets_per_second']:,.0f}",
                f"{r['gbps']:.3f}",
                f"{r['speedup']:.2f}x",
            )
        console.print(t)
        t = Table(title="ranking")
        for c in ("resource", "ideal", "gain alone", "gain after top", "limiting"):
            t.add_column(c, justify="right")
        for f in b["ranking"]:
            t.add_row(
                escape(f["resource"]),
                f["ideal"],
                f"{f['gain_alone']:.2f}x",
                f"{f['gain_after_top']:.2f}x",
                "yes" if f["limiting"] else "no",
            )
        console.print(t)
        console.print(escape(b["summary"]))

    @app.command("explore")
    def explore_cmd(
        application: AppArg = "router",
        arch: ArchOpt = "npire",
        pes: str = typer.Option(
            "4:32:4", "--pes", help="PE counts: FIRST:LAST[:STEP] (step 4 by default) or a list 4,8,16."
        ),
        replication: str = typer.Option(
            "none,pe,subset,global", "--replication", help="Comma-separated scopes: none, pe, subset, global."
        ),
        mapper: str = typer.Option("greedy+replicate", "--mapper", help=MAPPER_HELP),
        scheduling: SchedOpt = "fifo",
        lock_release: ReleaseOpt = "after-completion",
        wide_accesses: WideOpt = False,
        destinations: DestOpt = "zipf",
        packets: int = typer.Option(2_000, "--packets", help="Synthetic packets per simulation."),
        trace: TraceOpt = None,
        seed: SeedOpt = 1,
        subset_size: int = typer.Option(4, "--subset-size", help="PEs per group for subset replication."),
        no_bottleneck: bool = typer.Option(False, "--no-bottleneck", help="Skip the S/B/M ranking at each point."),
        threshold: float = typer.Option(
            1.05, "--threshold", help="Smallest S/B/M gain (factor) that counts as a limit."
        ),
        as_json: JsonOpt = False,
        plot: Optional[str] = typer.Option(None, "--plot", help="Write speedup vs PEs (Figure 7 style) to this PNG."),
        csv_path: Optional[str] = typer.Option(None, "--csv", help="Write one row per point to this CSV."),
    ) -> None:
        """For each PE count and replication scope: the best mapping found, its maximum rate,
        speedup over 4 PEs with no replication (seed 000 Figure 7) and what limits it."""
        import time

        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        reps = [r.strip() for r in replication.split(",") if r.strip()]
        for r in reps:
            _check_rep(r)
        counts = api.parse_pes(pes)
        t0 = time.monotonic()
        with Progress(
            TextColumn("[bold]explore[/bold] {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=err,
            transient=True,
            disable=as_json and not err.is_terminal,
        ) as prog:
            task = prog.add_task("step 1", total=None, rate="")

            def progress(done: int, total: int, label: str) -> None:
                el = time.monotonic() - t0
                rate = f"{done / el:.2f} points/s" if done and el > 0 else ""
                prog.update(task, total=total, completed=done, description=label, rate=rate)

            doc = api.explore(
                application,
                arch=arch,
                pes=counts,
                replication=reps,
                mapper=_check_mapper(mapper),
                sim=api.model_options(scheduling, lock_release, wide_accesses),
                destinations=destinations,
                packets=packets,
                trace=trace,
                seed=seed,
                subset_size=subset_size,
                bottleneck=not no_bottleneck,
                threshold=threshold,
                progress=progress,
            )
        wall = time.monotonic() - t0
        if csv_path:
            import csv

            rows = api.explore_rows(doc)
            Path(csv_path).parent.mkdir(parents=True, exist_ok=True)
            with open(csv_path, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
                w.writeheader()
                w.writerows(rows)
        if plot:
            _explore_plot(doc, plot)
        if as_json:
            _emit_json(doc)
            return
        console.print(_explore_table(doc))
        for extra, what in ((csv_path, "CSV"), (plot, "plot")):
            if extra:
                console.print(f"{what}: {escape(extra)}")
        console.print(
            f"{len(doc['points'])} points, {sum(p['searches'] for p in doc['points'])} maximum-rate searches, "
            f"{packets} packets per simulation; wall time {wall:.1f} s"
        )
