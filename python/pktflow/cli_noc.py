"""``pktflow noc`` (synthetic network sweeps) and ``pktflow stream`` (stream graphs on the mesh).

Wired into the main CLI by ``pktflow.cli`` through ``register(app)``. See docs/noc.md.
Every default is the core's (crates/noc): an option left unset is not sent.
"""

from __future__ import annotations

import enum
import json
import re
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from pktflow import _ui
from pktflow import noc as api
from pktflow._core import PktflowError, noc_catalog

_CATALOG = json.loads(noc_catalog())

#: the traffic patterns registered in the core (crates/noc/src/sim/traffic)
Traffic = enum.Enum("Traffic", {n: n for n in _CATALOG["traffic"]}, type=str)


class Compat(str, enum.Enum):
    pktflow = "pktflow"
    booksim = "booksim"


#: the packet routing functions registered in the core (crates/noc/src/sim/packet_routing)
PacketRouting = enum.Enum("PacketRouting", {n: n for n in _CATALOG["packet_routings"]}, type=str)


#: the stream routing functions registered in the core (crates/noc/src/routing/stream)
StreamRouting = enum.Enum("StreamRouting", {n: n for n in _CATALOG["routings"]}, type=str)


class Comm(str, enum.Enum):
    push = "push"
    pull = "pull"


class EdgeBytes(str, enum.Enum):
    packet = "packet"
    descriptor = "descriptor"


#: request field -> command-line option, so that a core error names the option the user typed
_OPTIONS = {
    "rates": "--rates",
    "scales": "--scales",
    "mesh": "--mesh",
    "vcs": "--vcs",
    "buffer": "--buffer",
    "packet_flits": "--packet-flits",
    "warmup": "--warmup",
    "measure": "--measure",
    "drain": "--drain",
    "seed": "--seed",
    "hotspot_fraction": "--hotspot-fraction",
    "ni_flits": "--ni-flits",
    "compat": "--compat",
    "anneal_moves": "--anneal-moves",
    "retries": "--retries",
    "buffer_iterations": "--buffer-iterations",
    "rate": "--rate",
    "packets": "--packets",
    "edge_bytes": "--edge-bytes",
    "descriptor_bytes": "--descriptor-bytes",
    "clock_hz": "--clock-hz",
    "cycles_per_instruction": "--cycles-per-instruction",
}


def _optname(msg: str) -> str:
    """``measure must be ...`` -> ``--measure must be ...``; ``rates[2] must`` -> ``--rates value 3 must``."""
    m = re.match(r"^([a-z_]+)(\[(\d+)\])? must ", msg)
    if not m or m.group(1) not in _OPTIONS:
        return msg
    opt = _OPTIONS[m.group(1)]
    if m.group(3) is not None:
        opt += f" value {int(m.group(3)) + 1}"
    return opt + msg[len(m.group(1) + (m.group(2) or "")) :]


def _call(fn, *args, **kw):
    try:
        return _ui.keep_partial(fn, *args, **kw)
    except PktflowError as e:
        raise PktflowError(_optname(str(e))) from None


def _numbers(text: str, option: str) -> list[float]:
    out = []
    for x in text.split(","):
        if not x.strip():
            continue
        try:
            out.append(float(x))
        except ValueError:
            raise PktflowError(f"{option} must be comma-separated numbers, got {x.strip()!r}") from None
    if not out:
        raise PktflowError(f"{option} needs at least one value")
    return out


def _fmt(v: Optional[float], spec: str = ".2f") -> str:
    return "-" if v is None else format(v, spec)


def _run_with_progress(what: str, fn, **kw) -> dict[str, Any]:
    with _ui.progress(what, "cycles") as bar:

        def cb(done: int, total: int, label: str) -> None:
            bar.update(done, total, label)

        return _call(fn, progress=cb, **kw)


def _save_png(fig, path: Path) -> None:
    with _ui.atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format=(path.suffix.lstrip(".") or "png"))


# --------------------------------------------------------------------------------------- noc


