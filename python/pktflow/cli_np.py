"""``pktflow simulate``, ``maxrate``, ``bottleneck`` and ``explore``: the network-processor timing
simulator.

Wired into the main CLI by ``pktflow.cli`` through ``register(app)``. See docs/npsim.md. Options
left unset are not sent: the defaults live in Rust, and every JSON result records the settings
it resolved under ``"settings"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, List, Optional

import typer
from rich.markup import escape
from rich.table import Table

from pktflow import PktflowError, _ui
from pktflow import npsim as api
from pktflow._ui import console, emit_json
from pktflow.npsim import Arrivals, Destinations, LockRelease, Mapper, Replication, Scheduling, SlowPathPolicy

APP_HELP = "Built-in application (router, nat, router64, l3switch, mpls, firewall) or a Click configuration file."

IDEAL_WORDS = (
    "I: infinite PEs (every task on PEs of its own); Z: instructions take no time; "
    "S: no synchronization (no critical sections); B: perfect bus pipelining (1-cycle bus "
    "occupancy); M: memories with 1-cycle occupancy."
)


def interruptible(fn):
    """Ctrl-C inside a command becomes :class:`pktflow._ui.Interrupted`, so the main CLI prints
    ``interrupted`` and exits 130 (click would otherwise turn the KeyboardInterrupt into a silent
    exit code)."""
    import functools

    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except KeyboardInterrupt:
            raise _ui.Interrupted() from None

    return run


def _v(x):
    """An Enum option's value (None stays None)."""
    return None if x is None else x.value


def _transform_lines(tr: dict) -> List[str]:
    """[xform hook] One line per transformation applied (docs/npsim-transforms.md)."""
    out = []
    sp = tr.get("split")
    if sp is not None:
        names = ", ".join(sp["splits"]) or "none"
        out.append(
            f"split: {names}; {sp['cuts']} cuts, {sp['live_requests']} live-data requests "
            f"({sp['live_bytes']} B), {sp['migrated_locks']} locks migrated"
        )
    e = tr.get("early")
    if e is not None:
        out.append(
            f"early signalling: {e['early_instances']} of {e['visits']} task instances signalled early, "
            f"{e['waits']} waits ({e['waits_blocked']} blocked)"
        )
    s = tr.get("speculate")
    if s is not None:
        out.append(
            f"speculation: {s['attempts']} speculative sections, {s['aborts']} rolled back "
            f"(failure rate {s['failure_rate']:.1%}; in the window {s['window_failure_rate']:.1%}), "
            f"{s['rollback_cycles']} cycles per rollback"
        )
    loc = tr.get("locality")
    if loc is not None:
        out.append(
            f"locality: {loc['word_requests']} word requests -> {loc['wide_requests']} wide requests of "
            f"{loc['wide_bytes']} B ({loc['saved_fraction']:.1%} saved)"
        )
    return out


