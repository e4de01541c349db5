"""pktflow's NoC simulator with its own conventions and with BookSim 2's (``--compat booksim``),
on the configurations of experiments/booksim/*.cfg: 4x4 and 8x8 meshes, 4 VCs x 8 flits,
uniform / transpose / bit-complement traffic, dimension-order and minimal adaptive routing,
1- and 5-flit packets.

For each configuration it sweeps the offered load, runs pktflow both ways and writes one CSV row
per point (latency and accepted throughput, default vs compat) plus, per configuration, the knee:
the largest offered load below the first saturated compat point. It also writes ``booksim_commands.sh``:
the BookSim 2 command for every compat point (BookSim's injection_rate is in packets, so
R = F / packet_size for pktflow's flits F), so whoever has BookSim can produce the reference
column and check the 5% agreement (docs/noc.md).

Usage:  python experiments/noc_booksim_compat.py [--quick] [--out out/experiments/noc_booksim]
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

from pktflow import noc

HERE = Path(__file__).resolve().parent / "booksim"


def rates_for(k: int, traffic: str, quick: bool) -> list[float]:
    """Offered loads (flits/node/cycle) up to past the XY capacity bound of the pattern."""
    top = {"uniform": 4.0 / k, "transpose": 2.0 / k, "bitcomp": 2.0 / k}[traffic] * 1.15
    n = 5 if quick else 10
    return [round(min(1.0, top * (i + 1) / n), 4) for i in range(n)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 loads per configuration instead of 10")
    ap.add_argument("--out", type=Path, default=Path("out/experiments/noc_booksim"))
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    rows, cmds, knees = [], ["#!/bin/sh", "# BookSim 2 runs matching pktflow's --compat booksim points"], []
    for cfg in sorted(HERE.glob("*.cfg")):
        m = re.match(r"mesh(\d+)_(\w+?)_(dor|adapt)_p(\d+)\.cfg", cfg.name)
        if not m:
            continue
        k, traffic, routing, ps = int(m.group(1)), m.group(2), m.group(3), int(m.group(4))
        rates = rates_for(k, traffic, a.quick)
        compat = noc.sweep(config=str(cfg), rates=rates)
        own = noc.sweep(
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
        knee, past = None, False
        for pc, po in zip(compat["points"], own["points"]):
            rows.append(
                {
                    "config": cfg.name,
                    "rate_flits": pc["requested_rate"],
                    "booksim_injection_rate_packets": round(pc["requested_rate"] / ps, 6),
                    "pktflow_latency": po["latency"],
                    "pktflow_accepted": po["accepted"],
                    "pktflow_saturated": po["saturated"],
                    "compat_latency": pc["latency"],
                    "compat_accepted": pc["accepted"],
                    "compat_saturated": pc["saturated"],
                    "compat_converged": (pc.get("convergence") or {}).get("converged"),
                    "booksim_latency": "",
                }
            )
            cmds.append(f"booksim {cfg.name} injection_rate={pc['requested_rate'] / ps:.6g}")
            past = past or pc["saturated"]
            if not past:
                knee = pc["offered"]
        knees.append((cfg.name, knee))
        print(f"{cfg.name}: knee (compat) {knee}", file=sys.stderr)
    with open(a.out / "points.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (a.out / "booksim_commands.sh").write_text("\n".join(cmds) + "\n")
    with open(a.out / "knees.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["config", "compat_knee_offered_flits"])
        w.writerows(knees)
    print(f"wrote {a.out}/points.csv, knees.csv, booksim_commands.sh")
    return 0


if __name__ == "__main__":
    sys.exit(main())
