"""Where the slow path runs: the protocol-processing paper's Single, Fixed and Floating policies
(Falsafi and Wood; docs/sources.md) for the slow-path elements of the router and the NAT on the
NP simulator, or (``--engine rtc``) on the run-to-completion engine (docs/protoproc.md
section 6).

For each application, slow-path marking (which elements are slow path, so what share of the
packets do slow-path work), PE count and policy: the maximum sustainable rate (the simulator's
bisection, zero-drop criterion and tolerance at their defaults). The table says which policy
wins at each point. The slow-path share is measured (slow-path visits per 100 injected packets,
from one run at a light load) and reported next to the marking.

Run (a few minutes on one core; the searches run on every core, --workers N: N processes, the
output is the same for any N):

    python experiments/slowpath.py [--markdown out/slowpath.md] [--json out/slowpath.json]
        [--packets 400] [--pes 2,4,8] [--replication global|pe|subset|none] [--workers N]
    python experiments/slowpath.py --engine rtc [--cores 1,2,4] [--window-seconds 0.005]

The same searches as experiment files: experiments/slowpath.toml and slowpath_rtc.toml
(docs/sweeps.md).

With ``--engine rtc`` the machine is the ``netthreads`` preset with ``--cores`` cores of 4
threads; the rate is the zero-drop maximum over a window of ``--window-seconds`` (shortened
from the thesis's 5 s so the 54 searches take minutes; the harness's keep-up test makes a
short window strict enough: a machine that falls behind fills its slots within it), and the
slow-path share is the engine's own count: runs of consecutive slow-path visits per 100 packets
of the pool.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

from pktflow import _ui, cli, rtc
from pktflow import npsim as api
from pktflow.sweep.pool import map_ordered

POLICIES = ("single", "fixed", "floating")
# (application, label, extra slow-path elements). ARPResponder and ICMPError are always slow
# path; marking one interface's ARPQuerier (arpq0) or the class makes the forwarded packets of
# that interface (or all of them) do slow-path work too.
MARKINGS = {
    "router": (("ARP replies, ICMP errors", []), ("+ arpq0", ["arpq0"]), ("+ every ARPQuerier", ["ARPQuerier"])),
    "nat": (("ARP replies, ICMP errors", []), ("+ in_arpq", ["in_arpq"]), ("+ every ARPQuerier", ["ARPQuerier"])),
}
DEFAULT_SLOW_CLASSES = ("ARPResponder", "ICMPError")


def element_classes(app: str) -> dict:
    """Element name -> class of a built-in application (``pktflow graph APP --json``)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            cli.main(["graph", app, "--json"])
        except SystemExit as e:
            if e.code not in (0, None):
                raise
    return {e["name"]: e["class"] for e in json.loads(buf.getvalue())["elements"]}


def slow_share(app: str, marked: list, packets: int) -> float:
    """Slow-path visits per 100 injected packets (one run at a light load, no slow-path policy)."""
    classes = element_classes(app)
    slow = {n for n, c in classes.items() if c in DEFAULT_SLOW_CLASSES or n in marked or c in marked}
    r = api.simulate(app, inter_arrival_cycles=20000, pes=4, packets=packets)
    visits = sum(t["instances"] for t in r["tasks"] if t["element"] in slow)
    return 100.0 * visits / max(r["injected"], 1)


def np_point(app: str, marked: list, pes: int, pol: str, packets: int, replication) -> dict:
    """One NP-simulator search: {policy: packets/s} or, when the policy cannot run (fixed on too
    few PEs), {policy: None, policy_error: message}: recorded, not fatal."""
    sim = {"slow_path": {"policy": pol, "elements": marked}}
    try:
        m = api.maxrate(app, pes=pes, packets=packets, sim=sim, replication=replication)
        return {pol: m["packets_per_second"]}
    except Exception as e:
        return {pol: None, pol + "_error": str(e)}


