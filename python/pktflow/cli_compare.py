"""``pktflow compare`` (every execution model an architecture supports, side by side;
crates/rtc/src/compare.rs). Wired into the main CLI by ``pktflow.cli`` through
``register(app)``. See docs/rtc.md, "Comparing execution models". Options left unset are not
sent: the defaults live in Rust, and the JSON result records them under ``"settings"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.markup import escape
from rich.table import Table

from pktflow import PktflowError, _ui, compare
from pktflow._ui import console, emit_json
from pktflow.cli_np import interruptible
from pktflow.compare import Model
from pktflow.rtc import Cm, Scheduler


def _v(x):
    return None if x is None else x.value


@interruptible
def compare_cmd(
    app_name: str = typer.Argument(..., metavar="APP", help="Built-in app (router, nat, mpls, ...) or Click file."),
    arch: Optional[str] = typer.Option(
        None,
        "--arch",
        help="Architecture preset or TOML file: netthreads (default; pipeline, run to completion with locks "
        "and with transactions) or a network processor such as npire, ixp2400 (pipeline, run to completion, "
        "hybrid TDPM plan).",
    ),
    arch_set: Optional[List[str]] = typer.Option(
        None, "--set", metavar="KEY=VALUE", help="Override one architecture parameter; repeatable."
    ),
    models: Optional[List[Model]] = typer.Option(
        None, "--model", help="Compare only this model (repeatable). Default: every model the architecture supports."
    ),
    packets: Optional[int] = typer.Option(
        None, "--packets", help="Synthetic packets traced for every model (1 to 1,000,000). Default: 2,000."
    ),
    traffic_seed: Optional[int] = typer.Option(None, "--traffic-seed", help="Seed of the synthetic traffic. Default: 1."),
    pes: Optional[int] = typer.Option(None, "--pes", help="Network processor: PEs in all. Default: the preset's."),
    cores: Optional[int] = typer.Option(None, "--cores", help="Soft multiprocessor: cores. Default: the preset's (2)."),
    threads: Optional[int] = typer.Option(
        None, "--threads", help="Soft multiprocessor: thread contexts per core. Default: the preset's (4)."
    ),
    scheduler: Optional[Scheduler] = typer.Option(
        None, "--scheduler", help="Soft multiprocessor: thread scheduler of every model. Default: round-robin."
    ),
    cm: Optional[Cm] = typer.Option(
        None,
        "--cm",
        help="Transactions with this contention manager only. Default: each of cm1, cm2, cm1/2, cm4, keeping the fastest.",
    ),
    window_seconds: Optional[float] = typer.Option(
        None,
        "--window-seconds",
        help="Soft multiprocessor: simulated seconds per run (no drop allowed in it). Default: 0.02 "
        "(the thesis's 5 s is allowed but takes minutes per model).",
    ),
    precision: Optional[float] = typer.Option(
        None, "--precision", help="Stop each search when the rate bracket is narrower than this fraction. Default: 0.02."
    ),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed of the soft multiprocessor's hazard model. Default: 1."),
    plot: Optional[Path] = typer.Option(
        None, "--plot", help="Also write a bar chart of the models' rates and binding resources (PNG) to this file."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document (with every setting) instead of a table."),
) -> None:
    """Every execution model the architecture supports (pipeline, run to completion with locks or
    transactions, hybrid) on APP, side by side: maximum rate, binding resource, recommendation."""
    plot = _ui.output_path(plot, "--plot")
    _ui.note_unmeasured_host(arch)
    with _ui.progress("compare", "searches") as prog:

        def progress(done: int, total: int, label: str) -> None:
            prog.update(done, total, label)

        r = _ui.keep_partial(
            compare.run,
            app_name,
            arch=arch,
            arch_set=arch_set,
            models=[_v(m) for m in models] if models else None,
            packets=packets,
            traffic_seed=traffic_seed,
            pes=pes,
            cores=cores,
            threads=threads,
            scheduler=_v(scheduler),
            cm=_v(cm),
            window_seconds=window_seconds,
            precision=precision,
            seed=seed,
            progress=progress,
        )
    if plot is not None and any(x.get("packets_per_second") for x in r["rows"]):
        compare.plot(r, str(plot))
    if as_json:
        emit_json(r)
        if r.get("interrupted"):
            raise _ui.Interrupted()
        return
    t = Table(title=f"{r['app']} on {r['arch']}")
    for col, j in (("model", "left"), ("engine", "left"), ("kpps", "right"), ("Gb/s", "right"), ("binding resource", "left")):
        t.add_column(col, justify=j)
    for x in r["rows"]:
        if x.get("packets_per_second") is None:
            t.add_row(escape(x["label"]), x["engine"], "-", "-", escape(f"not measured: {x.get('error') or ''}"))
            continue
        b = x.get("binding")
        t.add_row(
            escape(x["label"]),
            x["engine"],
            _kpps(x["packets_per_second"]),
            f"{x['gbps']:.3g}",
            escape(f"{b['what']} ({100 * b['share']:.0f}%)" if b else "-"),
        )
    console.print(t)
    console.print(f"recommendation: {escape(r['recommendation'])}")
    if plot is not None:
        console.print(f"plot written to {plot}")
    if r.get("interrupted"):
        raise _ui.Interrupted()


def _kpps(pps: float) -> str:
    """Thousands of packets per second with at least three significant digits: 141 packets/s
    printed as 0.1 (and 0.0 below 50) before."""
    k = pps / 1e3
    return f"{k:,.1f}" if k >= 100 else f"{k:.3g}"


def register(app: typer.Typer) -> None:
    """Add the ``compare`` command to the main ``pktflow`` app."""
    app.command("compare")(compare_cmd)
