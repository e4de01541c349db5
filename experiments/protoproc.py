"""The protocol-processing paper (Falsafi and Wood; docs/sources.md): Table 2, Figure 3 and the
trends of Figures 4-6, from pktflow's model and simulator (crates/protoproc, docs/protoproc.md).

* Table 2: the remote-miss microbenchmark on the simulator (costs calibrated to it).
* Figure 3: the analytic model's normalized time Tsingle/Tfixed against C and against the
  compute utilization, for several overhead ratios (2 Opp + Oreply) / Lremote and for Table 2's
  parameters; break-even points.
* Model against simulation: the synthetic request/reply workload with the model's own
  parameters, over C.
* Figures 4-6: tomcatv, em3d and gauss on 4 nodes under Single (1 processor), Fixed (2-4) and
  Floating (1-4), one and two threads per compute processor; speedup over Single with one thread.

Run (about 15 seconds):

    python experiments/protoproc.py [--markdown out/protoproc.md] [--json out/protoproc.json]
        [--plot-dir out] [--requests 2000] [--seed 1] [--workers N]

The simulations run on every core (--workers N: N processes; the output is the same for any N).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pktflow import _ui, protoproc
from pktflow.sweep.pool import map_ordered

APPS = ("tomcatv", "em3d", "gauss")
FIGURE = {"tomcatv": 4, "em3d": 5, "gauss": 6}
RATIOS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
SYNTH_C = (10.0, 30.0, 60.0, 113.0, 250.0, 600.0, 2000.0)


def configs():
    yield "single", 1, 1
    yield "single", 1, 2
    for t in (1, 2):
        for p in (2, 3, 4):
            yield "fixed", p, t
        for p in (1, 2, 3, 4):
            yield "floating", p, t


def one_run(app: str, pol: str, p: int, t: int, c, requests: int, seed: int) -> tuple[str, dict]:
    """One simulation and its row (module-level: the process pool runs it by name)."""
    kw = dict(policy=pol, cpus=p, threads=t, seed=seed)
    if c is not None:
        r = protoproc.simulate("synthetic", c_us=c, requests=requests, **kw)
        return "synthetic", {"c_us": c, "policy": pol, "sim_us": r["mean_node_finish_us"],
                             "model_us": r["model"]["time_us"], "difference_pct": r["model"]["difference_pct"],
                             "queue_wait_us": r["mean_queue_wait_us"]}
    r = protoproc.simulate(app, **kw)
    return "apps", {"app": app, "policy": pol, "cpus": p, "threads": t,
                    "time_us": r["execution_time_us"], "total": r["total"],
                    "latency_us": r["mean_miss_latency_us"], "misses": r["misses"]}


def run(a: argparse.Namespace) -> dict:
    out: dict = {"table2": protoproc.table2(seed=a.seed)}
    out["model"] = protoproc.model(ratios=list(RATIOS))
    runs = [("synthetic", pol, cpus, 1, c) for c in SYNTH_C for pol, cpus in (("single", 1), ("fixed", 2), ("floating", 2))]
    runs += [(app, pol, p, t, None) for app in APPS for pol, p, t in configs()]
    out["synthetic"], out["apps"] = [], []
    # Every run is independent: the sweep machinery's process pool, results in this order.
    rows = map_ordered(one_run, [(*r, a.requests, a.seed) for r in runs], workers=a.workers, what="protoproc",
                       label=lambda x: f"{x[0]} {x[1]} P={x[2]} T={x[3]}")
    for kind, row in rows:
        out[kind].append(row)
    return out


def t_of(out: dict, app: str, pol: str, p: int, t: int) -> float:
    for r in out["apps"]:
        if (r["app"], r["policy"], r["cpus"], r["threads"]) == (app, pol, p, t):
            return r["time_us"]
    raise KeyError((app, pol, p, t))


def markdown(out: dict) -> str:
    L = ["### Table 2: remote miss on the simulator (costs calibrated to it)", "",
         "| policy | round trip us (paper) | requester us (paper) | home us (paper) | other us (paper) |",
         "|---|---|---|---|---|"]
    for r in out["table2"]["rows"]:
        p = r["paper"] or {}
        cell = lambda k: f"{r[k]:.1f}" + (f" ({p[k]:g})" if k in p else "")  # noqa: E731
        L.append(f"| {r['policy']} ({r['cpus']} cpu) | {cell('round_trip_us')} | {cell('requester_us')} | {cell('home_us')} | {cell('other_us')} |")
    b = out["model"]["break_even"]
    L += ["", "### Figure 3: the analytic model", "",
          f"Table 2's parameters (Lremote 113, Opp 55, Oreply 27 us): (2 Opp + Oreply) / Lremote = "
          f"{b['overhead_ratio']:.3f}, largest Tsingle/Tfixed = {b['r_max']:.3f} at C = Lremote; Fixed is never "
          f"33% faster than Single ({'never' if b['cost_effective'] is None else b['cost_effective']}) and never beats "
          f"Floating.", "",
          "| (2 Opp + Oreply) / Lremote | largest Tsingle/Tfixed | Fixed beats Floating for utilization | Fixed +33% over Single for utilization |",
          "|---|---|---|---|"]
    iv = lambda i: "never" if i is None else f"{i['u_low']:.3f} to {i['u_high']:.3f}"  # noqa: E731
    for cv in out["model"]["curves"]:
        L.append(f"| {cv['ratio']:g} | {cv['r_max']:.3f} | {iv(cv['fixed_beats_floating'])} | {iv(cv['cost_effective'])} |")
    L += ["", "### Model against simulation (synthetic workload, the model's parameters, 4 nodes)", "",
          "Simulated mean node finishing time against Tsingle, Tfixed (2 processors) and Tfloating (2 processors), "
          "2,000 requests per node; queue wait = mean time a protocol item waited for the handler slot.", "",
          "| C us | utilization | Single: diff (wait us) | Fixed: diff (wait us) | Floating: diff (wait us) |", "|---|---|---|---|---|"]
    for c in SYNTH_C:
        rows = {r["policy"]: r for r in out["synthetic"] if r["c_us"] == c}
        cell = lambda r: f"{r['difference_pct']:+.1f}% ({r['queue_wait_us']:.1f})"  # noqa: E731
        L.append(f"| {c:g} | {c / (c + 113):.2f} | {cell(rows['single'])} | {cell(rows['fixed'])} | {cell(rows['floating'])} |")
    for app in APPS:
        base = t_of(out, app, "single", 1, 1)
        L += ["", f"### Figure {FIGURE[app]}: {app}, speedup over Single with one thread (4 nodes)", "",
              "| threads | Single 1 | Fixed 2 | Fixed 3 | Fixed 4 | Floating 1 | Floating 2 | Floating 3 | Floating 4 |",
              "|---|---|---|---|---|---|---|---|---|"]
        for t in (1, 2):
            cells = [base / t_of(out, app, "single", 1, t)]
            cells += [base / t_of(out, app, "fixed", p, t) for p in (2, 3, 4)]
            cells += [base / t_of(out, app, "floating", p, t) for p in (1, 2, 3, 4)]
            L.append(f"| {t} | " + " | ".join(f"{x:.2f}" for x in cells) + " |")
        L.append("")
        L.append(f"Single with one thread: {base / 1e6:.3f} s simulated.")
    L += ["", "### The paper's statements, checked", "", "| statement | paper | here |", "|---|---|---|"]
    s = lambda app, pol, p, t=1: t_of(out, app, pol, p, t)  # noqa: E731
    checks = [
        ("tomcatv: Fixed (2) over Single", "less than 10%", f"{100 * (s('tomcatv', 'single', 1) / s('tomcatv', 'fixed', 2) - 1):+.0f}%"),
        ("tomcatv: two threads per processor (Single)", "no speedup", f"{s('tomcatv', 'single', 1) / s('tomcatv', 'single', 1, 2):.2f}x"),
        ("tomcatv: Floating (2) over Single", "nearly 2x", f"{s('tomcatv', 'single', 1) / s('tomcatv', 'floating', 2):.2f}x"),
        ("tomcatv: Floating over Fixed with 3 processors", "Floating faster", f"{s('tomcatv', 'fixed', 3) / s('tomcatv', 'floating', 3):.2f}x"),
        ("tomcatv: Fixed over Floating with 4 processors", "Fixed slightly faster", f"{s('tomcatv', 'floating', 4) / s('tomcatv', 'fixed', 4):.2f}x"),
        ("em3d: Fixed (2) over Single", "+16%", f"{100 * (s('em3d', 'single', 1) / s('em3d', 'fixed', 2) - 1):+.0f}%"),
        ("em3d: Fixed over Floating at saturation (4 processors)", "Fixed 30% faster", f"{100 * (s('em3d', 'floating', 4) / s('em3d', 'fixed', 4) - 1):+.0f}%"),
        ("em3d: Fixed over Floating, 2 processors x 2 threads", "Fixed faster", f"{100 * (s('em3d', 'floating', 2, 2) / s('em3d', 'fixed', 2, 2) - 1):+.0f}%"),
        ("gauss: Fixed (2) over Single", "+28%", f"{100 * (s('gauss', 'single', 1) / s('gauss', 'fixed', 2) - 1):+.0f}%"),
        ("gauss: two threads (Fixed 2)", "no improvement", f"{s('gauss', 'fixed', 2) / s('gauss', 'fixed', 2, 2):.2f}x"),
        ("gauss: Floating over Fixed with 2 processors", "Floating faster", f"{s('gauss', 'fixed', 2) / s('gauss', 'floating', 2):.2f}x"),
        ("gauss: Fixed over Floating with 4 processors", "Fixed faster", f"{s('gauss', 'floating', 4) / s('gauss', 'fixed', 4):.2f}x"),
    ]
    for a, b_, c in checks:
        L.append(f"| {a} | {b_} | {c} |")
    return "\n".join(L) + "\n"


def plots(out: dict, folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    m = out["model"]
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for cv in m["curves"]:
        ax[0].plot([p["c_us"] for p in cv["points"]], [p["normalized"] for p in cv["points"]], label=f"{cv['ratio']:g}")
        ax[1].plot([p["utilization"] for p in cv["points"]], [p["normalized"] for p in cv["points"]], label=f"{cv['ratio']:g}")
    for k, key in ((0, "c_us"), (1, "utilization")):
        ax[k].plot([p[key] for p in m["points"]], [p["normalized"] for p in m["points"]], "k--", label="Table 2 (1.21)")
        ax[k].set_ylabel("Tsingle / Tfixed")
        ax[k].axhline(2, ls=":", c="gray")
    ax[0].set_xscale("log")
    ax[0].set_xlabel("C (us)")
    ax[1].set_xlabel("C / (C + Lremote)")
    ax[1].legend(title="(2Opp+Oreply)/Lremote", fontsize=7)
    fig.tight_layout()
    p = folder / "protoproc_fig3.png"
    with _ui.atomic_path(p) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    made.append(p)
    fig, ax = plt.subplots(2, 3, figsize=(12, 6), sharey="col")
    for j, app in enumerate(APPS):
        base = t_of(out, app, "single", 1, 1)
        for i, t in enumerate((1, 2)):
            a = ax[i][j]
            a.plot([1], [base / t_of(out, app, "single", 1, t)], "ks", label="Single")
            a.plot([2, 3, 4], [base / t_of(out, app, "fixed", q, t) for q in (2, 3, 4)], "o-", label="Fixed")
            a.plot([1, 2, 3, 4], [base / t_of(out, app, "floating", q, t) for q in (1, 2, 3, 4)], "^-", label="Floating")
            a.set_title(f"{app}, {t} thread(s) per processor", fontsize=9)
            a.set_xlabel("processors per node")
            a.set_ylabel("speedup over Single")
        ax[0][0].legend(fontsize=8)
    fig.tight_layout()
    p = folder / "protoproc_fig4_6.png"
    with _ui.atomic_path(p) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    made.append(p)
    return made


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--markdown", type=Path, default=Path("out/protoproc.md"))
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--plot-dir", type=Path, default=Path("out"))
    ap.add_argument("--requests", type=int, default=2000, help="requests per node of the synthetic runs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=None, help="runs at once, one process each (default: every core)")
    a = ap.parse_args()
    if a.workers is not None and a.workers < 1:
        ap.error("--workers must be at least 1")
    md_path = _ui.output_path(a.markdown, "--markdown")
    js_path = _ui.output_path(a.json, "--json")
    folder = _ui.output_dir(a.plot_dir, "--plot-dir")
    out = run(a)
    text = markdown(out)
    with _ui.atomic_write(md_path) as f:
        f.write(text)
    if js_path is not None:
        with _ui.atomic_write(js_path) as f:
            json.dump(out, f, indent=1)
    made = plots(out, folder)
    print(text)
    print(f"markdown: {md_path}; plots: {', '.join(map(str, made))}")


if __name__ == "__main__":
    main()
