"""``pktflow protoproc model|sim|table2``: protocol-processing policies (Single, Fixed,
Floating), the analytic model and the simulation (crates/protoproc, docs/protoproc.md). Wired
into the main CLI by ``pktflow.cli``. Options left unset are not sent: the defaults live in Rust,
and every JSON result records the settings it resolved under ``"settings"``.
"""

from __future__ import annotations

import enum
import re
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from pktflow import PktflowError, _ui, protoproc
from pktflow._ui import console, emit_json
from pktflow.cli_np import interruptible
from pktflow.protoproc import CostSet, Notify, Policy, Spread


class SimApp(str, enum.Enum):
    """Workloads of ``pktflow protoproc sim``."""

    em3d = "em3d"
    gauss = "gauss"
    tomcatv = "tomcatv"
    synthetic = "synthetic"


protoproc_app = typer.Typer(
    help="Protocol-processing policies: when to dedicate a processor of each node to protocol "
    "processing (Single, Fixed, Floating); the analytic model and the simulation.",
    no_args_is_help=True,
)

# Request keys and the options that set them (so an error names the option the user typed).
_OPTIONS = {
    "l_remote_us": "--l-remote",
    "o_pp_us": "--o-pp",
    "o_reply_us": "--o-reply",
    "c_us": "--c",
    "c_min_us": "--c-min",
    "c_max_us": "--c-max",
    "points": "--points",
    "ratios": "--ratios",
    "requests": "--requests",
    "tcs_us": "--tcs",
    "o_request_us": "--o-request",
    "nodes": "--nodes",
    "cpus": "--cpus",
    "threads": "--threads",
    "seed": "--seed",
    "bus_share": "--bus-share",
    "interrupt_us": "--interrupt",
    "role_switch_us": "--role-switch",
    "poll_interval_us": "--poll-interval",
    "network_us": "--network",
    "iterations": "--iterations",
    "n": "--matrix",
    "misses": "--misses",
    "notify": "--notify",
}


def _optname(msg: str) -> str:
    """``nodes must be ...`` -> ``--nodes must be ...``; ``bad sim request: nodes: ...`` ->
    ``--nodes: ...``."""
    m = re.match(r"^(?:bad \w+ request: )?([a-z_]+)(:| must)", msg)
    if m and m.group(1) in _OPTIONS:
        msg = _OPTIONS[m.group(1)] + msg[m.end(1) :]
    # Other request keys the message names (``o_reply_us``, ``poll_interval_us``...).
    return re.sub(r"\b([a-z]+(?:_[a-z]+)+)\b", lambda k: _OPTIONS.get(k.group(1), k.group(1)), msg)


