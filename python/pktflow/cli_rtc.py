"""``pktflow rtc`` and ``pktflow conflicts`` (run to completion on multithreaded cores, NetTM;
crates/rtc). Wired into the main CLI by ``pktflow.cli`` through ``register(app)``. See
docs/rtc.md. Options left unset are not sent: the defaults live in Rust, and the JSON result
records what it resolved under ``"settings"``.
"""

from __future__ import annotations

from typing import List, Optional

import typer
from rich.markup import escape
from rich.table import Table

from pktflow import PktflowError, _ui, rtc
from pktflow._ui import console, emit_json
from pktflow.cli_np import interruptible
from pktflow.npsim import SlowPathPolicy
from pktflow.rtc import Cm, Criterion, Mode, Scheduler, Signature, Sync

_APP_HELP = (
    "Built-in app (router, nat, ...), Click file, echo (the thesis's packet copier) "
    "or parametric (appendix B's benchmark)."
)


def _v(x):
    return None if x is None else x.value


@interruptible
def rtc_cmd(
    app_name: str = typer.Argument(..., metavar="APP", help=_APP_HELP),
    arch: Optional[str] = typer.Option(
        None, "--arch", help="Soft multiprocessor preset or TOML file. Default: netthreads."
    ),
    arch_set: Optional[List[str]] = typer.Option(
        None,
        "--set",
        metavar="KEY=VALUE",
        help="Override one architecture parameter (e.g. netthreads.mutexes=32); repeatable.",
    ),
    cores: Optional[int] = typer.Option(None, "--cores", help="Cores (1 to 64). Default: the architecture's (2)."),
    threads: Optional[int] = typer.Option(
        None, "--threads", help="Thread contexts per core (1 to 64). Default: the architecture's (4)."
    ),
    scheduler: Optional[Scheduler] = typer.Option(
        None,
        "--scheduler",
        help="round-robin (fixed thread slots; waiters spin; default) or lock-aware (a thread whose lock request fails "
        "is descheduled until a lock is released; threads in a hazard give their slot away).",
    ),
    sync: Optional[Sync] = typer.Option(
        None, "--sync", help="Critical sections as locks (default) or as transactions (tm)."
    ),
    mode: Optional[Mode] = typer.Option(
        None,
        "--mode",
        help="run-to-completion (a thread runs a whole packet; default) or pipeline (one stage per thread).",
    ),
    cm: Optional[Cm] = typer.Option(
        None, "--cm", help="Contention manager with --sync tm: cm1, cm2, cm1/2 or cm4 (default)."
    ),
    signature: Optional[Signature] = typer.Option(
        None,
        "--signature",
        help="Conflict detection with --sync tm: perfect, bitsel (default), h3, pbx, lepbx "
        "or trie (trained on another trace).",
    ),
    signature_bits: Optional[int] = typer.Option(
        None, "--signature-bits", help="Signature bits (1 to 1048576). Default: 1024 (64 for the trie)."
    ),
    mutexes: Optional[int] = typer.Option(None, "--mutexes", help="Mutexes of the synchronization unit. Default: 16."),
    unlimited_mutexes: bool = typer.Option(
        False, "--unlimited-mutexes", help="One mutex per lock (no two structures share a mutex)."
    ),
    tx_locks: Optional[str] = typer.Option(
        None,
        "--tx-locks",
        metavar="ID,ID,...",
        help="With --sync tm, only these lock ids are transactions; the others stay locks. Default: all.",
    ),
    criterion: Optional[Criterion] = typer.Option(
        None,
        "--criterion",
        help="zero-drop (no drop over the window; default), confidence90 (90% of --runs runs drop nothing) or "
        "saturation (every thread always has a packet: throughput without arrivals).",
    ),
    window_seconds: Optional[float] = typer.Option(
        None, "--window-seconds", help="Simulated seconds per run (positive). Default: 5, as in the thesis."
    ),
    runs: Optional[int] = typer.Option(None, "--runs", help="Runs per rate for confidence90 (1 to 1000). Default: 10."),
    tolerance: Optional[float] = typer.Option(
        None, "--tolerance", help="Stop the search when the rate bracket is narrower than this fraction. Default: 0.01."
    ),
    seed: Optional[int] = typer.Option(
        None, "--seed", help="Seed of the hazard model and the first packet. Default: 1."
    ),
    packets: Optional[int] = typer.Option(
        None, "--packets", help="Packets in the pool the threads cycle through (1 to 1,000,000). Default: 2,000."
    ),
    trace: Optional[str] = typer.Option(None, "--trace", help="pcap/pcapng input instead of synthetic traffic."),
    traffic_seed: Optional[int] = typer.Option(
        None, "--traffic-seed", help="Seed of the synthetic traffic. Default: 1."
    ),
    packet_bytes: Optional[int] = typer.Option(
        None, "--packet-bytes", help="Frame size of echo's packets (64 to 9000). Default: 64."
    ),
    iter_non_tm: Optional[int] = typer.Option(
        None, "--iter-non-tm", help="parametric: work() calls outside the critical section. Default: 4."
    ),
    iter_tm: Optional[int] = typer.Option(
        None, "--iter-tm", help="parametric: work() calls inside the critical section. Default: 4."
    ),
    access_range: Optional[int] = typer.Option(
        None, "--range", help="parametric: locations the critical access picks from. Default: 1024."
    ),
    slow_path_policy: Optional[SlowPathPolicy] = typer.Option(
        None,
        "--slow-path-policy",
        help="Where slow-path work (ARPResponder, ICMPError and --slow-path elements) runs: single (the packet's own "
        "thread, after an interrupt), fixed (one dedicated thread context, the last) or floating (any thread looking "
        "for work, after a role switch). Default: no slow-path handling.",
    ),
    slow_path: Optional[str] = typer.Option(
        None, "--slow-path", metavar="NAME,...", help="More slow-path elements, by name or class, separated by commas."
    ),
    slow_interrupt_instructions: Optional[int] = typer.Option(
        None, "--slow-interrupt-instructions", help="single: instructions per slow-path run for the interrupt. Default: 600."
    ),
    slow_role_switch_instructions: Optional[int] = typer.Option(
        None,
        "--slow-role-switch-instructions",
        help="floating: instructions per slow-path run for the role switch. Default: 140.",
    ),
    slow_message_instructions: Optional[int] = typer.Option(
        None,
        "--slow-message-instructions",
        help="fixed: instructions of each handoff to and from the dedicated thread. Default: 120.",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print one JSON document (with the settings used) instead of a table."
    ),
) -> None:
    """Maximum sustainable packet rate of APP when every hardware thread runs whole packets
    (NetThreads), with locks or transactional memory (NetTM)."""
    ids = None
    if tx_locks is not None:
        try:
            ids = [int(x) for x in tx_locks.split(",") if x.strip()]
        except ValueError:
            raise PktflowError(f"--tx-locks must be lock ids separated by commas, got '{tx_locks}'") from None
    with _ui.progress("rtc", "rates") as prog:

        def progress(done: int, total: int) -> None:
            prog.update(done, total, "tested rates")

        r = _ui.keep_partial(
            rtc.run,
            app_name,
            arch=arch,
            arch_set=arch_set,
            cores=cores,
            threads=threads,
            scheduler=_v(scheduler),
            sync=_v(sync),
            mode=_v(mode),
            cm=_v(cm),
            signature=_v(signature),
            signature_bits=signature_bits,
            mutexes=mutexes,
            unlimited_mutexes=True if unlimited_mutexes else None,
            tx_locks=ids,
            criterion=_v(criterion),
            window_seconds=window_seconds,
            runs=runs,
            tolerance=tolerance,
            seed=seed,
            packets=packets,
            trace=trace,
            traffic_seed=traffic_seed,
            packet_bytes=packet_bytes,
            parametric={"iter_non_tm": iter_non_tm, "iter_tm": iter_tm, "range": access_range},
            slow_path_policy=_v(slow_path_policy),
            slow_path=slow_path,
            slow_interrupt_instructions=slow_interrupt_instructions,
            slow_role_switch_instructions=slow_role_switch_instructions,
            slow_message_instructions=slow_message_instructions,
            progress=progress,
        )
    if as_json:
        emit_json(r)
        if r.get("interrupted"):
            raise _ui.Interrupted()
        return
    e = r["settings"]["engine"]
    console.print(
        f"[bold]{escape(r['app'])}[/bold] on {e['cores']} core(s) x {e['threads_per_core']} threads at "
        f"{e['clock_mhz']:g} MHz, {e['scheduler']}, {e['sync']}, {e['mode']} ({r['criterion']})"
    )
    lo, hi = r["bracket"]
    console.print(
        f"maximum rate {r['packets_per_second'] / 1e3:,.1f} kpps = {r['gbps']:.3f} Gb/s "
        f"(bracket {lo / 1e3:,.1f} to {hi / 1e3:,.1f} kpps; {r['mean_packet_bytes']:.0f}-byte packets, "
        f"{r['mean_instructions_per_packet']:.0f} instructions each)"
    )
    t = Table(title="issue slots")
    for col in ("busy", "no packet", "locked", "squashed", "hazard bubble", "other"):
        t.add_column(col, justify="right")
    b = r["breakdown"]
    t.add_row(*(f"{100 * b[k]:.1f}%" for k in ("busy", "no_packet", "locked", "squashed", "hazard_bubble", "other")))
    console.print(t)
    if e["sync"] == "tm":
        console.print(
            f"commits {r['commits_per_second']:,.0f}/s, aborts per transaction {r['aborts_per_transaction']:.3f}, "
            f"committed without abort {100 * r['commit_without_abort']:.1f}%"
        )
    sp = r.get("slow_path")
    if sp:
        console.print(
            f"slow path ({e['slow_path']['policy']}): {sp['runs_per_100_packets']:.1f} runs per 100 packets, "
            f"{100 * sp['instruction_share']:.1f}% of the instructions"
        )
    b = r.get("bottleneck")
    console.print(f"bottleneck: {escape(b['sentence'] if b else 'no packet completed in the window')}")
    if r.get("interrupted"):
        raise _ui.Interrupted()