def noc_cmd(
    rates: Optional[str] = typer.Option(
        None,
        "--rates",
        help="Offered loads to simulate, comma-separated, flits per node per cycle, 0 to 1 [default: 0.1,0.2,0.3].",
    ),
    mesh: Optional[str] = typer.Option(None, "--mesh", help="Mesh size COLSxROWS, at most 256x256 [default: 8x8]."),
    traffic: Optional[Traffic] = typer.Option(
        None,
        "--traffic",
        help="Traffic pattern [default: uniform]. uniform never sends to the source itself (with --compat "
        "booksim it may); transpose: (x,y) to (y,x); bit_complement: (x,y) to (cols-1-x, rows-1-y); hotspot: a "
        "share of the packets goes to the centre node; tornado: each coordinate moves k/2-1 places around; "
        "neighbor: each coordinate moves one place around; shuffle: node number rotated left one bit. A node "
        "whose destination is itself sends nothing (with --compat booksim it sends to itself).",
    ),
    routing: Optional[PacketRouting] = typer.Option(
        None,
        "--routing",
        help="Packet routing [default: dor]. dor: XY dimension order; adaptive: minimal adaptive with XY escape "
        "channels; west_first: the west-first turn model.",
    ),
    vcs: Optional[int] = typer.Option(None, "--vcs", help="Virtual channels per input port, 1 to 11 [default: 4]."),
    buffer: Optional[int] = typer.Option(
        None, "--buffer", help="Buffer depth per virtual channel, flits, 1 to 1024 [default: 8]."
    ),
    packet_flits: Optional[int] = typer.Option(
        None, "--packet-flits", help="Packet length, flits, 1 to 1024 [default: 1]."
    ),
    warmup: Optional[int] = typer.Option(
        None, "--warmup", help="Cycles simulated before measuring, 0 to 1e9 [default: 10000]."
    ),
    measure: Optional[int] = typer.Option(
        None, "--measure", help="Cycles in which packets are measured, 1 to 1e9 [default: 100000]."
    ),
    drain: Optional[int] = typer.Option(
        None,
        "--drain",
        help="Extra cycles for the measured packets to arrive, 0 to 1e9 [default: the --measure value].",
    ),
    hotspot_fraction: Optional[float] = typer.Option(
        None, "--hotspot-fraction", help="Share of packets sent to the hotspot node, 0 to 1 [default: 0.2]."
    ),
    seed: Optional[int] = typer.Option(None, "--seed", help="Random seed of the traffic [default: 1]."),
    compat: Optional[Compat] = typer.Option(
        None,
        "--compat",
        help="Conventions to follow [default: pktflow; booksim when --config is given]. booksim: destinations "
        "include the source, network interfaces move one flit per cycle, injection takes one more cycle, the "
        "VC allocator takes the first free VC in round-robin order, and warm-up and measurement follow BookSim's "
        "convergence rule (--warmup and --measure are not used). See docs/noc.md.",
    ),
    config: Optional[Path] = typer.Option(
        None,
        "--config",
        help="A BookSim-style configuration file (key = value; lines, // comments, BookSim's key names such as "
        "k, num_vcs, vc_buf_size, packet_size, injection_rate, routing_function, traffic, sample_period). "
        "Options given on the command line win.",
    ),
    ni_flits: Optional[int] = typer.Option(
        None,
        "--ni-flits",
        help="Flits per cycle a network interface injects and ejects, 1 to 4 [default: 4; 1 with --compat booksim].",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document on stdout instead of tables."),
    plot: Optional[Path] = typer.Option(
        None, "--plot", help="Also write a latency and throughput versus offered load plot (PNG) to this file."
    ),
) -> None:
    """Synthetic traffic on the cycle-level mesh: latency and accepted throughput versus offered load.

    A point is saturated when any measured packet was not delivered, accepted throughput is more
    than 5% below offered, the mean latency exceeds 3 times the pattern's zero-load latency, the
    requested rate exceeds the XY-routing capacity bound of the pattern, or the source queues grow
    by more than one packet per node over the measurement window. Source queues hold at most 1024
    packets; packets beyond that are not injected and count as not delivered. Latency is then a
    lower bound.
    """
    rl = _numbers(rates, "--rates") if rates is not None else None
    plot = _ui.output_path(plot, "--plot")
    kw = dict(
        rates=rl,
        mesh=mesh,
        traffic=traffic.value if traffic else None,
        routing=routing.value if routing else None,
        vcs=vcs,
        buffer=buffer,
        packet_flits=packet_flits,
        warmup=warmup,
        measure=measure,
        drain=drain,
        seed=seed,
        hotspot_fraction=hotspot_fraction,
        compat=compat.value if compat else None,
        config=str(config) if config is not None else None,
        ni_flits=ni_flits,
    )
    res = _run_with_progress("noc", api.sweep, **kw)
    if plot is not None and res["points"]:
        _plot_sweep(res, plot)
    if as_json:
        _ui.emit_json(res)
    else:
        _print_sweep(res, plot)
    if res.get("interrupted"):
        raise _ui.Interrupted()


def _print_sweep(res: dict[str, Any], plot: Optional[Path]) -> None:
    con = _ui.console
    t = Table(
        title=f"{res['mesh']} mesh, {res['traffic']} traffic, {res['routing']}, {res['virtual_channels']} VCs x "
        f"{res['buffer_depth_flits']} flits, {res['packet_flits']}-flit packets"
        + (", BookSim conventions" if res.get("compat") == "booksim" else "")
    )
    for c in (
        "requested (flits/node/cycle)",
        "offered (flits/node/cycle)",
        "accepted (flits/node/cycle)",
        "mean latency (cycles)",
        "not delivered (packets)",
        "saturated",
    ):
        t.add_column(c, justify="right")
    for p in res["points"]:
        if p["latency"] is None:
            lat = "no packet delivered"
        else:
            lat = ("≥ " if p["latency_is_lower_bound"] else "") + f"{p['latency']:.2f}"
        t.add_row(
            f"{p['requested_rate']:.4f}",
            f"{p['offered']:.4f}",
            f"{p['accepted']:.4f}",
            lat,
            f"{p['packets_not_delivered']:,}",
            ("yes: " + "; ".join(p["saturation_reasons"])) if p["saturated"] else "no",
        )
    con.print(t)
    th = res["theory"]
    senders, nodes = res["sending_nodes"], res["nodes"]
    if senders < nodes:
        con.print(
            f"{res['traffic']}: {nodes - senders} of {nodes} nodes send nothing, so the offered load is "
            f"{senders}/{nodes} of the requested rate."
        )
    line = f"zero-load latency ({res['traffic']}, theory): {_fmt(th['zero_load_latency'])} cycles"
    if th.get("requested_rate_bound") is not None:
        bound = th["requested_rate_bound"]
        line += f"; XY-routing capacity bound ({res['traffic']}): {bound:.4f} flits/node/cycle requested"
    con.print(line)
    if any(p["latency_is_lower_bound"] for p in res["points"]):
        con.print("≥: some measured packets were not delivered; the mean latency counts only the delivered ones.")
    sat = res["saturation_offered"]
    con.print(
        "last unsaturated offered load before the first saturated point: "
        + ("none (the first point is saturated)" if sat is None else f"{sat:.4f} flits/node/cycle")
    )
    for p in res["points"]:
        cv = p.get("convergence")
        if cv:
            state = "unstable" if cv["unstable"] else ("converged" if cv["converged"] else "not converged")
            con.print(
                f"rate {p['requested_rate']:.4f}: {state} after {cv['sample_periods']} sample periods "
                f"(warm-up {cv['warmup_cycles']:,} cycles, measured {cv['measured_cycles']:,}, drain {cv['drain_cycles']:,})"
            )
    if res.get("interrupted"):
        con.print(f"interrupted after {len(res['points'])} of the requested points")
    if plot is not None and res["points"]:
        con.print(f"plot written to {plot}")


def _plot_sweep(res, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = res["points"]
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.5))
    lat = [(p["offered"], p["latency"]) for p in pts if p["latency"] is not None]
    ax[0].plot([x for x, _ in lat], [y for _, y in lat], "o-")
    ax[0].set_xlabel("offered load (flits/node/cycle)")
    ax[0].set_ylabel("mean latency (cycles)")
    if res["theory"]["zero_load_latency"] is not None:
        ax[0].axhline(res["theory"]["zero_load_latency"], ls=":", c="gray", label=f"zero-load ({res['traffic']})")
    ax[0].legend()
    ax[1].plot([p["offered"] for p in pts], [p["accepted"] for p in pts], "o-")
    top = max(p["offered"] for p in pts)
    ax[1].plot([0, top], [0, top], ":", c="gray")
    ax[1].set_xlabel("offered load (flits/node/cycle)")
    ax[1].set_ylabel("accepted (flits/node/cycle)")
    fig.suptitle(f"{res['mesh']} {res['traffic']} {res['routing']}")
    fig.tight_layout()
    _save_png(fig, path)
    plt.close(fig)


