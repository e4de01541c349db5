"""``pktflow run``: the application on the host's cores (crates/runtime, docs/runtime.md). Wired
into the main CLI by ``pktflow.cli`` through ``register(app)``. Options left unset are not sent:
the defaults live in Rust and the JSON result records them under ``"settings"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from pktflow import PktflowError, _ui, runtime
from pktflow._request import choice
from pktflow._ui import console, emit_json
from pktflow.cli_app import INPUT_PORT_HELP, _print_script_output, parse_count, parse_input_port
from pktflow.cli_np import interruptible
from pktflow.runtime import Io, Model


def _v(x):
    return None if x is None else x.value


@interruptible
def run_cmd(
    app_name: str = typer.Argument(..., metavar="APP", help="Built-in app (router, nat, ...) or Click file."),
    trace: Optional[Path] = typer.Option(None, "--trace", help="pcap or pcapng file to run."),
    synthetic: Optional[str] = typer.Option(
        None, "--synthetic", metavar="N", help="Generate N packets shaped for APP instead of reading a trace."
    ),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed of the synthetic trace (default 1)."),
    input_port: Optional[str] = typer.Option(None, "--input-port", metavar="RULE|N", help=INPUT_PORT_HELP),
    out_dir: Optional[Path] = typer.Option(
        None,
        "--out-dir",
        help="Folder for every output: the files ToDump elements write and one pcap per ToDevice device "
        "(DEVICE.pcap). Without it, ToDump files go to the current folder and devices are not written.",
    ),
    threads: Optional[int] = typer.Option(
        None, "--threads", help="Packet-processing threads (1 to 256). Default: 1."
    ),
    model: Optional[Model] = typer.Option(
        None,
        "--model",
        help="rtc: a copy of the whole graph per thread, packets dispatched by flow (default). "
        "pipeline: the graph cut into --threads groups of elements joined by rings, balanced by a quick "
        "profile. hybrid: the placement of --mapping FILE.",
    ),
    mapping: Optional[Path] = typer.Option(
        None,
        "--mapping",
        metavar="FILE",
        help="With --model hybrid: the JSON that pktflow explore, maxrate or map --json wrote, or a "
        'hand-written {"threads": [["elem", ...], ...]} (docs/runtime.md). Processing element p runs on '
        "thread p mod --threads; an element on several is replicated.",
    ),
    profile_packets: Optional[int] = typer.Option(
        None,
        "--profile-packets",
        metavar="N",
        help="With --model pipeline: packets of the quick profile that balances the cut. Default: 2000.",
    ),
    warmup: Optional[int] = typer.Option(
        None,
        "--warmup",
        metavar="N",
        help="With --model pipeline or hybrid: hand the first N trace packets over one at a time, each "
        "finished with everything it causes (ARP round trips, far-end replies) before the next, so that "
        "caches such as ARP tables fill as on one thread. Default: 0.",
    ),
    io: Optional[Io] = typer.Option(
        None,
        "--io",
        help="Reading the trace: an I/O thread on a core of its own (dedicated, default) or on whichever core "
        "is idle (shared), or every rtc worker reading it itself and keeping its own flows (each).",
    ),
    no_pin: bool = typer.Option(False, "--no-pin", help="Do not pin threads to cores."),
    ring_slots: Optional[int] = typer.Option(
        None, "--ring-slots", help="Batches each ring between threads holds (2 to 65536). Default: 256."
    ),
    batch: Optional[int] = typer.Option(
        None, "--batch", help="Packets handed to a thread at once (1 to 4096). Default: 32."
    ),
    predict: Optional[str] = typer.Option(
        None,
        "--predict",
        metavar="ARCH",
        help="Also run the NP timing simulator (pktflow maxrate's engine) on architecture ARCH (a preset, "
        "e.g. host, or a TOML file) with the run's mapping (N threads = global replication over N PEs) and "
        "report predicted and measured packets/s and the relative error.",
    ),
    predict_costs: Optional[str] = typer.Option(
        None,
        "--predict-costs",
        metavar="measured|estimates",
        help="With --predict: the element costs the simulator charges. measured (the default for "
        "--predict host): each element's mean time per visit on this host and the driver's time per "
        "packet, measured on one thread by a timed build of the elements. estimates (the default for "
        "other architectures): the elements' own instruction and memory-access estimates.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of a table."),
) -> None:
    """Run APP for real on this machine's cores, without recording costs: packets per second,
    packets conserved, per-thread utilization, and every output of the graph in --out-dir."""
    if trace is not None and synthetic is not None:
        raise PktflowError("give either --trace or --synthetic, not both")
    if trace is not None and seed is not None:
        raise PktflowError("--seed applies to synthetic traces; a --trace file is read as it is")
    n = parse_count(synthetic, "--synthetic")
    rule = parse_input_port(input_port)
    if rule is not None and trace is None:
        raise PktflowError("--input-port applies to a --trace file only")
    out_dir = _ui.output_dir(out_dir, "--out-dir")
    costs = choice(predict_costs, runtime.Costs, "--predict-costs")
    if costs is not None and predict is None:
        raise PktflowError("--predict-costs applies to --predict ARCH")
    if predict is not None:
        _check_predict_arch(predict)
        _ui.note_unmeasured_host(predict)
    with _ui.progress("run", "packets", None) as bar:
        r = runtime.run(
            app_name,
            trace=trace,
            synthetic=n,
            seed=seed,
            input_port=rule,
            out_dir=out_dir,
            threads=threads,
            model=_v(model),
            io=_v(io),
            pin=False if no_pin else None,
            ring_slots=ring_slots,
            batch=batch,
            mapping=mapping,
            profile_packets=profile_packets,
            warmup=warmup,
            progress=lambda done: bar.update(done),
        )
    if predict is not None:
        r["prediction"] = _predict(r, predict, trace, seed, costs)
    _note_oversubscription(r["settings"])
    if as_json:
        emit_json(r)
        return
    tm = r["timing"]
    b = r["balance"]
    console.print(
        f"{r['app']}: {r['packets']['from_source']} packets from {r['source']} in {tm['seconds']:.3f} s: "
        f"{tm['packets_per_second']:,.0f} packets/s on {r['settings']['threads']} thread(s)"
    )
    console.print(
        f"balance: {b['injected']} in + {b['created']} created = {b['output']} out + {b['dropped']} dropped "
        f"+ {b['held']} held ({'conserved' if b['conserved'] else 'NOT conserved'})"
    )
    _print_script_output(r)
    stages = (r.get("placement") or {}).get("stages")
    t = Table(title=f"threads ({r['settings']['model']})")
    cols = ["thread", "core", "packets", "utilization", "waits for input", "ring occupancy"]
    if stages:
        cols.insert(3, "elements")
    for col in cols:
        t.add_column(col, justify="right")
    for th in tm["threads"]:
        # Element groups: what the thread took from its rings; copies of the graph: its share of the trace.
        taken = th.get("packets_taken_from_rings")
        if taken is None:
            packets = th["packets_from_source"]
        elif th.get("tasks") is not None:
            # A configuration's own tasks: what its sources made plus what the rings brought.
            packets = th["packets_from_source"] + taken
        else:
            packets = taken
        row = [
            str(th["thread"]),
            "-" if th["core"] is None else str(th["core"]),
            str(packets),
            f"{100 * th['utilization']:.0f}%",
            str(th["waits_for_input"]),
            f"{th['mean_ring_occupancy_batches']:.2f}",
        ]
        if stages:
            row.insert(3, str(len(stages[th["thread"]]["elements"])))
        t.add_row(*row)
    console.print(t)
    if stages:
        rep = (r["placement"].get("replicated") or [])
        if rep:
            console.print(f"replicated: {', '.join(rep)}")
        if b.get("handed_between_threads"):
            console.print(f"{b['handed_between_threads']} packets handed between threads")
    for f in r["outputs"]:
        console.print(f"wrote {f}")
    if "prediction" in r:
        _print_prediction(r["prediction"])


def _note_oversubscription(settings: dict) -> None:
    """Say on stderr when the run had more busy threads than the cores it may use: the workers,
    plus the I/O thread that feeds them (``io = dedicated``), then take turns on the cores, and
    the rate measured is that of the sharing, not of the model (`pktflow run --threads 2` on 2
    cores said nothing)."""
    import os

    threads = int(settings.get("threads") or 1)
    if threads < 2:
        return
    busy = threads + (1 if settings.get("io") == "dedicated" else 0)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    if busy > cores:
        _ui.err.print(
            f"note: {threads} worker threads"
            + (" and the I/O thread" if busy > threads else "")
            + f" share {cores} core{'s' if cores != 1 else ''}: they take turns, so the rate measures "
            "that sharing as well as the model (docs/runtime.md)"
        )


def _print_script_output(r: dict) -> None:
    """What the configuration's Script/DriverManager elements printed (``print``, ``read``), one
    line each, prefixed by the element's name, as ``pktflow profile`` prints them. On several
    threads the scripts run once, against every thread's elements (docs/runtime.md)."""
    for name, st in (r.get("element_stats") or {}).items():
        if isinstance(st, dict) and isinstance(st.get("output"), list):
            for line in st["output"]:
                console.print(f"{name}: {line}", markup=False, highlight=False)


