"""pktflow's NoC simulator with its own conventions and with BookSim 2's (``--compat booksim``),
on the configurations of experiments/booksim/*.cfg: 4x4 and 8x8 meshes, 4 VCs x 8 flits,
uniform / transpose / bit-complement traffic, dimension-order and minimal adaptive routing,
1- and 5-flit packets; and, with ``--booksim PATH``, BookSim 2 itself on the same points.

For each configuration it sweeps the offered load, runs pktflow both ways and writes one CSV row
per point (latency and accepted throughput, default vs compat) plus, per configuration, the knee:
the largest offered load below the first saturated point. It also writes ``booksim_commands.sh``:
the BookSim 2 command for every compat point (BookSim's injection_rate is in packets, so
R = F / packet_size for pktflow's flits F).

With ``--booksim PATH`` it runs ``PATH FILE injection_rate=R`` for every point (a pool of
``--jobs`` processes, under ``nice``), reads BookSim's overall "Packet latency average" and
"Accepted flit rate average" (none when BookSim declared the run unstable), fills
``booksim_latency``, the relative difference of compat vs BookSim and the BookSim knee, and
writes ``summary.md`` (one row per configuration: the loads below both knees, latency both
ways with the relative error, the knees). Both knees use the same saturation rule: unstable
(mean latency above ``latency_thres``), a mean latency above 3 x the pattern's zero-load
latency, or accepted throughput below 95% of the offered load. ``--refine K`` adds K loads
evenly inside each configuration's saturating interval (from the lower of the two last
unsaturated loads to the higher of the two first saturated ones) and runs them all again, so
the knees are resolved more finely than the base grid.

``--seeds N`` runs every point N times in each simulator (pktflow's seeds 1..N, BookSim's
0..N-1) and averages the latencies of the runs that were not unstable; a point is saturated when
more than half of its runs are. docs/noc.md ("Agreement with BookSim") has the measured table.

Usage:  python experiments/noc_booksim_compat.py [--quick] [--booksim PATH] [--seeds N]
            [--refine K] [--jobs J] [--only SUBSTR] [--no-pktflow-default]
            [--out out/experiments/noc_booksim]
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pktflow import noc

HERE = Path(__file__).resolve().parent / "booksim"

# Same rules as pktflow's own saturation verdict (crates/noc/src/sim/synthetic.rs:
# SATURATION_LATENCY_FACTOR, SATURATION_THROUGHPUT_TOLERANCE).
LATENCY_FACTOR = 3.0
THROUGHPUT_TOLERANCE = 0.05


def rates_for(k: int, traffic: str, quick: bool) -> list[float]:
    """Offered loads (flits/node/cycle) up to past the XY capacity bound of the pattern."""
    top = {"uniform": 4.0 / k, "transpose": 2.0 / k, "bitcomp": 2.0 / k}[traffic] * 1.15
    n = 5 if quick else 10
    return [round(min(1.0, top * (i + 1) / n), 4) for i in range(n)]


_NUM = r"([-+0-9.eE]+|nan|-nan|inf)"


def parse_booksim(text: str) -> dict:
    """BookSim 2's verdict on one run: the overall packet latency and accepted flit rate, or
    unstable (it prints "Simulation unstable" and no overall statistics)."""
    unstable = "Simulation unstable" in text
    overall = text.split("====== Overall Traffic Statistics ======", 1)
    lat = acc = None
    if len(overall) == 2 and not unstable:
        m = re.search(r"Packet latency average = " + _NUM, overall[1])
        a = re.search(r"Accepted flit rate average = " + _NUM, overall[1])
        if m is None or a is None:
            raise ValueError("BookSim output has no overall packet latency / accepted flit rate")
        lat, acc = float(m.group(1)), float(a.group(1))
    elif not unstable:
        raise ValueError("BookSim output has neither overall statistics nor an unstable verdict")
    return {"latency": lat, "accepted": acc, "unstable": unstable}


def run_booksim(exe: str, cfg: Path, rate_packets: float, seed: int = 0) -> dict:
    # BookSim's parser reads "1" as an integer and refuses it for a float key: always a point
    cmd = ["nice", "-n", "10", exe, str(cfg), f"injection_rate={booksim_rate(rate_packets)}", f"seed={seed}"]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    # BookSim exits 255 (-1) after a stable run and 0 after an unstable one
    try:
        return parse_booksim(p.stdout)
    except ValueError as e:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {e}; {p.stderr.strip()[:200]}") from None


def booksim_rate(x: float) -> str:
    """An injection rate BookSim's configuration parser reads as a number with a fraction."""
    s = f"{x:.6f}".rstrip("0")
    return s + "0" if s.endswith(".") else s


