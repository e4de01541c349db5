"""Appendix B of the NetThreads thesis (docs/sources.md): the parametric benchmark on 2, 4 and 8
four-threaded cores, transactions (TM) against locks (NT), as the share of critical work grows
(Figure B.2), at low and high conflict intensity (range 1024 and 8, Figure B.3).

The thesis's figures to compare with (appendix B): with mostly critical code TM2P is 4.05x NT2P
and 8 TM cores 8.0x with 32 -> 14.6 active contexts; at high conflict intensity the 8-core
speedup drops to 5.1, aborts per transaction rise from 12.7 to 14.9 and active contexts fall to
8.0. Each point is one saturated run (every thread always has an iteration to run) with the
lock-aware scheduler and CM4, the thesis's default. Run:

    python experiments/netthreads_appendix_b.py [--window-seconds 0.01] [--json out/appb.json] [--workers N]

The points run on every core (--workers N: N processes; the output is the same for any N).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pktflow import rtc
from pktflow.sweep.pool import map_ordered

RATIOS = ((8, 1), (4, 2), (2, 4), (1, 8), (1, 16))  # (ITER_NON_TM, ITER_TM)


def point(cores: int, sync: str, non_tm: int, tm: int, rng: int, a: argparse.Namespace) -> dict:
    r = rtc.run(
        "parametric",
        cores=cores,
        sync=sync,
        scheduler="lock-aware",
        criterion="saturation",
        window_seconds=a.window_seconds,
        packets=a.packets,
        parametric={"iter_non_tm": non_tm, "iter_tm": tm, "range": rng},
    )
    return {
        "cores": cores,
        "sync": sync,
        "iter_non_tm": non_tm,
        "iter_tm": tm,
        "range": rng,
        "iterations_per_second": r["packets_per_second"],
        "active_contexts": r["report"]["mean_active_contexts"],
        "aborts_per_transaction": r["aborts_per_transaction"],
        "ipc_per_core": r["ipc_per_core"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--window-seconds", type=float, default=0.01)
    ap.add_argument("--packets", type=int, default=2000)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--workers", type=int, default=None, help="points at once, one process each (default: every core)")
    a = ap.parse_args()
    if a.workers is not None and a.workers < 1:
        ap.error("--workers must be at least 1")
    rows = []
    print("cores range ITER_TM/ITER_NON_TM  NT it/s  TM it/s  speedup  active NT  active TM  aborts/tx")
    grid = [(cores, non_tm, tm, rng) for rng in (1024, 8) for cores in (2, 4, 8) for non_tm, tm in RATIOS]
    # Every point is independent: the sweep machinery's process pool, results in grid order.
    args = [(cores, sync, non_tm, tm, rng, a) for cores, non_tm, tm, rng in grid for sync in ("locks", "tm")]
    res = map_ordered(point, args, workers=a.workers, what="appendix B", label=lambda x: f"{x[0]} cores {x[1]}")
    for k, (cores, non_tm, tm, rng) in enumerate(grid):
        nt, t = res[2 * k], res[2 * k + 1]
        rows += [nt, t]
        print(
            f"{cores:5} {rng:5} {tm / non_tm:19.3f} {nt['iterations_per_second']:8.0f} "
            f"{t['iterations_per_second']:8.0f} "
            f"{t['iterations_per_second'] / nt['iterations_per_second']:8.2f} "
            f"{nt['active_contexts']:10.2f} {t['active_contexts']:10.2f} {t['aborts_per_transaction']:10.3f}"
        )
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