# ------------------------------------------------------------------------------------ stream


def stream_cmd(
    graph: str = typer.Argument(
        ...,
        metavar="GRAPH",
        help="Built-in stream benchmark name, a .json/.toml stream graph file, inline JSON, or a Click "
        "application: a built-in one (router, nat, l3switch, mpls, firewall, ...) or a Click file.",
    ),
    mesh: Optional[str] = typer.Option(None, "--mesh", help="Mesh size COLSxROWS, at most 256x256 [default: 4x4]."),
    routing: Optional[StreamRouting] = typer.Option(
        None,
        "--routing",
        help="How streams cross the mesh [default: tentacle]. "
        + "; ".join(f"{n}: {_CATALOG['routing_help'][n]}" for n in _CATALOG["routings"])
        + ".",
    ),
    comm: Optional[Comm] = typer.Option(
        None, "--comm", help="push (producer sends) or pull (consumer requests; dor/adaptive only) [default: push]."
    ),
    scales: Optional[str] = typer.Option(
        None,
        "--scales",
        help="Computation scaling factors, cycles per unit of work, comma-separated "
        "[default: an automatic sweep down to 0].",
    ),
    warmup: Optional[int] = typer.Option(
        None, "--warmup", help="Cycles simulated before measuring, 0 to 1e9 [default: 10000]."
    ),
    measure: Optional[int] = typer.Option(
        None, "--measure", help="Cycles in which throughput is measured, 1 to 1e9 [default: 100000]."
    ),
    seed: Optional[int] = typer.Option(None, "--seed", help="Random seed of the layout search [default: 1]."),
    retries: Optional[int] = typer.Option(
        None,
        "--retries",
        help="When a disjoint-path router fails: tries with other stream orders, then with new layouts [default: 0].",
    ),
    anneal_moves: Optional[int] = typer.Option(
        None, "--anneal-moves", help="Moves of the simulated-annealing layout search [default: 20000]."
    ),
    buffer_iterations: Optional[int] = typer.Option(
        None, "--buffer-iterations", help="Stream buffer size, steady-state iterations, at least 1 [default: 4]."
    ),
    no_sim: bool = typer.Option(False, "--no-sim", help="Only partition, lay out and route; do not simulate."),
    rate: Optional[float] = typer.Option(
        None,
        "--rate",
        help="Click applications: packets per second entering the application, over all its interfaces "
        "(required for an application; at most one packet per clock cycle).",
    ),
    packets: Optional[int] = typer.Option(
        None,
        "--packets",
        help="Click applications: synthetic packets of the functional run that measures each element's work "
        "and each connection's traffic [default: 10000, or the configuration's own packet sources].",
    ),
    edge_bytes: Optional[EdgeBytes] = typer.Option(
        None,
        "--edge-bytes",
        help="Click applications: what crosses the mesh between two elements: the whole packet, or a "
        "descriptor of --descriptor-bytes while the packet stays in memory [default: packet].",
    ),
    descriptor_bytes: Optional[int] = typer.Option(
        None, "--descriptor-bytes", help="Click applications: descriptor size, bytes, 1 to 65536 [default: 64]."
    ),
    clock_hz: Optional[float] = typer.Option(
        None,
        "--clock-hz",
        help="Click applications: clock of the cores and the network, Hz, 1e6 to 1e12 [default: 2e9].",
    ),
    cycles_per_instruction: Optional[float] = typer.Option(
        None,
        "--cycles-per-instruction",
        help="Click applications: cycles a core takes per instruction, 0.001 to 1000 [default: 1].",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document on stdout instead of tables."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Also write the link-load heat map (PNG) to this file."),
) -> None:
    """Map a stream graph or a Click application onto the mesh, route its streams and report
    throughput and link loads.

    Feedback loops whose initial items cover one steady-state iteration are pipelined across
    tiles; shorter loops run as one actor. Throughput is in steady-state iterations per 1000 cycles.
    A Click application is profiled functionally first: each element becomes an actor whose work is
    its instructions per packet, each connection packets cross a stream of their bytes; one
    iteration is one packet. It reports where each element goes, the load of every link at --rate
    (which links saturate), whether the mapping keeps up with --rate, and its sustainable rate.
    """
    sl = _numbers(scales, "--scales") if scales else None
    plot = _ui.output_path(plot, "--plot")
    app_opts = dict(
        rate=rate,
        packets=packets,
        edge_bytes=edge_bytes.value if edge_bytes else None,
        descriptor_bytes=descriptor_bytes,
        clock_hz=clock_hz,
        cycles_per_instruction=cycles_per_instruction,
    )
    if any(v is not None for v in app_opts.values()):
        # a Click application: the request goes to the core as is (the core checks every field)
        req = api._request(
            graph=graph,
            mesh=mesh,
            routing=routing.value if routing else None,
            comm=comm.value if comm else None,
            scales=sl,
            warmup=warmup,
            measure=measure,
            seed=seed,
            retries=retries,
            anneal_moves=anneal_moves,
            buffer_iterations=buffer_iterations,
            no_sim=True if no_sim else None,
            **app_opts,
        )
        res = _run_with_progress("stream", _stream_core, request=req)
        _stream_output(res, plot, as_json)
        return
    kw = dict(
        mesh=mesh,
        routing=routing.value if routing else None,
        comm=comm.value if comm else None,
        scales=sl,
        warmup=warmup,
        measure=measure,
        seed=seed,
        retries=retries,
        anneal_moves=anneal_moves,
        buffer_iterations=buffer_iterations,
        simulate=not no_sim,
    )
    res = _run_with_progress("stream", api.run_stream, graph_spec=graph, **kw)
    _stream_output(res, plot, as_json)