def saturated(b: dict, offered: float, zero_load: float) -> bool:
    """The saturation rule applied to both simulators: unstable (mean latency above
    latency_thres), mean latency above 3 x zero-load, or accepted below 95% of offered."""
    if b["unstable"] or b["latency"] is None:
        return True
    if b["latency"] > LATENCY_FACTOR * zero_load:
        return True
    return b["accepted"] < (1.0 - THROUGHPUT_TOLERANCE) * offered


def knee(points: list[tuple[float, bool]]) -> float | None:
    """The largest load below the first saturated one (points sorted by load)."""
    best = None
    for load, sat in sorted(points):
        if sat:
            break
        best = load
    return best


def first_saturated(points: list[tuple[float, bool]]) -> float | None:
    for load, sat in sorted(points):
        if sat:
            return load
    return None


def rel(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return (a - b) / b


def parse_cfg_name(name: str):
    m = re.match(r"mesh(\d+)_(\w+?)_(dor|adapt)_p(\d+)\.cfg", name)
    if not m:
        return None
    return int(m.group(1)), m.group(2), m.group(3), int(m.group(4))


def mean(xs: list) -> float | None:
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def run_config(
    cfg: Path, rates: list[float], booksim: str | None, jobs: int, own: bool, seeds: int
) -> list[dict]:
    """Both simulators on every load of ``rates``, ``seeds`` runs each (pktflow's seed s + 1,
    BookSim's seed s); latencies are means over the runs that were not unstable, a point is
    saturated when more than half of its runs are (by ``saturated``)."""
    k, traffic, routing, ps = parse_cfg_name(cfg.name)
    rates = sorted(set(rates))
    compat = [noc.sweep(config=str(cfg), rates=rates, seed=s + 1) for s in range(seeds)]
    mine = None
    if own:
        mine = noc.sweep(
            mesh=f"{k}x{k}",
            traffic="bit_complement" if traffic == "bitcomp" else traffic,
            routing="dor" if routing == "dor" else "adaptive",
            vcs=4,
            buffer=8,
            packet_flits=ps,
            rates=rates,
            warmup=10_000,
            measure=20_000,
        )
    bs = None
    if booksim:
        jobs_list = [(r, s) for r in rates for s in range(seeds)]
        with ThreadPoolExecutor(max_workers=jobs) as ex:
            out = list(ex.map(lambda rs: run_booksim(booksim, cfg, rs[0] / ps, rs[1]), jobs_list))
        bs = {key: b for key, b in zip(jobs_list, out)}
    rows = []
    for i, rate in enumerate(rates):
        pcs = [c["points"][i] for c in compat]
        pc = pcs[0]
        po = mine["points"][i] if mine else {}
        offered, zl = pc["offered_rate_expected"], pc["zero_load_latency"]
        c_common = [
            saturated(
                {
                    "unstable": bool((p.get("convergence") or {}).get("unstable")),
                    "latency": p["latency"],
                    "accepted": p["accepted"],
                },
                offered,
                zl,
            )
            for p in pcs
        ]
        c_lat = mean([p["latency"] for p in pcs if not (p.get("convergence") or {}).get("unstable")])
        row = {
            "config": cfg.name,
            "rate_flits": pc["requested_rate"],
            "booksim_injection_rate_packets": round(pc["requested_rate"] / ps, 6),
            "seeds": seeds,
            "pktflow_latency": po.get("latency"),
            "pktflow_accepted": po.get("accepted"),
            "pktflow_saturated": po.get("saturated"),
            "compat_latency": c_lat,
            "compat_latency_min": min((p["latency"] for p in pcs if p["latency"] is not None), default=None),
            "compat_latency_max": max((p["latency"] for p in pcs if p["latency"] is not None), default=None),
            "compat_accepted": mean([p["accepted"] for p in pcs]),
            "compat_saturated_pktflow_rule": sum(bool(p["saturated"]) for p in pcs) * 2 > seeds,
            "compat_unstable": sum(bool((p.get("convergence") or {}).get("unstable")) for p in pcs),
            "compat_saturated": sum(c_common) * 2 > seeds,
            "zero_load_latency": zl,
            "booksim_latency": "",
            "booksim_latency_min": "",
            "booksim_latency_max": "",
            "booksim_accepted": "",
            "booksim_unstable": "",
            "booksim_saturated": "",
            "compat_vs_booksim": "",
        }
        if bs is not None:
            bb = [bs[(rate, s)] for s in range(seeds)]
            b_sat = [saturated(b, offered, zl) for b in bb]
            b_lats = [b["latency"] for b in bb if b["latency"] is not None]
            b_lat = mean(b_lats)
            d = rel(c_lat, b_lat)
            row.update(
                booksim_latency=b_lat,
                booksim_latency_min=min(b_lats, default=None),
                booksim_latency_max=max(b_lats, default=None),
                booksim_accepted=mean([b["accepted"] for b in bb]),
                booksim_unstable=sum(b["unstable"] for b in bb),
                booksim_saturated=sum(b_sat) * 2 > seeds,
                compat_vs_booksim="" if d is None else round(d, 4),
            )
        rows.append(row)
    return rows


def summarize(rows: list[dict], with_booksim: bool) -> tuple[list[tuple], list[str]]:
    """Knees per configuration and, with BookSim, one markdown row per configuration: every
    load up to the lower of the two knees with compat and BookSim latency and their relative
    error, the worst error strictly below that knee, the error at it, and the knees."""
    by_cfg: dict[str, list[dict]] = {}
    for r in rows:
        by_cfg.setdefault(r["config"], []).append(r)
    knees, md = [], []
    if with_booksim:
        md.append(
            "| configuration | load / compat / BookSim (min-max over seeds) / error, loads up to the lower knee | worst below the knee | at the knee load | knee compat | knee BookSim | knee error | within 5% |"
        )
        md.append("|---|---|---|---|---|---|---|---|")
    for name, rs in sorted(by_cfg.items()):
        rs.sort(key=lambda r: r["rate_flits"])
        kc = knee([(r["rate_flits"], bool(r["compat_saturated"])) for r in rs])
        ko = None
        if rs[0]["pktflow_saturated"] is not None:
            ko = knee([(r["rate_flits"], bool(r["pktflow_saturated"])) for r in rs])
        kb = None
        if with_booksim:
            kb = knee([(r["rate_flits"], bool(r["booksim_saturated"])) for r in rs])
        knees.append((name, ko, kc, kb, rel(kc, kb) if with_booksim else None))
        if not with_booksim:
            continue
        top = min(kc, kb) if (kc is not None and kb is not None) else None
        cells, worst, at_knee = [], 0.0, None
        for r in rs:
            if top is None or r["rate_flits"] > top or r["compat_vs_booksim"] == "":
                continue
            e = float(r["compat_vs_booksim"])
            if r["rate_flits"] < top:
                worst = max(worst, abs(e))
            else:
                at_knee = e
            spread = ""
            if r["seeds"] > 1:
                spread = f" ({r['booksim_latency_min']:.1f}-{r['booksim_latency_max']:.1f})"
            cells.append(
                f"{r['rate_flits']:g} / {r['compat_latency']:.1f} / {r['booksim_latency']:.1f}{spread} / {100 * e:+.1f}%"
            )
        ke = rel(kc, kb)
        ok = bool(cells) and worst <= 0.05 and ke is not None and abs(ke) <= 0.05
        md.append(
            f"| {name.removesuffix('.cfg')} | {'; '.join(cells) or '-'} | {100 * worst:.1f}% | "
            f"{'-' if at_knee is None else f'{100 * at_knee:+.1f}%'} | {kc} | {kb} | "
            f"{'-' if ke is None else f'{100 * ke:+.1f}%'} | {'yes' if ok else 'no'} |"
        )
    return knees, md


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 loads per configuration instead of 10")
    ap.add_argument("--out", type=Path, default=Path("out/experiments/noc_booksim"))
    ap.add_argument("--booksim", metavar="PATH", help="BookSim 2 executable to run on every point")
    ap.add_argument("--jobs", type=int, default=2, help="BookSim processes at once (default 2)")
    ap.add_argument("--refine", type=int, default=0, metavar="K", help="extra loads inside each saturating interval")
    ap.add_argument("--only", default="", metavar="SUBSTR", help="only configurations whose file name contains this")
    ap.add_argument("--no-pktflow-default", action="store_true", help="skip the runs with pktflow's own conventions")
    ap.add_argument("--seeds", type=int, default=1, help="runs per point and simulator, latencies averaged (default 1)")
    a = ap.parse_args(argv)
    if a.booksim and not os.access(a.booksim, os.X_OK):
        print(f"error: --booksim {a.booksim}: not an executable file", file=sys.stderr)
        return 2
    if a.jobs < 1 or a.refine < 0 or a.seeds < 1:
        print("error: --jobs and --seeds must be at least 1 and --refine at least 0", file=sys.stderr)
        return 2
    a.out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    cfgs = [c for c in sorted(HERE.glob("*.cfg")) if parse_cfg_name(c.name) and a.only in c.name]
    for cfg in cfgs:
        k, traffic, _, _ = parse_cfg_name(cfg.name)
        rates = rates_for(k, traffic, a.quick)
        rs = run_config(cfg, rates, a.booksim, a.jobs, not a.no_pktflow_default, a.seeds)
        if a.refine:
            sats = [("compat_saturated", [(r["rate_flits"], bool(r["compat_saturated"])) for r in rs])]
            if a.booksim:
                sats.append(("booksim_saturated", [(r["rate_flits"], bool(r["booksim_saturated"])) for r in rs]))
            lows = [knee(p) for _, p in sats]
            highs = [first_saturated(p) for _, p in sats]
            lo = min([x for x in lows if x is not None], default=None)
            hi = max([x for x in highs if x is not None], default=None)
            if lo is not None and hi is not None and hi > lo:
                extra = [round(lo + (hi - lo) * (i + 1) / (a.refine + 1), 5) for i in range(a.refine)]
                extra = [x for x in extra if x not in rates]
                if extra:
                    rs += run_config(cfg, extra, a.booksim, a.jobs, not a.no_pktflow_default, a.seeds)
        rs.sort(key=lambda r: r["rate_flits"])
        rows += rs
        print(f"{cfg.name}: {len(rs)} points", file=sys.stderr)
    if not rows:
        print("error: no configuration matched", file=sys.stderr)
        return 2
    with open(a.out / "points.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    cmds = ["#!/bin/sh", "# BookSim 2 runs matching pktflow's --compat booksim points"]
    cmds += [f"booksim {r['config']} injection_rate={booksim_rate(r['booksim_injection_rate_packets'])}" for r in rows]
    (a.out / "booksim_commands.sh").write_text("\n".join(cmds) + "\n")
    knees, md = summarize(rows, bool(a.booksim))
    with open(a.out / "knees.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["config", "pktflow_knee_offered_flits", "compat_knee_offered_flits", "booksim_knee_offered_flits", "compat_vs_booksim_knee"])
        for name, ko, kc, kb, ke in knees:
            w.writerow([name, ko, kc, kb, "" if ke is None else round(ke, 4)])
            print(f"{name}: knee pktflow {ko} compat {kc} booksim {kb}", file=sys.stderr)
    if md:
        (a.out / "summary.md").write_text("\n".join(md) + "\n")
        print("\n".join(md))
    print(f"wrote {a.out}/points.csv, knees.csv, booksim_commands.sh" + (", summary.md" if md else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
