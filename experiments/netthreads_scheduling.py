"""Chapters 7 and 8 of the NetThreads thesis (docs/sources.md) on pktflow's applications: the
maximum sustainable rate with round-robin (RR) and lock-aware (S) thread scheduling, with locks
and with transactions (NetTM, CM1..CM4), unlimited mutexes, pipeline against run to completion,
and the conflicting-packet fractions of Figure 8.1.

The thesis's figures are for its own applications (UDHCP, Classifier, NAT, Intruder): S1 over RR1
+47% (NAT, simulated), NetTM over locks +4% (NAT, CM1) and +6% (NAT, CM2), unlimited mutexes under
2% for NAT. pktflow's router and nat are Click applications, not the thesis's, so only the
direction of each change is comparable. Run:

    python experiments/netthreads_scheduling.py [--window-seconds 0.05] [--criterion zero-drop] [--workers N]

The runs use every core (--workers N: N processes; the output is the same for any N).
"""

from __future__ import annotations

import argparse

from pktflow import rtc
from pktflow.sweep.pool import map_ordered

CONFIGS = (
    ("RR, locks", dict(scheduler="round-robin")),
    ("S, locks", dict(scheduler="lock-aware")),
    ("S, locks, unlimited mutexes", dict(scheduler="lock-aware", unlimited_mutexes=True)),
    ("S, TM CM1", dict(scheduler="lock-aware", sync="tm", cm="cm1")),
    ("S, TM CM2", dict(scheduler="lock-aware", sync="tm", cm="cm2")),
    ("S, TM CM4", dict(scheduler="lock-aware", sync="tm", cm="cm4")),
    ("S, TM CM4, perfect", dict(scheduler="lock-aware", sync="tm", signature="perfect")),
    ("S, TM CM4, trie", dict(scheduler="lock-aware", sync="tm", signature="trie")),
    ("S, locks, pipeline", dict(scheduler="lock-aware", mode="pipeline")),
)


def one_run(app: str, kw: dict, window_seconds: float, criterion: str, packets: int) -> dict:
    """One maximum-rate search (module-level: the process pool runs it by name)."""
    return rtc.run(app, window_seconds=window_seconds, criterion=criterion, packets=packets, **kw)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", default="router,nat,echo")
    ap.add_argument("--window-seconds", type=float, default=0.05)
    ap.add_argument("--criterion", default="zero-drop", choices=[c.value for c in rtc.Criterion])
    ap.add_argument("--packets", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=None, help="runs at once, one process each (default: every core)")
    a = ap.parse_args()
    if a.workers is not None and a.workers < 1:
        ap.error("--workers must be at least 1")
    apps = a.apps.split(",")
    # Every run is independent: the sweep machinery's process pool, results in this order.
    jobs = [(app, kw, a.window_seconds, a.criterion, a.packets) for app in apps for _, kw in CONFIGS]
    res = map_ordered(one_run, jobs, workers=a.workers, what="scheduling", label=lambda x: x[0])
    for i, app in enumerate(apps):
        c = rtc.conflicts(app, packets=a.packets)
        print(
            f"{app}: conflicting packets, window 2 -> 16: "
            f"{100 * c['windows'][0]['fraction']:.1f}% -> {100 * c['windows'][-1]['fraction']:.1f}%"
        )
        base = None
        for k, (label, _) in enumerate(CONFIGS):
            r = res[i * len(CONFIGS) + k]
            base = base or r["packets_per_second"]
            b = r["breakdown"]
            print(
                f"  {label:30} {r['packets_per_second'] / 1e3:9.1f} kpps "
                f"({100 * (r['packets_per_second'] / base - 1):+6.1f}%)"
                f"  busy {100 * b['busy']:4.1f}%  no packet {100 * b['no_packet']:4.1f}%"
                f"  locked {100 * b['locked']:4.1f}%"
                f"  aborts/tx {r['aborts_per_transaction']:.3f}"
            )

if __name__ == "__main__":
    main()
