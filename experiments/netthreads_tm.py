"""Chapter 8 of the NetThreads thesis (docs/sources.md) on the thesis's applications as pktflow
builds them (udhcp, classifier, nat-nt, intruder, intruder2; docs/thesis-apps.md): NetTM
transactions against locks with each contention manager (CM1, CM2, CM1/2, CM4), the share of
transactions that commit without an abort, the per-transaction statistics of Table 8.1 and the
conflicting-packet fractions of Figure 8.1, and locks with one mutex per lock (no aliasing on
the 16 mutexes) against the preset's 16. Figure 8.1's fractions count data conflicts (the
applications' lock words left out, as in the thesis's NetTM programs) and, beside them, with
the lock words.

Each rate is the zero-drop maximum sustainable rate (the thesis's chapter 6-7 criterion; the
chapter 8 one, 90% of repeated runs, costs ten runs per probe) over a window shortened from the
thesis's 5 s so that the whole table takes minutes: the window of an application is the longest
of ``--window-seconds`` and the time ``--min-packets`` packets take at its saturated rate
(measured first, locks, one saturated run of 50 ms), so every run processes at least that many
packets. A rate is sustainable when no packet is dropped and the packets in flight at the end
are at most 2% of the arrivals (the harness's keep-up test): a machine slower than the offered
rate fills its 10 input slots and MAC buffer within a few hundred packets and drops, so the
rate found over a window of a thousand packets or more is the one a longer window finds (nat on
the netthreads preset: the same rate over 0.02 s and 5 s, docs/rtc.md). Run:

    python experiments/netthreads_tm.py [--apps udhcp,classifier,nat-nt,intruder,intruder2]
        [--scheduler round-robin|lock-aware] [--min-packets 1000] [--window-seconds 0.01]
        [--json out/netthreads_tm.json] [--markdown out/netthreads_tm.md]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pktflow import _ui, rtc

APPS = ("udhcp", "classifier", "nat-nt", "intruder", "intruder2")
CMS = ("cm1", "cm2", "cm1/2", "cm4")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument("--scheduler", default="round-robin", choices=[s.value for s in rtc.Scheduler])
    ap.add_argument("--packets", type=int, default=2000, help="Packets in each application's pool.")
    ap.add_argument("--min-packets", type=int, default=1000, help="Packets every run processes at least.")
    ap.add_argument("--window-seconds", type=float, default=0.01, help="Shortest window, simulated seconds.")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", type=Path)
    a = ap.parse_args(argv)
    js_path = _ui.output_path(a.json, "--json") if a.json else None
    md_path = _ui.output_path(a.markdown, "--markdown") if a.markdown else None
    apps = [x for x in a.apps.split(",") if x]
    rows = []
    with _ui.progress("netthreads_tm", "searches", len(apps) * (3 + len(CMS))) as prog:
        done = 0
        for app in apps:
            common = dict(packets=a.packets, scheduler=a.scheduler)
            sat = rtc.run(app, criterion="saturation", window_seconds=0.05, **common)
            if sat["packets_per_second"] <= 0:  # not one packet in 50 ms: a longer look
                sat = rtc.run(app, criterion="saturation", window_seconds=1.0, **common)
            window = max(a.window_seconds, a.min_packets / max(sat["packets_per_second"], 1.0))
            done += 1
            prog.update(done, label=f"{app}: locks")
            locks = rtc.run(app, window_seconds=window, **common)
            done += 1
            prog.update(done, label=f"{app}: locks, unlimited mutexes")
            unl = rtc.run(app, window_seconds=window, unlimited_mutexes=True, **common)
            done += 1
            conf = rtc.conflicts(app, packets=a.packets, window="2:16")
            conf_lw = rtc.conflicts(app, packets=a.packets, window="2:16", include_lock_words=True)
            row = {
                "app": app,
                "window_seconds": window,
                "locks_pps": locks["packets_per_second"],
                "locks_bound": (locks["bottleneck"] or {}).get("what"),
                "unlimited_mutexes_pps": unl["packets_per_second"],
                "critical_sections": locks["critical_sections"],
                "conflicting_2": conf["windows"][0]["fraction"],
                "conflicting_16": conf["windows"][-1]["fraction"],
                "conflicting_objects": conf["conflicting_objects"][:3],
                "conflicting_2_with_lock_words": conf_lw["windows"][0]["fraction"],
                "conflicting_16_with_lock_words": conf_lw["windows"][-1]["fraction"],
                "instructions_per_packet": locks["mean_instructions_per_packet"],
                "tm": {},
            }
            for cm in CMS:
                prog.update(done, label=f"{app}: TM {cm}")
                t = rtc.run(app, window_seconds=window, sync="tm", cm=cm, **common)
                done += 1
                row["tm"][cm] = {
                    "pps": t["packets_per_second"],
                    "vs_locks": t["packets_per_second"] / max(locks["packets_per_second"], 1e-9) - 1,
                    "commit_without_abort": t["commit_without_abort"],
                    "aborts_per_transaction": t["aborts_per_transaction"],
                    "bound": (t["bottleneck"] or {}).get("what"),
                    "aborts_by_structure": t["report"]["aborts_by_structure"],
                    "false_conflicts": t["report"]["false_conflicts"],
                    "aborts": t["report"]["aborts"],
                }
            rows.append(row)
    lines = [
        "| app | window (s) | locks (kpps) | unlimited mutexes | " + " | ".join(f"TM {c} (kpps, vs locks)" for c in CMS)
        + " | best | commit without abort (best CM) |",
        "|---|---|---|---|" + "---|" * len(CMS) + "---|---|",
    ]
    for r in rows:
        best = max(CMS, key=lambda c: r["tm"][c]["pps"])
        cells = " | ".join(f"{r['tm'][c]['pps'] / 1e3:.2f} ({100 * r['tm'][c]['vs_locks']:+.0f}%)" for c in CMS)
        lines.append(
            f"| {r['app']} | {r['window_seconds']:.3f} | {r['locks_pps'] / 1e3:.2f} | "
            f"{100 * (r['unlimited_mutexes_pps'] / max(r['locks_pps'], 1e-9) - 1):+.0f}% | {cells} | {best} | "
            f"{100 * r['tm'][best]['commit_without_abort']:.0f}% |"
        )
    lines += [
        "",
        "| app | transactions / packet | loads mean | loads max | stores mean | stores max (shared) | "
        "unique words mean | unique words max | conflicting, window 2 -> 16 (data) | "
        "with lock words |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s = r["critical_sections"]
        lines.append(
            f"| {r['app']} | {s['per_packet']:.2f} | {s['loads_mean']:.0f} | {s['loads_max']} | "
            f"{s['stores_mean']:.0f} | {s['stores_max']} ({s['shared_stores_max']}) | {s['unique_words_mean']:.0f} | "
            f"{s['unique_words_max']} | {100 * r['conflicting_2']:.0f}% -> {100 * r['conflicting_16']:.0f}% | "
            f"{100 * r['conflicting_2_with_lock_words']:.0f}% -> {100 * r['conflicting_16_with_lock_words']:.0f}% |"
        )
    table = "\n".join(lines)
    print(table)
    if md_path:
        with _ui.atomic_write(md_path) as fh:
            fh.write(table + "\n")
    if js_path:
        with _ui.atomic_write(js_path) as fh:
            json.dump({"scheduler": a.scheduler, "packets": a.packets, "min_packets": a.min_packets, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