def rtc_point(app: str, marked: list, cores: int, pol: str, packets: int, window_seconds: float) -> tuple:
    """One run-to-completion search: ({policy: packets/s, policy_bound: what}, slow-path share)
    or ({policy: None, policy_error: message}, None)."""
    try:
        r = rtc.run(
            app,
            cores=cores,
            slow_path_policy=pol,
            slow_path=marked or None,
            packets=packets,
            window_seconds=window_seconds,
        )
        out = {pol: r["packets_per_second"], pol + "_bound": (r["bottleneck"] or {}).get("what")}
        return out, r["slow_path"]["runs_per_100_packets"]
    except Exception as e:  # recorded, not fatal
        return {pol: None, pol + "_error": str(e)}, None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", type=Path)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--packets", type=int, default=400)
    ap.add_argument("--pes", default="2,4,8")
    ap.add_argument(
        "--replication",
        choices=api.REPLICATIONS,
        help="Task replication of the mapping the policies rewrite (default: the simulator's, global).",
    )
    ap.add_argument("--engine", choices=("npsim", "rtc"), default="npsim", help="Which timing model runs the policies.")
    ap.add_argument("--cores", default="1,2,4", help="rtc: core counts (4 threads each).")
    ap.add_argument("--window-seconds", type=float, default=0.005, help="rtc: simulated seconds per run.")
    ap.add_argument(
        "--workers", type=int, default=None, help="searches at once, one process each (default: every core)"
    )
    a = ap.parse_args(argv)
    if a.workers is not None and a.workers < 1:
        ap.error("--workers must be at least 1")
    if a.engine == "rtc":
        return main_rtc(a)
    pes_list = [int(x) for x in a.pes.split(",")]
    md_path = _ui.output_path(a.markdown, "--markdown") if a.markdown else None
    js_path = _ui.output_path(a.json, "--json") if a.json else None
    rows = []
    # Every search is independent: the sweep machinery's process pool, results in this order.
    grid = [
        (app, label, marked, pes, pol)
        for app, marks in MARKINGS.items()
        for label, marked in marks
        for pes in pes_list
        for pol in POLICIES
    ]
    args = [(app, marked, pes, pol, a.packets, a.replication) for app, _, marked, pes, pol in grid]
    res = map_ordered(np_point, args, workers=a.workers, what="slowpath", label=lambda x: f"{x[0]} {x[2]} PEs {x[3]}")
    shares = {
        (app, label): slow_share(app, marked, a.packets) for app, marks in MARKINGS.items() for label, marked in marks
    }
    for k in range(0, len(grid), len(POLICIES)):
        app, label, _, pes, _ = grid[k]
        rates = {}
        for r in res[k : k + len(POLICIES)]:
            rates.update(r)
        ok = {p: r for p, r in rates.items() if p in POLICIES and r is not None}
        # Ties: every policy within 1% of the best (the search's own resolution is of that order).
        top = max(ok.values()) if ok else None
        best = " = ".join(p for p in POLICIES if p in ok and ok[p] >= 0.99 * top) if ok else None
        rows.append(
            {
                "app": app,
                "marking": label,
                "slow_visits_per_100": shares[(app, label)],
                "pes": pes,
                **rates,
                "winner": best,
            }
        )
    lines = [
        "| app | slow path | slow visits / 100 packets | PEs | single (Mpps) | fixed (Mpps) | floating (Mpps) | wins |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        f = lambda p, r=r: "n/a" if r.get(p) is None else f"{r[p] / 1e6:.3f}"  # noqa: E731
        lines.append(
            f"| {r['app']} | {r['marking']} | {r['slow_visits_per_100']:.1f} | {r['pes']} | {f('single')} | "
            f"{f('fixed')} | {f('floating')} | {r['winner']} |"
        )
    table = "\n".join(lines)
    print(table)
    if md_path:
        with _ui.atomic_write(md_path) as fh:
            fh.write(table + "\n")
    if js_path:
        with _ui.atomic_write(js_path) as fh:
            json.dump({"packets": a.packets, "replication": a.replication, "rows": rows}, fh, indent=1)
    return 0


def main_rtc(a) -> int:
    """The same table on the run-to-completion engine (cores instead of PEs)."""
    cores_list = [int(x) for x in a.cores.split(",")]
    md_path = _ui.output_path(a.markdown, "--markdown") if a.markdown else None
    js_path = _ui.output_path(a.json, "--json") if a.json else None
    rows = []
    grid = [
        (app, label, marked, cores, pol)
        for app, marks in MARKINGS.items()
        for label, marked in marks
        for cores in cores_list
        for pol in POLICIES
    ]
    args = [(app, marked, cores, pol, a.packets, a.window_seconds) for app, _, marked, cores, pol in grid]
    res = map_ordered(
        rtc_point, args, workers=a.workers, what="slowpath (rtc)", label=lambda x: f"{x[0]} {x[2]} cores {x[3]}"
    )
    share = None
    for k in range(0, len(grid), len(POLICIES)):
        app, label, _, cores, _ = grid[k]
        if k % (len(cores_list) * len(POLICIES)) == 0:
            share = None  # a new marking
        rates = {}
        for r, sh in res[k : k + len(POLICIES)]:
            rates.update(r)
            if sh is not None:
                share = sh  # the share of the marking's last run that succeeded so far
        ok = {p: x for p, x in rates.items() if p in POLICIES and x is not None}
        top = max(ok.values()) if ok else None
        best = " = ".join(p for p in POLICIES if p in ok and ok[p] >= 0.99 * top) if ok else None
        rows.append({"app": app, "marking": label, "slow_runs_per_100": share, "cores": cores, **rates, "winner": best})
    lines = [
        "| app | slow path | slow runs / 100 packets | cores | single (kpps) | fixed (kpps) | floating (kpps) | wins |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        f = lambda p, r=r: "n/a" if r.get(p) is None else f"{r[p] / 1e3:.1f}"  # noqa: E731
        sh = "n/a" if r["slow_runs_per_100"] is None else f"{r['slow_runs_per_100']:.1f}"
        lines.append(
            f"| {r['app']} | {r['marking']} | {sh} | {r['cores']} | {f('single')} | {f('fixed')} | {f('floating')} | "
            f"{r['winner']} |"
        )
    table = "\n".join(lines)
    print(table)
    if md_path:
        with _ui.atomic_write(md_path) as fh:
            fh.write(table + "\n")
    if js_path:
        with _ui.atomic_write(js_path) as fh:
            json.dump(
                {"engine": "rtc", "packets": a.packets, "window_seconds": a.window_seconds, "rows": rows}, fh, indent=1
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