def _print_report(r: dict) -> None:
    if r.get("transform"):
        for line in _transform_lines(r["transform"]):
            console.print(escape(line))
    w = r["window"]
    spec = r.get("spec", {})
    console.print(
        f"[bold]{escape(str(spec.get('app', '')))}[/bold] on {r['pe_count']} PEs ({spec.get('replication', '')}): "
        f"offered {r['offered_packets_per_second']:,.0f} packets/s, delivered "
        f"{r['throughput_packets_per_second']:,.0f} packets/s ({r['throughput_gbps']:.3f} Gb/s)"
    )
    console.print(
        f"window: {w['arrivals']} arrivals, {w['departures']} departures, in flight "
        f"{w['in_flight_at_start']} -> {w['in_flight_at_end']}, NP drops {w['sim_drops']}; "
        f"latency mean {r['latency']['mean_cycles']:.0f} p99 {r['latency']['p99_cycles']} cycles"
    )
    if w["departures"] == 0 and r.get("delivered", 0) > 0:
        # The rate above is measured in the window; when no packet leaves inside it (the window
        # is shorter than a packet's latency), say so instead of letting "0 packets/s" stand.
        console.print(
            f"[yellow]note:[/yellow] no packet left during the measurement window ({w['arrivals']} arrivals), "
            f"which is shorter than a packet's latency (mean {r['latency']['mean_cycles']:.0f} cycles); "
            f"{r['delivered']:,} packets were delivered after it. The rate above is not a sustained rate: "
            "use more --packets or a longer --inter-arrival (or `pktflow maxrate`)."
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
    if r.get("diagnosis"):
        console.print(f"binding resource: {escape(r['diagnosis']['sentence'])}")


MAPPER_HELP = (
    "How tasks are assigned to PEs: round-robin, greedy (balance measured loads), "
    "greedy+replicate (then replicate the task with the longest queue time until the PEs are "
    "well utilized, as the NPIRE paper maps) or anneal "
    "(then simulated annealing on a coarse model), tdpm or tdpm-refine (the TDPM paper's plan: elements grouped "
    "into tasks, each duplicated over engines; the replication scope is ignored). "
    "Default: round-robin; explore: greedy+replicate."
)

# Options shared by simulate, maxrate, bottleneck and explore (declared once). None = not set:
# the simulator's own default applies (docs/npsim.md lists them).
AppArg = Annotated[Optional[str], typer.Argument(help=APP_HELP + " Default: router.", show_default=False)]
ArchOpt = Annotated[
    Optional[str], typer.Option("--arch", help="Architecture preset (npire, ixp2400) or TOML file. Default: npire.")
]
SetOpt = Annotated[
    Optional[List[str]],
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Override one architecture parameter, value in TOML syntax (e.g. np.hardware_contexts_per_pe=4, "
        "memory_map.stack='\"sram\"'); repeatable.",
    ),
]
PesOpt = Annotated[
    Optional[int], typer.Option("--pes", help="Processing elements (1 to 4096). Default: the architecture's.")
]
RepOpt = Annotated[
    Optional[Replication],
    typer.Option(
        "--replication",
        help="Where task replicas may run: none, pe (its PE's contexts), subset (a group of PEs) or "
        "global (every PE: a global task queue). Default: global.",
    ),
]
PacketsOpt = Annotated[
    Optional[int], typer.Option("--packets", help="Synthetic packets per simulation. Default: 20,000 (explore: 2,000).")
]
WarmupOpt = Annotated[
    Optional[int],
    typer.Option("--warmup", help="Packets before the measurement window opens. Default: a fifth of --packets."),
]
TraceOpt = Annotated[
    Optional[str], typer.Option("--trace", help="Packets from this pcap/pcapng file instead of synthetic ones.")
]
SeedOpt = Annotated[Optional[int], typer.Option("--seed", help="Seed of the synthetic packets. Default: 1.")]
MapperOpt = Annotated[Optional[Mapper], typer.Option("--mapper", help=MAPPER_HELP)]
SubsetOpt = Annotated[
    Optional[int], typer.Option("--subset-size", help="PEs per group for subset replication. Default: 4.")
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON document (with the settings used) instead of tables.")
]
SchedOpt = Annotated[
    Optional[Scheduling],
    typer.Option(
        "--scheduling",
        help="How a PE picks its next task: fifo (one queue per PE, the head blocks the rest; the NPIRE "
        "paper's) or first-eligible (the oldest task that may start). Default: fifo.",
    ),
]
ReleaseOpt = Annotated[
    Optional[LockRelease],
    typer.Option(
        "--lock-release",
        help="When a critical section releases its lock: after-issue (right after its last read or "
        "write is issued, as the NPIRE paper places the release) or after-completion (once every "
        "memory access the context issued has completed). Default: after-issue.",
    ),
]
WideOpt = Annotated[
    Optional[bool],
    typer.Option(
        "--wide-accesses/--word-accesses",
        help="One memory request per traced access (wide) or one per 32-bit word. Default: word accesses.",
        show_default=False,
    ),
]
DestOpt = Annotated[
    Optional[Destinations],
    typer.Option(
        "--destinations",
        help="How synthetic packets' destinations are drawn from the routes: zipf, uniform, "
        "address-space, per-port (every output port equally) or transit (only routes through a gateway, "
        "as on a backbone link). Default: zipf.",
    ),
]
ToleranceOpt = Annotated[
    Optional[float],
    typer.Option(
        "--tolerance", help="Keep-up tolerance: departures may fall this share short of arrivals. Default: 0.02."
    ),
]
PrecisionOpt = Annotated[
    Optional[float],
    typer.Option("--precision", help="Stop the search when the rate is known to this relative width. Default: 0.01."),
]


# [xform hook] --transform (docs/npsim-transforms.md)
TransformOpt = Annotated[
    Optional[str],
    typer.Option(
        "--transform",
        help="Task transformations of the NPIRE paper, a comma list of split, early, speculate and "
        "locality (any subset; docs/npsim-transforms.md). Default: none.",
    ),
]


# Slow-path options (docs/protoproc.md section 6).
SlowPolicyOpt = Annotated[
    Optional[SlowPathPolicy],
    typer.Option(
        "--slow-path-policy",
        help="Where slow-path elements (ARPResponder, ICMPError and --slow-path) run: single (each PE in place, "
        "paying an interrupt per visit), fixed (one dedicated PE, paying a handoff each way) or "
        "floating (any PE with a free context, paying a role switch). Default: no slow-path handling.",
    ),
]
SlowNamesOpt = Annotated[
    Optional[str],
    typer.Option("--slow-path", help="More slow-path elements, by name or class, separated by commas."),
]
SlowIntrOpt = Annotated[
    Optional[int],
    typer.Option("--slow-interrupt-cycles", help="single: cycles per slow-path visit for the interrupt. Default: 600."),
]
SlowRoleOpt = Annotated[
    Optional[int],
    typer.Option("--slow-role-switch-cycles", help="floating: cycles per slow-path visit for the role switch. Default: 140."),
]
SlowMsgOpt = Annotated[
    Optional[int],
    typer.Option("--slow-message-cycles", help="fixed: cycles of each handoff to and from the dedicated PE. Default: 120."),
]


def _sim(scheduling, lock_release, wide_accesses, warmup=None, transform=None) -> dict:
    s = api.model_options(_v(scheduling), _v(lock_release), wide_accesses, transform)
    if warmup is not None:
        s["warmup_packets"] = warmup
    return s


def _search(tolerance=None, precision=None, zero_drop=None) -> dict:
    s = {"tolerance": tolerance, "precision": precision, "zero_drop": zero_drop}
    return {k: v for k, v in s.items() if v is not None}


def _explore_table(doc: dict) -> Table:
    base = doc.get("baseline_packets_per_second")
    base_txt = f"{base:,.0f} packets/s" if base is not None else "not measured"
    t = Table(
        title=f"{doc['app']} on {doc['arch']} ({doc['mapper']} mapping): maximum sustainable rate; "
        f"speedup over {doc['baseline_pes']} PEs with no replication ({base_txt})"
        + (" (interrupted: finished points only)" if doc.get("interrupted") else "")
    )
    cols = ("PEs", "replication", "packets/s", "Gb/s", "speedup", "PE busy", "replicated", "binding resource",
            "idealized")
    for c in cols:
        t.add_column(c, justify="left" if c in ("replication", "binding resource", "idealized") else "right",
                     no_wrap=True)
    threshold = doc.get("settings", {}).get("explore", {}).get("threshold", 1.05)
    for p in doc["points"]:
        b = p.get("bottleneck")
        t.add_row(
            str(p["pes"]),
            p["replication"],
            f"{p['packets_per_second']:,.0f}",
            f"{p['gbps']:.3f}",
            f"{p['speedup']:.2f}x" if p.get("speedup") is not None else "-",
            f"{p['mean_pe_busy']:.2f}",
            str(len(p["replicated"])),
            escape(_short_limit(p.get("limit"))),
            _short_bottleneck(b, threshold) if b else "-",
        )
    return t


def _short_limit(d: Optional[dict]) -> str:
    """The binding resource of a point in a few words (the full sentence follows the table)."""
    if not d or not d.get("limits"):
        return "-"
    top = d["limits"][0]
    res = top["what"]
    if top["resource"]["kind"] == "pe":
        res += " contexts" if any("contexts held" in e for e in top["evidence"]) else " computing"
    return f"{res} {100 * top['share']:.0f}%"


def _short_bottleneck(b: dict, threshold: float) -> str:
    """The idealizations that raise the rate by the threshold: S/B/M alone, largest first, or the
    combination that does when none alone does (the full sentence is in --json)."""
    names = {"S": "sync", "B": "buses", "M": "memories"}
    gains = b["gains"]
    alone = sorted(((g, k) for k, g in gains.items() if len(k) == 1 and g >= threshold), reverse=True)
    if alone:
        return ", ".join(f"{names[k]} ({k} {g:.2f}x)" for g, k in alone)
    for k in ("SB", "SBM"):
        if k in gains and gains[k] >= threshold:
            return f"{'+'.join(names[c] for c in k)} together ({k} {gains[k]:.2f}x)"
    best = max(gains.values()) if gains else 1.0
    return f"not S/B/M (at most {best:.2f}x)"


def _explore_details(doc: dict) -> None:
    """Per point: the tasks replicated, by name, and the binding resource in a sentence."""
    for p in doc["points"]:
        head = f"{p['pes']} PEs, {p['replication']}"
        rep = p["replicated"]
        if rep:
            console.print(f"{head}: replicated {len(rep)}: {escape(', '.join(rep))}")
        d = p.get("limit")
        if d:
            console.print(f"{head}: {escape(d['sentence'])}")
        b = p.get("bottleneck")
        if b and b.get("summary"):
            console.print(f"{head}: idealized: {escape(b['summary'])}")


# Distinct line style and marker per scope so that no line hides another.
_SCOPE_STYLE = {
    "none": ("no transformation", "o", "-"),
    "pe": ("rep on PE", "s", "--"),
    "subset": ("subset rep", "^", "-."),
    "global": ("rep + global task queue", "D", ":"),
}


def _explore_plot(doc: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11.5, 4.4))
    ratio = None
    for rep in api.REPLICATIONS:
        label, marker, style = _SCOPE_STYLE[rep]
        pts = sorted((p["pes"], p["speedup"], p["packets_per_second"], p["gbps"])
                     for p in doc["points"] if p["replication"] == rep)
        if not pts:
            continue
        sp = [(x, y) for x, y, _, _ in pts if y is not None]
        if sp:
            ax.plot([x for x, _ in sp], [y for _, y in sp], marker=marker, linestyle=style, label=label,
                    markerfacecolor="none", markersize=7)
        ax2.plot([x for x, *_ in pts], [r / 1e6 for _, _, r, _ in pts], marker=marker, linestyle=style,
                 label=label, markerfacecolor="none", markersize=7)
        for _, _, r, g in pts:
            if r > 0 and ratio is None:
                ratio = g / (r / 1e6)
    ax.set_xlabel("PEs")
    ax.set_ylabel(f"throughput speedup over {doc['baseline_pes']} PEs, no transformation")
    ax.set_title(f"{doc['app']} on {doc['arch']} ({doc['mapper']} mapping)")
    ax.grid(True, alpha=0.3)
    ax.legend()
    ax2.set_xlabel("PEs")
    ax2.set_ylabel("maximum sustainable rate (Mpackets/s)")
    ax2.set_title("absolute rate")
    ax2.grid(True, alpha=0.3)
    ax2.legend()
    if ratio:
        sec = ax2.secondary_yaxis("right", functions=(lambda m: m * ratio, lambda g: g / ratio))
        sec.set_ylabel("Gb/s at the trace's mean packet size")
    fig.tight_layout()
    with _ui.atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)