def _check_predict_arch(arch: str) -> None:
    """Refuse an architecture the simulator cannot load before the run (one line, exit 2)."""
    from pktflow import npsim

    a = npsim.arch(arch)
    if a.get("kind") != "np":
        raise PktflowError(
            f"--predict {arch}: a {a.get('kind')} architecture; the NP simulator needs an [np] preset (e.g. host)"
        )


def _predict(r: dict, arch: str, trace: Optional[Path], seed: Optional[int], costs: Optional[str]) -> dict:
    with _ui.progress("predict", "probes", None) as bar:
        return runtime.predict(
            r, arch, trace=trace, seed=seed, costs=costs, progress=lambda done, total, _c: bar.update(done)
        )


def _print_prediction(p: dict) -> None:
    c = p.get("costs") or {}
    if c.get("kind") == "measured":
        m = c["measurement"]
        t = Table(title=f"element costs measured on this host ({m['packets_injected']} packets, one thread)")
        for col in ("element", "class", "visits", "ns per visit", "instructions per visit"):
            t.add_column(col, justify="right")
        per = c["table"]["instructions_per_visit"]
        for e in m["elements"]:
            if e["visits"]:
                t.add_row(e["name"], e["class"], str(e["visits"]), f"{e['ns_per_visit']:.1f}", f"{per[e['name']]:.0f}")
        t.add_row(
            "(driver)",
            "per packet",
            str(m["packets_injected"]),
            f"{m['driver_ns_per_packet']:.1f}",
            f"{c['table']['per_packet_instructions']:.0f}",
        )
        console.print(t)
    t = Table(title=f"prediction on {p['arch']} ({c.get('kind', 'estimates')} costs): {p['mapping']}")
    for col in ("measured packets/s", "predicted packets/s", "error"):
        t.add_column(col, justify="right")
    err = p["relative_error"]
    t.add_row(
        f"{p['measured_packets_per_second']:,.0f}",
        f"{p['predicted_packets_per_second']:,.0f}",
        "-" if err is None else f"{100 * err:+.1f}%",
    )
    console.print(t)
    for n in p["notes"]:
        console.print(f"note: {n}")


def register(app: typer.Typer) -> None:
    """Add the ``run`` command to the main ``pktflow`` app."""
    app.command("run")(run_cmd)