def _call(fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except PktflowError as e:
        raise PktflowError(_optname(str(e))) from None


def _v(x):
    return None if x is None else x.value


def _ratios(text: Optional[str]) -> Optional[list[float]]:
    if text is None:
        return None
    out = []
    for x in text.split(","):
        if not x.strip():
            continue
        try:
            out.append(float(x))
        except ValueError:
            raise PktflowError(f"--ratios must be comma-separated numbers, got {x.strip()!r}") from None
    if not out:
        raise PktflowError("--ratios needs at least one value")
    return out


# ------------------------------------------------------------------------------------- model


@protoproc_app.command("model")
@interruptible
def model_cmd(
    l_remote: Optional[float] = typer.Option(
        None,
        "--l-remote",
        help="Round trip of a remote request with a dedicated protocol processor (the model's Lremote), "
        "microseconds. Default: 113 (measured under Fixed, Table 2 of the protocol-processing paper).",
    ),
    o_pp: Optional[float] = typer.Option(
        None,
        "--o-pp",
        help="Overhead a dedicated protocol processor saves (Opp: the round trip without one is Lremote + Opp), "
        "microseconds. Default: 55 (168 - 113).",
    ),
    o_reply: Optional[float] = typer.Option(
        None, "--o-reply", help="Protocol overhead on the home node (Oreply), microseconds. Default: 27."
    ),
    c: Optional[float] = typer.Option(
        None, "--c", help="Also report this mean computation between requests (C), microseconds, on its own."
    ),
    c_min: Optional[float] = typer.Option(
        None, "--c-min", help="Smallest C of the curves, microseconds. Default: Lremote / 16."
    ),
    c_max: Optional[float] = typer.Option(
        None, "--c-max", help="Largest C of the curves, microseconds. Default: 16 x Lremote."
    ),
    points: Optional[int] = typer.Option(
        None, "--points", help="Points of the curves (geometric in C, 2 to 100,001). Default: 41."
    ),
    ratios: Optional[str] = typer.Option(
        None,
        "--ratios",
        help="Overhead ratios (2 Opp + Oreply) / Lremote of the extra curves, comma-separated. Default: 0.5,1,2,4,8,16.",
    ),
    requests: Optional[float] = typer.Option(
        None, "--requests", help="Remote requests per processor (M). Default: 1, i.e. times per request."
    ),
    tcs: Optional[float] = typer.Option(
        None, "--tcs", help="Thread context switch time for the multithreading limits, microseconds. Default: 4."
    ),
    o_request: Optional[float] = typer.Option(
        None,
        "--o-request",
        help="Requester-side protocol overhead for the saturation rule, microseconds. Default: 54.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document (with the settings used)."),
    plot: Optional[Path] = typer.Option(
        None, "--plot", help="Write both panels of the normalized time (against C and against utilization) to this PNG."
    ),
) -> None:
    """The analytic model: execution times of Single, Fixed and Floating against the computation
    between requests, and where Fixed pays off (Figure 3 of the protocol-processing paper)."""
    plot = _ui.output_path(plot, "--plot")
    res = _call(
        protoproc.model,
        l_remote_us=l_remote,
        o_pp_us=o_pp,
        o_reply_us=o_reply,
        c_us=c,
        c_min_us=c_min,
        c_max_us=c_max,
        points=points,
        ratios=_ratios(ratios),
        requests=requests,
        tcs_us=tcs,
        o_request_us=o_request,
    )
    if plot is not None:
        _plot_model(res, plot)
    if as_json:
        emit_json(res)
        return
    s = res["settings"]
    t = Table(
        title=f"Lremote {s['l_remote_us']:g} us, Opp {s['o_pp_us']:g} us, Oreply {s['o_reply_us']:g} us, "
        f"M = {s['requests']:g} (times in us)"
    )
    for col in ("C us", "util", "Tsingle", "Tfixed", "Tfloating", "Tsingle/Tfixed", "best of Fixed/Floating"):
        t.add_column(col, justify="right")
    rows = res["points"] + ([res["point"]] if res.get("point") else [])
    for p in rows:
        t.add_row(
            f"{p['c_us']:.2f}",
            f"{p['utilization']:.3f}",
            f"{p['t_single']:.2f}",
            f"{p['t_fixed']:.2f}",
            f"{p['t_floating']:.2f}",
            f"{p['normalized']:.3f}",
            p["best"],
        )
    console.print(t)
    _print_break_even(res)
    if plot is not None:
        console.print(f"plot written to {plot}")


def _interval(i: Optional[dict[str, float]]) -> str:
    if i is None:
        return "never"
    return (
        f"utilization {i['u_low']:.3f} to {i['u_high']:.3f} (C {i['c_low_us']:.1f} to {i['c_high_us']:.1f} us)"
    )


def _print_break_even(res: dict[str, Any]) -> None:
    b = res["break_even"]
    console.print(
        f"overhead 2 Opp + Oreply = {b['overhead_us']:.1f} us = {b['overhead_ratio']:.3f} x Lremote; "
        f"largest Tsingle/Tfixed {b['r_max']:.3f} at C = {b['c_at_r_max_us']:g} us"
    )
    console.print(f"Fixed beats Floating (Tsingle/Tfixed > 2): {_interval(b['fixed_beats_floating'])}")
    console.print(f"Fixed at least 33% faster than Single: {_interval(b['cost_effective'])}")
    mt = res["multithreading"]
    console.print(
        f"multithreaded Fixed: the protocol processor saturates for C below {mt['saturation_below_c_us']:.1f} us "
        f"(Orequest {mt['o_request_us']:g} + Oreply > C + Tcs {mt['tcs_us']:g})"
    )
    t = Table(title="overhead 2 Opp + Oreply needed, by utilization")
    for col in ("util", "C us", "for Fixed > Floating (x Lremote)", "for +33% over Single (x Lremote)"):
        t.add_column(col, justify="right")
    for n in b["overhead_needed"]:
        t.add_row(
            f"{n['utilization']:.2f}",
            f"{n['c_us']:.1f}",
            f"{n['ratio_fixed_beats_floating']:.2f}",
            f"{n['ratio_cost_effective']:.2f}",
        )
    console.print(t)
    t = Table(title="curves by overhead ratio")
    for col in ("(2 Opp + Oreply) / Lremote", "largest Tsingle/Tfixed", "Fixed beats Floating", "Fixed +33%"):
        t.add_column(col, justify="right")
    for cv in res["curves"]:
        t.add_row(
            f"{cv['ratio']:g}", f"{cv['r_max']:.3f}", _interval(cv["fixed_beats_floating"]), _interval(cv["cost_effective"])
        )
    console.print(t)


def _plot_model(res: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    s = res["settings"]
    for cv in res["curves"]:
        pts = cv["points"]
        label = f"(2Opp+Oreply)/Lremote = {cv['ratio']:g}"
        ax[0].plot([p["c_us"] for p in pts], [p["normalized"] for p in pts], label=label)
        ax[1].plot([p["utilization"] for p in pts], [p["normalized"] for p in pts], label=label)
    pts = res["points"]
    mine = f"these parameters ({res['break_even']['overhead_ratio']:.2f})"
    ax[0].plot([p["c_us"] for p in pts], [p["normalized"] for p in pts], "k--", label=mine)
    ax[1].plot([p["utilization"] for p in pts], [p["normalized"] for p in pts], "k--", label=mine)
    ax[0].set_xscale("log")
    ax[0].set_xlabel("C, computation between requests (us)")
    ax[1].set_xlabel("compute utilization under Fixed, C / (C + Lremote)")
    for a in ax:
        a.set_ylabel("Tsingle / Tfixed")
        a.axhline(2.0, ls=":", c="gray")
        a.axhline(4.0 / 3.0, ls=":", c="silver")
    ax[0].axvline(s["l_remote_us"], ls=":", c="gray")
    ax[1].legend(fontsize=7)
    fig.suptitle("Normalized execution time (dotted: Fixed beats Floating above 2; +33% line)")
    fig.tight_layout()
    with _ui.atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format=(path.suffix.lstrip(".") or "png"))
    plt.close(fig)


# --------------------------------------------------------------------------------------- sim


@protoproc_app.command("sim")
@interruptible
def sim_cmd(
    app: Optional[SimApp] = typer.Option(
        None,
        "--app",
        help="Workload: em3d, gauss, tomcatv (the paper's applications as communication patterns) or "
        "synthetic (request/reply with the model's parameters). Default: synthetic.",
    ),
    policy: Optional[Policy] = typer.Option(
        None,
        "--policy",
        help="single (one processor per node does everything), fixed (processor 0 only runs protocol "
        "handlers) or floating (all compute, an idle one handles messages). Default: fixed.",
    ),
    nodes: Optional[int] = typer.Option(None, "--nodes", help="Nodes (1 to 256). Default: 4, as in the paper."),
    cpus: Optional[int] = typer.Option(
        None, "--cpus", help="Processors per node (single: 1; fixed: 2 or more). Default: 1 for single, 2 otherwise."
    ),
    threads: Optional[int] = typer.Option(
        None, "--threads", help="Application threads per compute processor (1 to 64). Default: 1."
    ),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed of the workload's random choices. Default: 1."),
    costs: Optional[CostSet] = typer.Option(
        None,
        "--costs",
        help="table2 (handler costs calibrated to the paper's measured latencies) or model (derived from "
        "--l-remote, --o-pp, --o-reply so the simulation follows the model's assumptions). "
        "Default: model for synthetic, table2 otherwise.",
    ),
    bus_share: Optional[float] = typer.Option(
        None,
        "--bus-share",
        help="Share of the node bus one computing processor uses (0 = no bus model; above 1/k, k computing "
        "processors slow down). Default: 0.3 for tomcatv, 0 otherwise.",
    ),
    notify: Optional[Notify] = typer.Option(
        None,
        "--notify",
        help="How a computing processor notices messages: poll (every poll interval of computation) or "
        "interrupt. Default: poll with table2 costs, interrupt with model costs.",
    ),
    interrupt: Optional[float] = typer.Option(
        None, "--interrupt", help="Cost of an interrupt, microseconds. Default: 60 (table2), Opp (model)."
    ),
    role_switch: Optional[float] = typer.Option(
        None,
        "--role-switch",
        help="Floating: cost of going back from protocol processing to computation, microseconds. Default: 14 (table2).",
    ),
    poll_interval: Optional[float] = typer.Option(
        None, "--poll-interval", help="Mean computation between two polls, microseconds. Default: 48.5 (table2)."
    ),
    network: Optional[float] = typer.Option(
        None, "--network", help="One-way network latency, microseconds. Default: 12 (table2)."
    ),
    l_remote: Optional[float] = typer.Option(
        None, "--l-remote", help="Model costs: round trip with a dedicated protocol processor, microseconds. Default: 113."
    ),
    o_pp: Optional[float] = typer.Option(
        None, "--o-pp", help="Model costs: overhead a dedicated processor saves, microseconds. Default: 55."
    ),
    o_reply: Optional[float] = typer.Option(
        None, "--o-reply", help="Model costs: home node overhead, microseconds. Default: 27."
    ),
    c: Optional[float] = typer.Option(
        None, "--c", help="Synthetic: mean computation between requests, microseconds. Default: 113."
    ),
    requests: Optional[int] = typer.Option(
        None, "--requests", help="Synthetic: remote requests per node (the model's M). Default: 2,000."
    ),
    spread: Optional[Spread] = typer.Option(
        None,
        "--spread",
        help="Synthetic: computation between requests exponential (mean --c) or fixed (exactly --c). Default: exponential.",
    ),
    iterations: Optional[int] = typer.Option(
        None, "--iterations", help="em3d and tomcatv: iterations. Default: 10 (the paper's inputs)."
    ),
    matrix: Optional[int] = typer.Option(
        None, "--matrix", help="gauss and tomcatv: matrix size n (n x n). Default: 672 (gauss), 768 (tomcatv)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document (with the settings used)."),
) -> None:
    """Simulate one policy on a network of multiprocessor nodes: execution time and, for every
    processor, the time spent computing, in protocol handlers, polling, switching and idle."""
    with _ui.progress("sim", "misses") as bar:

        def cb(done: int, total: int) -> None:
            bar.update(done, total)

        res = _call(
            protoproc.simulate,
            _v(app),
            policy=_v(policy),
            nodes=nodes,
            cpus=cpus,
            threads=threads,
            seed=seed,
            costs=_v(costs),
            bus_share=bus_share,
            notify=_v(notify),
            interrupt_us=interrupt,
            role_switch_us=role_switch,
            poll_interval_us=poll_interval,
            network_us=network,
            l_remote_us=l_remote,
            o_pp_us=o_pp,
            o_reply_us=o_reply,
            c_us=c,
            requests=requests,
            spread=_v(spread),
            iterations=iterations,
            n=matrix,
            progress=cb,
        )
    if as_json:
        emit_json(res)
        return
    st = res["settings"]["system"]
    console.print(
        f"[bold]{res['app']}[/bold] under {res['policy']}: {st['nodes']} nodes x {st['cpus']} processor(s), "
        f"{st['threads']} thread(s) per compute processor; costs {st['costs']['source']}"
    )
    t = Table(title="time per processor (us)")
    for col in ("node", "cpu", "role", "compute", "protocol", "polling", "switch", "idle"):
        t.add_column(col, justify="right" if col != "role" else "left")
    procs = res["processors"]
    for p in procs:
        t.add_row(
            str(p["node"]),
            str(p["cpu"]),
            p["role"],
            *(f"{p[k]:.0f}" for k in ("compute_us", "protocol_us", "polling_us", "switch_us", "idle_us")),
        )
    tot = res["total"]
    t.add_row("all", "", "", *(f"{tot[k]:.0f}" for k in ("compute_us", "protocol_us", "polling_us", "switch_us", "idle_us")))
    console.print(t)
    console.print(
        f"execution time {res['execution_time_us']:.0f} us (mean node finish {res['mean_node_finish_us']:.0f} us); "
        f"{res['misses']} remote misses, mean latency {res['mean_miss_latency_us']:.1f} us, "
        f"mean protocol queue wait {res['mean_queue_wait_us']:.1f} us; {res['messages']} other messages"
    )
    if res.get("model"):
        m = res["model"]
        note = "" if m["applies"] else " (the model describes 1 compute thread per node, 2 for Floating; orientation only)"
        console.print(
            f"model {m['equation']} = {m['time_us']:.0f} us; simulation {m['difference_pct']:+.1f}% (mean node finish){note}"
        )


# ------------------------------------------------------------------------------------ table2


@protoproc_app.command("table2")
@interruptible
def table2_cmd(
    misses: Optional[int] = typer.Option(
        None, "--misses", help="Remote misses of the tight miss loop (1 to 1,000,000). Default: 10,000, as in the paper."
    ),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed of the poll-interval spread. Default: 1."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document (with the settings used)."),
) -> None:
    """The paper's remote-miss microbenchmark (Table 2) on the simulator: round trip, requester and
    home overheads per policy, beside the measured figures."""
    res = _call(protoproc.table2, misses=misses, seed=seed)
    if as_json:
        emit_json(res)
        return
    t = Table(title="remote miss, microseconds: simulated (paper)")
    for col in ("policy", "round trip", "requester", "home", "other"):
        t.add_column(col, justify="right" if col != "policy" else "left")
    for r in res["rows"]:
        p = r["paper"] or {}

        def cell(k: str) -> str:
            return f"{r[k]:.1f}" + (f" ({p[k]:g})" if k in p else "")

        t.add_row(f"{r['policy']} ({r['cpus']} cpu)", cell("round_trip_us"), cell("requester_us"), cell("home_us"), cell("other_us"))
    console.print(t)


def register(app: typer.Typer) -> None:
    """Add the ``protoproc`` command group to the main ``pktflow`` app."""
    app.add_typer(protoproc_app, name="protoproc")
