"""Appendix A of the NetThreads thesis (docs/sources.md): the false-conflict rate of each
signature hash function (bit selection, H3, PBX, LE-PBX and the application-specific trie)
against the signature size, on the thesis's applications as pktflow builds them
(docs/thesis-apps.md).

Each application's transactions are its critical sections as ``--sync tm`` runs them (the
applications' lock words left out); a transaction runs beside the ``--contexts - 1``
transactions before it (8 contexts: the netthreads preset's 2 cores x 4 threads), and has a
false conflict when its signature conflicts with one of them while its exact read and write sets
conflict with none (appendix A's "false positive rate": false conflicts over all transactions).
The hashes are the engine's own (``pktflow.rtc.signature_study``, crates/rtc/src/study.rs); the
trie is trained on the same application traced with another traffic seed, with the bit budget
of the point. Run:

    python experiments/netthreads_appendix_a.py [--apps classifier,nat-nt,udhcp,intruder,intruder2]
        [--packets 300] [--udhcp-packets 100] [--bits 16,32,...,8192] [--contexts 8]
        [--json out/appendix_a.json] [--csv out/appendix_a.csv]

Progress lines go to stderr (a bar on a terminal, lines otherwise); the table to stdout.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

from pktflow import _ui, rtc

APPS = ("classifier", "nat-nt", "udhcp", "intruder", "intruder2")
HASHES = ("bitsel", "h3", "pbx", "lepbx", "trie")


def _ints(ap: argparse.ArgumentParser, s: str, option: str) -> list[int]:
    try:
        v = [int(x) for x in s.split(",") if x.strip()]
    except ValueError:
        ap.error(f"{option}: expected comma-separated integers, got '{s}'")
    if not v:
        ap.error(f"{option}: give at least one value")
    return v


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument("--hashes", default=",".join(HASHES))
    ap.add_argument("--bits", default=None, help="Signature sizes, comma-separated. Default: the engine's (16 to 8192).")
    ap.add_argument("--packets", type=int, default=300, help="Packets traced per application.")
    ap.add_argument(
        "--udhcp-packets", type=int, default=100, help="Packets traced for udhcp (its transactions read ~8,000 words)."
    )
    ap.add_argument("--contexts", type=int, default=None, help="Concurrent transactions. Default: the engine's (8).")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--csv", type=Path)
    a = ap.parse_args(argv)
    js_path = _ui.output_path(a.json, "--json") if a.json else None
    csv_path = _ui.output_path(a.csv, "--csv") if a.csv else None
    apps = [x for x in a.apps.split(",") if x]
    hashes = [x for x in a.hashes.split(",") if x]
    bits = _ints(ap, a.bits, "--bits") if a.bits else None
    results = []
    t0 = time.monotonic()
    with _ui.progress("appendix_a", "applications", len(apps)) as prog:
        for i, app in enumerate(apps):
            prog.update(i, label=app)
            r = rtc.signature_study(
                app,
                hashes=hashes,
                bits=bits,
                contexts=a.contexts,
                packets=a.udhcp_packets if app == "udhcp" else a.packets,
            )
            results.append(r)
        prog.update(len(apps), label="done")
    elapsed = time.monotonic() - t0
    sizes = sorted({p["bits"] for r in results for p in r["points"]})
    lines = []
    for r in results:
        lines.append(
            f"{r['app']}: {r['transactions']} transactions of {r['packets']} packets, "
            f"{r['read_words_mean']:.1f} words read and {r['write_words_mean']:.1f} written per transaction, "
            f"real conflicts {100 * r['true_conflict_rate']:.1f}%, address entropy {r['entropy_bits']:.1f} bits"
        )
        lines.append("| hash | " + " | ".join(str(b) for b in sizes) + " |")
        lines.append("|---|" + "---|" * len(sizes))
        for h in hashes:
            cells = []
            for b in sizes:
                p = next((p for p in r["points"] if p["hash"] == h and p["bits"] == b), None)
                if p is None:
                    cells.append("")
                else:
                    note = f" ({p['signature_bits']})" if p["signature_bits"] != b else ""
                    cells.append(f"{100 * p['false_conflict_rate']:.1f}%{note}")
            lines.append(f"| {h} | " + " | ".join(cells) + " |")
        lines.append("")
    lines.append(f"(false conflicts over transactions; a trie's actual bits in parentheses when fewer; {elapsed:.0f} s)")
    print("\n".join(lines))
    if js_path:
        with _ui.atomic_write(js_path) as fh:
            json.dump({"elapsed_seconds": elapsed, "results": results}, fh, indent=1)
    if csv_path:
        with _ui.atomic_write(csv_path) as fh:
            w = csv.writer(fh)
            w.writerow(["app", "hash", "bits", "signature_bits", "hash_functions", "false_conflicts",
                        "transactions", "false_conflict_rate", "true_conflict_rate", "entropy_bits"])
            for r in results:
                for p in r["points"]:
                    w.writerow([r["app"], p["hash"], p["bits"], p["signature_bits"], p["hash_functions"],
                                p["false_conflicts"], r["transactions"], p["false_conflict_rate"],
                                r["true_conflict_rate"], r["entropy_bits"]])
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except rtc.PktflowError as e:  # one clear line, exit 2
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2)