def _stream_core(request: str, progress) -> dict[str, Any]:
    from pktflow import _core

    return json.loads(_core.stream_run(request, progress))


def _stream_output(res: dict[str, Any], plot: Optional[Path], as_json: bool) -> None:
    app = res.get("kind") == "application"
    if plot is not None:
        _plot_heatmap(res, plot)
    if as_json:
        _ui.emit_json(res)
    elif app:
        _print_app(res, plot)
    else:
        _print_stream(res, plot)
    if res.get("interrupted"):
        raise _ui.Interrupted()


def _routing_text(res: dict[str, Any]) -> str:
    ro = res["route"]
    used, asked = res["routing_used"], res["routing_requested"]
    if ro["fallback"]:
        return f"{used} (fell back from {asked})"
    return used


def _print_stream(res: dict[str, Any], plot: Optional[Path]) -> None:
    con = _ui.console
    ro = res["route"]
    con.print(
        f"[bold]{res['graph']}[/] on {res['mesh']}: {len(res['actors'])} actors, {len(res['routes'])} streams, "
        f"balance (max/mean work) {res['balance']:.2f}, layout cost {res['layout']['cost']:.1f}"
    )
    if ro["circuits"]:
        status = "disjoint circuits"
    elif ro["fallback"]:
        status = f"no disjoint paths found: FELL BACK to {res['routing_used']} packet routing"
    else:
        status = "packet switching" if res["routing_used"] != "ideal" else "ideal network"
    con.print(f"routing {res['routing_requested']}: {status}. {ro['detail']}")
    if res["points"]:
        pts = Table(title=f"throughput with {_routing_text(res)} (steady-state iterations per 1000 cycles)")
        for c in ("scale (cycles/work)", "throughput", "mean packet latency (cycles)", "flits delivered"):
            pts.add_column(c, justify="right")
        for p in res["points"]:
            lat = p["mean_packet_latency"]
            pts.add_row(
                f"{p['scale']:.4g}",
                f"{p['throughput']:.3f}",
                "no packet delivered" if lat is None else f"{lat:.1f}",
                str(p["flits_delivered"]),
            )
        con.print(pts)
        con.print(f"saturation throughput: [bold]{_fmt(res['saturation_throughput'], '.3f')}[/] iterations/kcycle")
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
    con.print(rt)
    if res["heatmap"] and res["heatmap"][0]:
        hm = Table(
            title=f"link-load heat map with {_routing_text(res)} (max streams on a link leaving each router; "
            f"max {res['max_link_load']:.2f})"
        )
        for x in range(len(res["heatmap"][0])):
            hm.add_column(f"x={x}", justify="right")
        for row in res["heatmap"]:
            hm.add_row(*[(f"[red]{v:.1f}[/]" if v > 1.0 + 1e-9 else f"{v:.1f}") for v in row])
        con.print(hm)
    if res["setup"]:
        s = res["setup"]
        con.print(
            f"circuit set-up: min {s['min']}, max {s['max']}, mean {s['mean']:.2f}, total {s['total']} cycles"
        )
    if res.get("interrupted"):
        con.print(f"interrupted after {len(res['points'])} simulated scales")
    if plot is not None:
        con.print(f"heat map written to {plot}")


