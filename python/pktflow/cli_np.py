"""``pktflow simulate``, ``maxrate`` and ``bottleneck``: the network-processor timing simulator.

Wired into the main CLI by ``pktflow.cli`` through ``register(app)``. See docs/npsim.md.
"""

from __future__ import annotations

import json
import sys
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pktflow import PktflowError
from pktflow import np as api

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


def register(app: typer.Typer) -> None:
    @app.command("simulate")
    def simulate_cmd(
        application: str = typer.Argument("router", help=APP_HELP),
        inter_arrival: float = typer.Option(..., "--inter-arrival", help="Packet inter-arrival time, PE cycles."),
        arch: str = typer.Option("npire", "--arch"),
        pes: Optional[int] = typer.Option(None, "--pes", help="PEs (default: the preset's)."),
        replication: str = typer.Option("global", "--replication", help="none|pe|subset|global"),
        packets: int = typer.Option(20_000, "--packets", help="Synthetic packets."),
        trace: Optional[str] = typer.Option(None, "--trace", help="pcap/pcapng file."),
        seed: int = typer.Option(1, "--seed"),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """One timing simulation of APP on a network processor at a fixed packet rate."""
        r = api.simulate(
            application,
            inter_arrival_cycles=inter_arrival,
            arch=arch,
            pes=pes,
            replication=_check_rep(replication),
            packets=packets,
            trace=trace,
            seed=seed,
        )
        if as_json:
            _emit_json(r)
        else:
            _print_report(r)

    @app.command("maxrate")
    def maxrate_cmd(
        application: str = typer.Argument("router", help=APP_HELP),
        arch: str = typer.Option("npire", "--arch"),
        pes: Optional[int] = typer.Option(None, "--pes", help="PEs (default: the preset's)."),
        replication: str = typer.Option("global", "--replication", help="none|pe|subset|global"),
        packets: int = typer.Option(20_000, "--packets", help="Synthetic packets per simulation."),
        trace: Optional[str] = typer.Option(None, "--trace", help="pcap/pcapng file."),
        seed: int = typer.Option(1, "--seed"),
        tolerance: float = typer.Option(0.02, "--tolerance", help="Keep-up tolerance (relative)."),
        precision: float = typer.Option(0.01, "--precision", help="Bracket width (relative)."),
        zero_drop: bool = typer.Option(False, "--zero-drop", help="Also require no drop in the window."),
        as_json: bool = typer.Option(False, "--json"),
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
        application: str = typer.Argument("router", help=APP_HELP),
        arch: str = typer.Option("npire", "--arch"),
        pes: Optional[int] = typer.Option(None, "--pes", help="PEs (default: the preset's)."),
        replication: str = typer.Option("global", "--replication", help="none|pe|subset|global"),
        packets: int = typer.Option(20_000, "--packets", help="Synthetic packets per simulation."),
        trace: Optional[str] = typer.Option(None, "--trace", help="pcap/pcapng file."),
        seed: int = typer.Option(1, "--seed"),
        ideal: Optional[str] = typer.Option(
            None,
            "--ideal",
            help="More combinations to run, comma-separated Figure 8 letters (e.g. SB,IS).",
        ),
        no_chain: bool = typer.Option(False, "--no-chain", help="Skip Figure 8's chain I, IZ, IZS, IZSB, IZSBM."),
        threshold: float = typer.Option(1.05, "--threshold", help="Smallest gain (factor) that counts as a limit."),
        as_json: bool = typer.Option(False, "--json"),
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