@interruptible
def conflicts_cmd(
    app_name: str = typer.Argument(..., metavar="APP", help=_APP_HELP),
    window: Optional[str] = typer.Option(
        None, "--window", metavar="LO:HI", help="Window sizes in packets, 2 or more (e.g. 2:16 or 8). Default: 2:16."
    ),
    packets: Optional[int] = typer.Option(None, "--packets", help="Packets traced (1 to 1,000,000). Default: 2,000."),
    trace: Optional[str] = typer.Option(None, "--trace", help="pcap/pcapng input instead of synthetic traffic."),
    traffic_seed: Optional[int] = typer.Option(
        None, "--traffic-seed", help="Seed of the synthetic traffic. Default: 1."
    ),
    include_lock_words: bool = typer.Option(
        False,
        "--include-lock-words",
        help="Also count the applications' software lock words as shared locations. Default: data only.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of a table."),
) -> None:
    """Fraction of packets whose processing conflicts with another packet's within windows of
    consecutive packets (a write set meets a read or write set), from the traces alone."""
    r = rtc.conflicts(
        app_name,
        window=window,
        packets=packets,
        trace=trace,
        traffic_seed=traffic_seed,
        include_lock_words=True if include_lock_words else None,
    )
    if as_json:
        emit_json(r)
        return
    t = Table(
        title=f"{r['app']}: conflicting packets ({r['packets']} packets, "
        f"{r['packets_with_shared_state']} touch shared state)"
    )
    for col in ("window", "packets", "conflicting", "fraction"):
        t.add_column(col, justify="right")
    for p in r["windows"]:
        t.add_row(str(p["window"]), str(p["packets"]), str(p["conflicting"]), f"{100 * p['fraction']:.1f}%")
    console.print(t)
    if r["conflicting_objects"]:
        w = r["windows"][0]["window"]
        top = ", ".join(f"{escape(o['object'])} ({o['pairs']})" for o in r["conflicting_objects"][:5])
        console.print(f"state shared by conflicting pairs (window {w}): {top}")


def register(app: typer.Typer) -> None:
    """Add the ``rtc`` and ``conflicts`` commands to the main ``pktflow`` app."""
    app.command("rtc")(rtc_cmd)
    app.command("conflicts")(conflicts_cmd)