def register(app: typer.Typer) -> None:
    @app.command("simulate")
    @interruptible
    def simulate_cmd(
        application: AppArg = None,
        inter_arrival: Optional[float] = typer.Option(
            None,
            "--inter-arrival",
            help="Cycles between packet arrivals, PE cycles (required unless --arrivals recorded).",
        ),
        arrivals: Optional[Arrivals] = typer.Option(
            None,
            "--arrivals",
            help="When packets arrive: fixed (every --inter-arrival cycles) or recorded (the trace's "
            "timestamps). Default: fixed.",
        ),
        time_scale: Optional[float] = typer.Option(
            None, "--time-scale", help="Recorded arrivals: factor on the gaps (0.5 replays twice as fast). Default: 1."
        ),
        arch: ArchOpt = None,
        arch_set: SetOpt = None,
        pes: PesOpt = None,
        replication: RepOpt = None,
        packets: PacketsOpt = None,
        warmup: WarmupOpt = None,
        trace: TraceOpt = None,
        seed: SeedOpt = None,
        mapper: MapperOpt = None,
        subset_size: SubsetOpt = None,
        scheduling: SchedOpt = None,
        lock_release: ReleaseOpt = None,
        wide_accesses: WideOpt = None,
        transform: TransformOpt = None,
        destinations: DestOpt = None,
        slow_path_policy: SlowPolicyOpt = None,
        slow_path: SlowNamesOpt = None,
        slow_interrupt_cycles: SlowIntrOpt = None,
        slow_role_switch_cycles: SlowRoleOpt = None,
        slow_message_cycles: SlowMsgOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """One timing simulation of APP on a network processor at a fixed packet rate (or as recorded)."""
        if arrivals != Arrivals.recorded and inter_arrival is None:
            raise PktflowError("--inter-arrival CYCLES is required (or use --arrivals recorded)")
        sim = _sim(scheduling, lock_release, wide_accesses, warmup, transform)
        sim.update(
            api.slow_path_options(
                _v(slow_path_policy), slow_path, slow_interrupt_cycles, slow_role_switch_cycles, slow_message_cycles
            )
        )
        if arrivals is not None:
            sim["arrivals"] = arrivals.value
        if time_scale is not None:
            sim["time_scale"] = time_scale
        with _ui.progress("simulate", "packets") as prog:

            def progress(done: int, total: int) -> None:
                prog.update(done, total or None)

            r = api.simulate(
                application,
                inter_arrival_cycles=inter_arrival,
                arch=arch,
                arch_set=arch_set,
                pes=pes,
                replication=_v(replication),
                packets=packets,
                trace=trace,
                seed=seed,
                mapper=_v(mapper),
                subset_size=subset_size,
                sim=sim,
                destinations=_v(destinations),
                progress=progress,
            )
            prog.update(r["injected"], r["injected"], "done")
        if as_json:
            emit_json(r)
        else:
            _print_report(r)

    @app.command("maxrate")
    @interruptible
    def maxrate_cmd(
        application: AppArg = None,
        arch: ArchOpt = None,
        arch_set: SetOpt = None,
        pes: PesOpt = None,
        replication: RepOpt = None,
        packets: PacketsOpt = None,
        warmup: WarmupOpt = None,
        trace: TraceOpt = None,
        seed: SeedOpt = None,
        tolerance: ToleranceOpt = None,
        precision: PrecisionOpt = None,
        zero_drop: Optional[bool] = typer.Option(
            None,
            "--zero-drop/--allow-drops",
            help="Also require no packet dropped in the window. Default: drops allowed.",
            show_default=False,
        ),
        mapper: MapperOpt = None,
        subset_size: SubsetOpt = None,
        scheduling: SchedOpt = None,
        lock_release: ReleaseOpt = None,
        wide_accesses: WideOpt = None,
        transform: TransformOpt = None,
        destinations: DestOpt = None,
        slow_path_policy: SlowPolicyOpt = None,
        slow_path: SlowNamesOpt = None,
        slow_interrupt_cycles: SlowIntrOpt = None,
        slow_role_switch_cycles: SlowRoleOpt = None,
        slow_message_cycles: SlowMsgOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Maximum sustainable packet rate of APP (bisection over the inter-arrival time)."""
        with _ui.progress("maxrate", "simulations") as prog:

            def progress(done: int, total: int, ia: float) -> None:
                prog.update(done, total, f"inter-arrival {ia:,.1f} cycles")

            m = api.maxrate(
                application,
                arch=arch,
                arch_set=arch_set,
                pes=pes,
                replication=_v(replication),
                packets=packets,
                trace=trace,
                seed=seed,
                mapper=_v(mapper),
                subset_size=subset_size,
                sim={
                    **_sim(scheduling, lock_release, wide_accesses, warmup, transform),
                    **api.slow_path_options(
                        _v(slow_path_policy), slow_path, slow_interrupt_cycles, slow_role_switch_cycles, slow_message_cycles
                    ),
                },
                destinations=_v(destinations),
                search=_search(tolerance, precision, zero_drop),
                progress=progress,
            )
            prog.update(len(m["probes"]), len(m["probes"]), "done")
        if as_json:
            emit_json(m)
            return
        lo, hi = m["bracket"]["inter_arrival_cycles"]
        console.print(
            f"[bold]{escape(m['spec']['app'])}[/bold] on {m['report']['pe_count']} PEs "
            f"({m['spec']['replication']}): {m['packets_per_second']:,.0f} packets/s = "
            f"{m['gbps']:.3f} Gb/s at {m['mean_wire_bytes']:.0f} B/packet; inter-arrival "
            f"bracket [{lo:.2f}, {hi:.2f}] cycles after {len(m['probes'])} simulations"
        )
        _print_report({**m["report"], "diagnosis": m.get("diagnosis")})

    @app.command("bottleneck")
    @interruptible
    def bottleneck_cmd(
        application: AppArg = None,
        arch: ArchOpt = None,
        arch_set: SetOpt = None,
        pes: PesOpt = None,
        replication: RepOpt = None,
        packets: PacketsOpt = None,
        warmup: WarmupOpt = None,
        trace: TraceOpt = None,
        seed: SeedOpt = None,
        ideal: Optional[str] = typer.Option(
            None,
            "--ideal",
            help="More combinations to run, comma-separated letters (e.g. SB,IS). " + IDEAL_WORDS,
        ),
        no_chain: bool = typer.Option(
            False, "--no-chain", help="Skip the cumulative chain I, IZ, IZS, IZSB, IZSBM (Figure 8 of the NPIRE paper)."
        ),
        threshold: Optional[float] = typer.Option(
            None, "--threshold", help="Smallest gain (a factor, at least 1) that counts as a limit. Default: 1.05."
        ),
        tolerance: ToleranceOpt = None,
        precision: PrecisionOpt = None,
        mapper: MapperOpt = None,
        subset_size: SubsetOpt = None,
        scheduling: SchedOpt = None,
        lock_release: ReleaseOpt = None,
        wide_accesses: WideOpt = None,
        transform: TransformOpt = None,
        destinations: DestOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """What limits APP's throughput: maximum rates with resources idealized (Figure 8 of the
        NPIRE paper).

        I: infinite PEs (every task on PEs of its own). Z: instructions take no time. S: no
        synchronization (no critical sections). B: perfect bus pipelining. M: memories with
        1-cycle occupancy.
        """
        extra = [x.strip() for x in ideal.split(",") if x.strip()] if ideal else []
        # baseline + 5 alone + 4 with the top one + the chain's new ones (IZ..IZSBM) + extra
        total = 10 + (0 if no_chain else 4) + len(extra)
        with _ui.progress("bottleneck", "searches", total) as prog:

            def progress(done: int, label: str) -> None:
                prog.update(done, max(total, done + 1), f"maximum rate with {label}")

            b = api.bottleneck(
                application,
                arch=arch,
                arch_set=arch_set,
                pes=pes,
                replication=_v(replication),
                packets=packets,
                trace=trace,
                seed=seed,
                chain=False if no_chain else None,
                extra=extra,
                threshold=threshold,
                mapper=_v(mapper),
                subset_size=subset_size,
                sim=_sim(scheduling, lock_release, wide_accesses, warmup, transform),
                search=_search(tolerance, precision),
                destinations=_v(destinations),
                progress=progress,
            )
            prog.update(len(b["runs"]), len(b["runs"]), "done")
        if as_json:
            emit_json(b)
            return
        console.print(
            f"[bold]{escape(b['spec']['app'])}[/bold] ({b['spec']['replication']}, "
            f"{b['settings']['pe_count']} PEs): baseline "
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
        if b.get("diagnosis"):
            console.print(f"binding resource of the baseline run: {escape(b['diagnosis']['sentence'])}")

    @app.command("explore")
    @interruptible
    def explore_cmd(
        application: AppArg = None,
        arch: ArchOpt = None,
        arch_set: SetOpt = None,
        pes: Optional[str] = typer.Option(
            None,
            "--pes",
            help="PE counts: FIRST:LAST[:STEP] (step 4 by default) or a list 4,8,16. Default: 4:32:4.",
        ),
        replication: Optional[str] = typer.Option(
            None,
            "--replication",
            help="Comma-separated replication scopes, each none, pe, subset or global. Default: all four.",
        ),
        mapper: MapperOpt = None,
        scheduling: SchedOpt = None,
        lock_release: ReleaseOpt = None,
        wide_accesses: WideOpt = None,
        transform: TransformOpt = None,
        destinations: DestOpt = None,
        packets: PacketsOpt = None,
        warmup: WarmupOpt = None,
        trace: TraceOpt = None,
        seed: SeedOpt = None,
        subset_size: SubsetOpt = None,
        tolerance: ToleranceOpt = None,
        precision: PrecisionOpt = None,
        no_bottleneck: bool = typer.Option(False, "--no-bottleneck", help="Skip the S/B/M ranking at each point."),
        threshold: Optional[float] = typer.Option(
            None,
            "--threshold",
            help="Smallest S/B/M gain (a factor, at least 1) that counts as a limit. Default: 1.05.",
        ),
        as_json: JsonOpt = False,
        plot: Optional[Path] = typer.Option(
            None, "--plot", help="Write speedup and absolute rate against PEs (as Figure 7 of the NPIRE paper) to this PNG."
        ),
        csv_path: Optional[Path] = typer.Option(None, "--csv", help="Write one row per point to this CSV file."),
        workers: Optional[int] = typer.Option(
            None,
            "--workers",
            min=1,
            max=256,
            help="Points computed at once, one thread each (the result is the same for any number). "
            "Default: every core.",
        ),
    ) -> None:
        """For each PE count and replication scope: the mapping found, its maximum sustainable rate,
        the speedup over 4 PEs with no replication (as Figure 7 of the NPIRE paper) and what limits it.

        "binding resource" is the most saturated resource at the maximum rate (a lock, a task that
        runs one instance at a time, a bus, a memory channel or a PE's contexts), with its share of
        the time; the sentence after the table gives its evidence and what would relieve it.
        "idealized" names the resources whose idealization alone raises the rate by at least
        --threshold: S (no synchronization: no critical sections), B (perfect bus pipelining:
        1-cycle bus occupancy) and M (memories with 1-cycle occupancy); when none does alone, the
        combinations SB and SBM are tried, as Figure 8 of the NPIRE paper combines them.
        The other idealizations of the bottleneck command are I (infinite PEs) and Z
        (instructions take no time).
        """
        import time

        plot = _ui.output_path(plot, "--plot")
        csv_path = _ui.output_path(csv_path, "--csv")
        reps = None
        if replication is not None:
            reps = [r.strip() for r in replication.split(",") if r.strip()]
            allowed = [r.value for r in Replication]
            for r in reps:
                if r not in allowed:
                    raise PktflowError(f"--replication: {r!r} is not one of {', '.join(allowed)}")
        counts = api.parse_pes(pes) if pes is not None else None
        t0 = time.monotonic()
        with _ui.progress("explore", "points") as prog:

            def progress(done: int, total: int, label: str) -> None:
                prog.update(done, total, label)

            doc = _ui.keep_partial(
                api.explore,
                application,
                arch=arch,
                arch_set=arch_set,
                pes=counts,
                replication=reps,
                mapper=_v(mapper),
                sim=_sim(scheduling, lock_release, wide_accesses, warmup, transform),
                search=_search(tolerance, precision),
                destinations=_v(destinations),
                packets=packets,
                trace=trace,
                seed=seed,
                subset_size=subset_size,
                bottleneck=False if no_bottleneck else None,
                threshold=threshold,
                progress=progress,
                workers=workers,
            )
        wall = time.monotonic() - t0
        if csv_path is not None and doc["points"]:
            import csv

            rows = api.explore_rows(doc)
            with _ui.atomic_write(csv_path, newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
                w.writeheader()
                w.writerows(rows)
        if plot is not None and doc["points"]:
            _explore_plot(doc, plot)
        if as_json:
            emit_json(doc)
        else:
            console.print(_explore_table(doc))
            _explore_details(doc)
            for extra, what in ((csv_path, "CSV"), (plot, "plot")):
                if extra is not None and doc["points"]:
                    console.print(f"{what}: {escape(str(extra))}")
            per_sim = doc["settings"]["spec"]["packets"]
            console.print(
                f"{len(doc['points'])} points, {sum(p['searches'] for p in doc['points'])} maximum-rate searches, "
                f"{per_sim:,} packets per simulation; wall time {wall:.1f} s"
            )
        if doc.get("interrupted"):
            raise _ui.Interrupted()
