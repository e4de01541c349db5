"""``pktflow noc`` (synthetic network sweeps) and ``pktflow stream`` (stream graphs on the mesh).

Wired into the main CLI by ``pktflow.cli`` through ``register(app)``. See docs/noc.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from pktflow import noc as api

console = Console()
err = Console(stderr=True)


def _emit_json(doc) -> None:
    sys.stdout.write(json.dumps(doc, indent=2))
    sys.stdout.write("\n")


def _rates(text: str) -> list[float]:
    try:
        out = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise typer.BadParameter(f"--rates must be comma-separated numbers, got {text!r}") from None
    if not out:
        raise typer.BadParameter("--rates needs at least one value")
    return out


def _progress() -> Progress:
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    )


def noc_cmd(
    mesh: str = typer.Option("8x8", "--mesh", help="Mesh size COLSxROWS, e.g. 8x8."),
    traffic: str = typer.Option("uniform", "--traffic", help="uniform, transpose, bit_complement, hotspot."),
    routing: str = typer.Option("dor", "--routing", help="dor or adaptive (packet switching)."),
    vcs: int = typer.Option(4, "--vcs", help="Virtual channels per input port."),
    buffer: int = typer.Option(8, "--buffer", help="Buffer depth per VC, flits."),
    packet_flits: int = typer.Option(1, "--packet-flits", help="Packet length, flits."),
    rates: str = typer.Option("0.1,0.2,0.3", "--rates", help="Offered loads, flits/node/cycle."),
    warmup: int = typer.Option(10_000, "--warmup", help="Warm-up cycles."),
    measure: int = typer.Option(100_000, "--measure", help="Measured cycles."),
    seed: int = typer.Option(1, "--seed"),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document on stdout."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write a latency-load plot (PNG)."),
) -> None:
    """Synthetic traffic on the cycle-level mesh: latency and accepted throughput vs offered load."""
    rl = _rates(rates)
    kw = dict(
        mesh=mesh,
        traffic=traffic,
        routing=routing,
        vcs=vcs,
        buffer=buffer,
        packet_flits=packet_flits,
        warmup=warmup,
        measure=measure,
        seed=seed,
    )
    if as_json:
        res = api.sweep(rates=rl, **kw)
    else:
        with _progress() as prog:
            task = prog.add_task(f"{mesh} {traffic} {routing}", total=len(rl), rate="")

            def cb(i, p):
                rate = (warmup + measure) / max(p["wall_seconds"], 1e-9)
                prog.update(task, advance=1, rate=f"{rate:,.0f} cycles/s")

            res = api.sweep(rates=rl, progress=cb, **kw)
    if plot is not None:
        _plot_sweep(res, plot)
    if as_json:
        _emit_json(res)
        return
    t = Table(
        title=f"{mesh} mesh, {traffic} traffic, {routing}, {vcs} VCs x {buffer} flits, {packet_flits}-flit packets"
    )
    for c in ("offered (flits/node/cycle)", "accepted (flits/node/cycle)", "latency (cycles)", "saturated", "cycles/s"):
        t.add_column(c, justify="right")
    for p in res["points"]:
        t.add_row(
            f"{p['offered']:.4f}",
            f"{p['accepted']:.4f}",
            f"{p['latency']:.2f}",
            "yes" if p["saturated"] else "no",
            f"{p['cycles_simulated'] / max(p['wall_seconds'], 1e-9):,.0f}",
        )
    console.print(t)
    th = res["theory"]
    console.print(
        f"zero-load latency (theory, uniform): {th['zero_load_latency_uniform']:.2f} cycles; "
        f"uniform DOR bound 4/k = {th['uniform_dor_bound']:.3f} flits/node/cycle; "
        f"saturation (last unsaturated offered load): {res['saturation_offered']}"
    )
    if plot is not None:
        console.print(f"plot written to {plot}")


def _plot_sweep(res, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = res["points"]
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.5))
    ax[0].plot([p["offered"] for p in pts], [p["latency"] for p in pts], "o-")
    ax[0].set_xlabel("offered load (flits/node/cycle)")
    ax[0].set_ylabel("average latency (cycles)")
    ax[0].axhline(res["theory"]["zero_load_latency_uniform"], ls=":", c="gray", label="zero-load (uniform)")
    ax[0].legend()
    ax[1].plot([p["offered"] for p in pts], [p["accepted"] for p in pts], "o-")
    ax[1].plot([0, max(p["offered"] for p in pts)], [0, max(p["offered"] for p in pts)], ":", c="gray")
    ax[1].set_xlabel("offered load (flits/node/cycle)")
    ax[1].set_ylabel("accepted (flits/node/cycle)")
    fig.suptitle(f"{res['mesh']} {res['traffic']} {res['routing']}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def stream_cmd(
    graph: str = typer.Argument(..., metavar="GRAPH", help="Benchmark name or a .json/.toml stream graph."),
    mesh: str = typer.Option("4x4", "--mesh", help="Mesh size COLSxROWS."),
    routing: str = typer.Option("tentacle", "--routing", help="dor, adaptive, tentacle, ideal, negotiated, exact."),
    comm: str = typer.Option("push", "--comm", help="push or pull (pull: dor/adaptive only)."),
    scales: Optional[str] = typer.Option(
        None, "--scales", help="Computation scaling factors (comma list); default: automatic sweep to 0."
    ),
    warmup: int = typer.Option(10_000, "--warmup"),
    measure: int = typer.Option(100_000, "--measure"),
    seed: int = typer.Option(1, "--seed"),
    retries: int = typer.Option(
        0, "--retries", help="Tentacle retries: other stream orders, then routing-aware re-layouts."
    ),
    anneal_moves: int = typer.Option(20_000, "--anneal-moves"),
    no_sim: bool = typer.Option(False, "--no-sim", help="Only partition, lay out and route."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document on stdout."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write the link-load heat map (PNG)."),
) -> None:
    """Map a stream graph onto the mesh, route its streams and report throughput and link loads."""
    sl = _rates(scales) if scales else None
    kw = dict(
        mesh=mesh,
        routing=routing,
        comm=comm,
        scales=sl,
        warmup=warmup,
        measure=measure,
        seed=seed,
        retries=retries,
        anneal_moves=anneal_moves,
        simulate=not no_sim,
    )
    if as_json:
        res = api.run_stream(graph, **kw)
    else:
        with err.status(f"simulating {graph} on {mesh} with {routing}/{comm} ..."):
            res = api.run_stream(graph, **kw)
    if plot is not None:
        _plot_heatmap(res, plot)
    if as_json:
        _emit_json(res)
        return
    ro = res["route"]
    console.print(
        f"[bold]{res['graph']}[/] on {mesh}: {len(res['actors'])} actors, {len(res['routes'])} streams, "
        f"balance (max/mean work) {res['balance']:.2f}, layout cost {res['layout']['cost']:.1f}"
    )
    status = "disjoint circuits" if ro["circuits"] else ("FELL BACK to DOR" if ro["fallback"] else "packet switching")
    console.print(f"routing {routing}: {status}. {ro['detail']}")
    pts = Table(title="throughput (steady-state iterations per 1000 cycles)")
    for c in ("scale (cycles/work)", "throughput", "mean packet latency", "flits"):
        pts.add_column(c, justify="right")
    for p in res["points"]:
        pts.add_row(
            f"{p['scale']:.4g}", f"{p['throughput']:.3f}", f"{p['mean_packet_latency']:.1f}", str(p["flits_delivered"])
        )
    if res["points"]:
        console.print(pts)
        console.print(f"saturation throughput: [bold]{res['saturation_throughput']:.3f}[/] iterations/kcycle")
    rt = Table(title="routes")
    for c in ("stream", "src tile", "dst tile", "items/iter", "min hops", "hops", "path"):
        rt.add_column(c, justify="right")
    for r in res["routes"]:
        rt.add_row(
            str(r["stream"]),
            str(r["src_tile"]),
            str(r["dst_tile"]),
            f"{r['items']:.0f}",
            str(r["min_hops"]),
            "" if r["hops"] is None else str(r["hops"]),
            r["path"] or "",
        )
    console.print(rt)
    hm = Table(title=f"link-load heat map (max streams on a link leaving each router; max {res['max_link_load']:.2f})")
    for x in range(len(res["heatmap"][0])):
        hm.add_column(f"x={x}", justify="right")
    for row in res["heatmap"]:
        hm.add_row(*[(f"[red]{v:.1f}[/]" if v > 1.0 + 1e-9 else f"{v:.1f}") for v in row])
    console.print(hm)
    if res["setup"]:
        s = res["setup"]
        console.print(
            f"circuit set-up: min {s['min']}, max {s['max']}, mean {s['mean']:.2f}, total {s['total']} cycles"
        )
    if plot is not None:
        console.print(f"heat map written to {plot}")


def _plot_heatmap(res, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    im = ax[0].imshow(res["heatmap"], cmap="Reds", vmin=0)
    ax[0].set_title("max streams on a link leaving each router")
    ax[0].set_xlabel("x")
    ax[0].set_ylabel("y")
    fig.colorbar(im, ax=ax[0])
    loads = [ln["streams"] for ln in res["link_loads"]]
    ax[1].bar(range(len(loads)), loads)
    ax[1].set_xlabel("link")
    ax[1].set_ylabel("streams")
    ax[1].set_title("streams per link (paper Fig. 3)")
    fig.suptitle(f"{res['graph']} {res['mesh']} {res['routing']}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def register(app: typer.Typer) -> None:
    """Add the ``noc`` and ``stream`` commands to the main ``pktflow`` app."""
    app.command("noc")(noc_cmd)
    app.command("stream")(stream_cmd)