def _print_app(res: dict[str, Any], plot: Optional[Path]) -> None:
    """Tables of a Click application on the mesh: placement, cores, links at the rate, verdict."""
    con = _ui.console
    ro = res["route"]
    rate = res["rate_pps"]
    prof = res["profile"]
    con.print(
        f"[bold]{res['app']}[/] on {res['mesh']} at {rate:,.0f} packets/s: {prof['elements']} elements on "
        f"{len(res['actors'])} cores, {len(res['routes'])} streams ({prof['connections_crossed']} connections "
        f"crossed, {prof['back_edges']} closing a cycle); profile of {prof['source']}, "
        f"{prof['instructions_per_packet']:.1f} instructions per packet; clock {res['clock_hz']:.4g} Hz, "
        f"{res['cycles_per_instruction']:g} cycles per instruction; edges carry "
        + (
            "whole packets"
            if res["edge_bytes"] == "packet"
            else f"{res['descriptor_bytes']}-byte descriptors"
        )
    )
    if ro["circuits"]:
        status = "disjoint circuits"
    elif ro["fallback"]:
        status = f"no disjoint paths found: FELL BACK to {res['routing_used']} packet routing"
    else:
        status = "packet switching" if res["routing_used"] != "ideal" else "ideal network"
    con.print(f"routing {res['routing_requested']}: {status}. {ro['detail']}")
    et = Table(title="where the elements go")
    for c in ("element", "class", "core (x,y)", "instructions/packet", "visits/packet"):
        et.add_column(c, justify="right")
    for e in res["elements"]:
        places = ", ".join(
            f"({p['x']},{p['y']})" + ("" if p["share"] == 1 else f" {p['share']:.0%}") for p in e["placements"]
        )
        et.add_row(
            e["name"],
            e["class"],
            places,
            f"{e['instructions_per_packet']:.2f}",
            f"{e['visits_per_packet']:.3f}",
        )
    con.print(et)
    at = Table(title=f"cores at {rate:,.0f} packets/s")
    for c in ("core (x,y)", "elements", "instructions/packet", "utilization"):
        at.add_column(c, justify="right")
    for a in sorted(res["actors"], key=lambda a: -a["utilization"]):
        u = a["utilization"]
        at.add_row(
            f"({a['x']},{a['y']})",
            ", ".join(a["elements"]),
            f"{a['work']:.2f}",
            f"[red]{u:.3f}[/]" if a["saturated"] else f"{u:.3f}",
        )
    con.print(at)
    lt = Table(title=f"links at {rate:,.0f} packets/s with {_routing_text(res)} (1 flit per cycle each; loaded links)")
    for c in ("from", "to", "dir", "flits/cycle", "Gb/s", "utilization"):
        lt.add_column(c, justify="right")
    for ln in sorted(res["link_rate_loads"], key=lambda x: -x["flits_per_cycle"]):
        if ln["flits_per_cycle"] <= 0:
            continue
        u = ln["utilization"]
        lt.add_row(
            f"({ln['from'][0]},{ln['from'][1]})",
            f"({ln['to'][0]},{ln['to'][1]})",
            ln["dir"],
            f"{ln['flits_per_cycle']:.4f}",
            f"{ln['bytes_per_second'] * 8 / 1e9:.3f}",
            f"[red]{u:.3f} SATURATED[/]" if ln["saturated"] else f"{u:.3f}",
        )
    con.print(lt)
    sat = res["saturated_links"]
    con.print(
        "saturated links: "
        + (
            ", ".join(f"({x['from'][0]},{x['from'][1]})->({x['to'][0]},{x['to'][1]})" for x in sat)
            if sat
            else "none"
        )
        + f"; busiest link {res['max_link_utilization']:.3f}, busiest core {res['max_core_utilization']:.3f}"
    )
    bound = res["analytic_max_rate_pps"]
    if bound is not None:
        con.print(f"analytic maximum rate (busiest core or link at 1): {bound:,.0f} packets/s")
    ar = res["at_rate"]
    if ar:
        verdict = "keeps up" if ar["keeps_up"] else "does NOT keep up"
        con.print(
            f"simulated at {rate:,.0f} packets/s: delivers {ar['delivered_pps']:,.0f} packets/s, {verdict} "
            f"({ar['packets_completed_in_window']} of {ar['packets_expected_in_window']:.1f} packets in the window)"
        )
    if res["sustainable_rate_pps"] is not None:
        sus = res["sustainable_rate_pps"]
        con.print(f"sustainable rate (simulated, inputs unpaced): [bold]{sus:,.0f}[/] packets/s")
    for n in res.get("notes", []):
        con.print(n)
    if res.get("interrupted"):
        con.print(f"interrupted after {len(res['points'])} of the simulations")
    if plot is not None:
        con.print(f"heat map written to {plot}")


def _plot_heatmap(res, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    if res.get("kind") == "application":
        im = ax[0].imshow(res["rate_heatmap"], cmap="Reds", vmin=0)
        ax[0].set_title(f"busiest link leaving each router at {res['rate_pps']:.3g} packets/s (flits/cycle)")
    else:
        im = ax[0].imshow(res["heatmap"], cmap="Reds", vmin=0)
        ax[0].set_title("max streams on a link leaving each router")
    ax[0].set_xlabel("x")
    ax[0].set_ylabel("y")
    fig.colorbar(im, ax=ax[0])
    loads = [ln["streams"] for ln in res["link_loads"]]
    ax[1].bar(range(len(loads)), loads)
    ax[1].set_xlabel("link")
    ax[1].set_ylabel("streams")
    ax[1].set_title("streams per link")
    fig.suptitle(f"{res['graph']} {res['mesh']} {_routing_text(res)}")
    fig.tight_layout()
    _save_png(fig, path)
    plt.close(fig)


def register(app: typer.Typer) -> None:
    """Add the ``noc`` and ``stream`` commands to the main ``pktflow`` app."""
    app.command("noc")(noc_cmd)
    app.command("stream")(stream_cmd)


__all__ = ["register", "noc_cmd", "stream_cmd", "Traffic", "PacketRouting", "StreamRouting", "Comm", "EdgeBytes"]
