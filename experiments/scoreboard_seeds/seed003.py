"""Scoreboard of the protocol-processing paper (Falsafi and Wood, "When Does Dedicated Protocol
Processing Make Sense?"; 003_4cf3559a3bee5854.txt): every quantitative result
against pktflow's analytic model and discrete-event simulation (docs/protoproc.md).

Set-up (as experiments/protoproc.py, nothing shortened; a few seconds in all):
* Table 2: ``protoproc.table2`` (the paper's microbenchmarks on the simulator; the handler costs
  are calibrated to this table, so H1-H3 agree largely by construction).
* Model: ``protoproc.model`` with Table 2's parameters (Lremote 113, Opp 55, Oreply 27 us), its
  curves for the overhead ratios (2 Opp + Oreply) / Lremote of protoproc.RATIOS (doublings, 0.25 to
  16) and a fine scan (0.25 steps) for the exact threshold.
* Model against simulation: the synthetic workload with the model's costs, 4 nodes, 2,000
  requests per node, C in protoproc.SYNTH_C; Single (1 processor), Fixed (2), Floating (2).
* Light against heavy protocol: the synthetic workload at C = Lremote with Table 2's costs, and
  with Lremote and Oreply 4 times larger (a heavier protocol, the same Opp of interrupts and
  context switches).
* Figures 4-6: tomcatv, em3d and gauss on 4 nodes, Single (1 processor), Fixed (2-4), Floating
  (1-4), 1 and 2 threads per compute processor. Random seed: the scoreboard's.
"""

from __future__ import annotations

from scoreboard_seeds import common

SEED = "003"
TITLE = "Protocol processing: Single, Fixed, Floating"
PAPER_FILE = "003_4cf3559a3bee5854.txt"

RESULTS = [
    ("H1", "Table 2, Fixed: round trip 113, requester 54, home 27, other 32 µs"),
    ("H2", "Table 2, Single: 168 / 78 / 43 / 47 µs"),
    ("H3", "Table 2 increases: 49% / 44% / 59% / 47%"),
    ("H4", "Model: Fixed is best at C = Lremote"),
    ("H5", "Model: Fixed beats Floating only at 20-80% utilization with (2Opp+Oreply) ≥ 8 Lremote"),
    ("H6", "Cost-effectiveness bars: +33% (a 2-CPU node costing 1/3 more); +100% to beat Floating"),
    ("H7", "Light-weight protocols gain more (needs 2Opp >> Lremote)"),
    ("H8", "The model underestimates runtimes (no contention or queueing)"),
    ("H9", "tomcatv: Fixed (2 CPUs) under 10% over Single"),
    ("H10", "tomcatv: two threads give no speedup"),
    ("H11", "tomcatv: Floating (2 CPUs) nearly 2x Single"),
    ("H12", "tomcatv: Floating ahead of Fixed up to 3 CPUs"),
    ("H13", "tomcatv: Fixed slightly faster than Floating at 4 CPUs (bus saturated)"),
    ("H15", "em3d: Fixed (2) +16% over Single"),
    ("H16", "em3d: multithreading and multiprocessing both use the bandwidth; early saturation"),
    ("H17", "em3d: Fixed 30% faster than Floating at saturation"),
    ("H18", "gauss: Fixed (2) +28% over Single"),
    ("H19", "gauss: two threads give no improvement"),
    ("H20", "gauss: Floating ahead first, Fixed once the broadcast dominates"),
    ("H21", "gauss: both scale up to 3 CPUs, then the broadcast dominates"),
    ("H22", "Conclusion: Fixed beat Floating only for em3d or with 4 CPUs per node"),
]

# Paper Table 2 (us), Fixed and Single, and its "% increase" column.
PAPER_T2 = {
    "fixed": {"round_trip_us": 113, "requester_us": 54, "home_us": 27, "other_us": 32},
    "single": {"round_trip_us": 168, "requester_us": 78, "home_us": 43, "other_us": 47},
}
PAPER_INCREASE = {"round_trip_us": 0.49, "requester_us": 0.44, "home_us": 0.59, "other_us": 0.47}
T2_KEYS = ("round_trip_us", "requester_us", "home_us", "other_us")
L_REMOTE, O_PP, O_REPLY = 113.0, 55.0, 27.0  # Table 2 -> the model's parameters (docs/protoproc.md)
HEAVY = 4.0  # the heavier protocol: Lremote and Oreply times this, Opp unchanged
STEPS = 8  # table2, model, model scan, synthetic, light/heavy, three applications


# ----------------------------------------------------------------------------- runs


def _proc(p: dict) -> dict:
    return {k: p[k] for k in ("node", "cpu", "role", "compute_us", "protocol_us", "polling_us", "switch_us", "idle_us")}


def app_runs(app: str, seed: int) -> list[dict]:
    """Every configuration of Figures 4-6 for one application (experiments/protoproc.configs)."""
    from pktflow import protoproc
    from protoproc import configs

    out = []
    for pol, p, t in configs():
        r = protoproc.simulate(app, policy=pol, cpus=p, threads=t, seed=seed)
        out.append(
            {
                "policy": pol,
                "cpus": p,
                "threads": t,
                "time_us": r["execution_time_us"],
                "latency_us": r["mean_miss_latency_us"],
                "misses": r["misses"],
                "queue_wait_us": r["mean_queue_wait_us"],
                "processors": [_proc(x) for x in r["processors"]],
            }
        )
    return out


def synthetic_runs(seed: int) -> list[dict]:
    from pktflow import protoproc
    from protoproc import SYNTH_C

    out = []
    for c in SYNTH_C:
        for pol, cpus in (("single", 1), ("fixed", 2), ("floating", 2)):
            r = protoproc.simulate("synthetic", policy=pol, cpus=cpus, c_us=c, seed=seed)
            out.append(
                {
                    "c_us": c,
                    "policy": pol,
                    "sim_us": r["mean_node_finish_us"],
                    "model_us": r["model"]["time_us"],
                    "queue_wait_us": r["mean_queue_wait_us"],
                }
            )
    return out


def light_heavy_runs(seed: int) -> list[dict]:
    from pktflow import protoproc

    out = []
    for kind, lr, orep in (("light", L_REMOTE, O_REPLY), ("heavy", HEAVY * L_REMOTE, HEAVY * O_REPLY)):
        m = protoproc.model(l_remote_us=lr, o_pp_us=O_PP, o_reply_us=orep)
        for pol, cpus in (("single", 1), ("fixed", 2)):
            r = protoproc.simulate(
                "synthetic", policy=pol, cpus=cpus, c_us=lr, l_remote_us=lr, o_pp_us=O_PP, o_reply_us=orep, seed=seed
            )
            out.append(
                {
                    "kind": kind,
                    "policy": pol,
                    "l_remote_us": lr,
                    "o_reply_us": orep,
                    "sim_us": r["mean_node_finish_us"],
                    "model_r_max": m["break_even"]["r_max"],
                }
            )
    return out


# ----------------------------------------------------------------------------- pure helpers


def worst_component(pairs: dict[str, tuple[float, float]], factor: bool = False) -> tuple[str, float, float]:
    """The component (name, paper, measured) furthest from the paper: by |measured/paper - 1|, or
    for relative changes (``factor``) by |(1 + measured)/(1 + paper) - 1|."""

    def dev(pm):
        p, m = pm
        return abs((1 + m) / (1 + p) - 1) if factor else abs(m / p - 1)

    k = max(pairs, key=lambda k: dev(pairs[k]))
    return k, pairs[k][0], pairs[k][1]


def speedups(runs: list[dict]) -> dict[tuple[str, int, int], float]:
    """(policy, cpus, threads) -> speedup over Single with one thread."""
    base = next(r["time_us"] for r in runs if (r["policy"], r["cpus"], r["threads"]) == ("single", 1, 1))
    return {(r["policy"], r["cpus"], r["threads"]): base / r["time_us"] for r in runs}


def fixed_wins(sp_by_app: dict[str, dict]) -> list[tuple[str, int, int]]:
    """(app, cpus, threads) where Fixed is faster than Floating with as many processors."""
    out = []
    for app, sp in sp_by_app.items():
        for (pol, p, t), v in sp.items():
            if pol == "fixed" and v > sp[("floating", p, t)]:
                out.append((app, p, t))
    return out


def share(runs_row: dict, field: str, role: str | None = None) -> float:
    """Mean share of the execution time the processors (of ``role``) spent in ``field``."""
    ps = [p for p in runs_row["processors"] if role is None or p["role"] == role]
    return sum(p[field] for p in ps) / (len(ps) * runs_row["time_us"]) if ps else float("nan")


# ----------------------------------------------------------------------------- measure


def measure(ctx: common.Context) -> list[dict]:
    from pktflow import protoproc
    from protoproc import APPS, RATIOS

    t2 = ctx.cached("table2", lambda: protoproc.table2(seed=ctx.seed))
    model = ctx.cached("model", lambda: protoproc.model(ratios=list(RATIOS)))
    fine = [x / 4 for x in range(1, 65)]
    scan = ctx.cached(
        "model_scan",
        lambda: [
            {"ratio": c["ratio"], "fixed_beats_floating": c["fixed_beats_floating"]}
            for c in protoproc.model(ratios=fine)["curves"]
        ],
    )
    syn = ctx.cached("synthetic", lambda: synthetic_runs(ctx.seed))
    lh = ctx.cached("light_heavy", lambda: light_heavy_runs(ctx.seed))
    runs = {app: ctx.cached(f"app_{app}", lambda app=app: app_runs(app, ctx.seed)) for app in APPS}
    sp = {app: speedups(runs[app]) for app in APPS}

    def run(app, pol, p, t=1):
        return next(r for r in runs[app] if (r["policy"], r["cpus"], r["threads"]) == (pol, p, t))

    def T(app, pol, p, t=1):
        return run(app, pol, p, t)["time_us"]

    R = dict(RESULTS)
    rows = []
    t2rows = {r["policy"]: r for r in t2["rows"]}
    calib = (
        "calibrated: the handler costs are set from this table (docs/protoproc.md), so agreement is "
        "largely by construction"
    )

    # H1, H2: each row's four figures; the status follows the one furthest from the paper.
    for rid, pol in (("H1", "fixed"), ("H2", "single")):
        pairs = {k: (PAPER_T2[pol][k], t2rows[pol][k]) for k in T2_KEYS}
        k, p, m = worst_component(pairs)
        comp = ", ".join(f"{kk.replace('_us', '')} {t2rows[pol][kk]:.1f}/{PAPER_T2[pol][kk]}" for kk in T2_KEYS)
        rows.append(
            common.numeric(rid, R[rid], p, m, f"{comp} us (pktflow/paper; row figure: {k.replace('_us', '')}); {calib}")
        )

    # H3: Single's increase over Fixed per component (a relative change, on the factor).
    inc = {k: (PAPER_INCREASE[k], t2rows["single"][k] / t2rows["fixed"][k] - 1) for k in T2_KEYS}
    k, p, m = worst_component(inc, factor=True)
    comp = ", ".join(f"{kk.replace('_us', '')} {100 * inc[kk][1]:+.0f}%/{100 * inc[kk][0]:+.0f}%" for kk in T2_KEYS)
    row = common.change("H3", R["H3"], p, m, f"{comp} (pktflow/paper; row figure: {k.replace('_us', '')}); {calib}")
    rows.append(row)

    # H4: "Fixed performs best when communication and computation are perfectly balanced
    # (C = Lremote)". Model: Tsingle/Tfixed largest at C = Lremote; simulation (synthetic,
    # model costs): the largest simulated Tsingle/Tfixed at the grid C nearest Lremote.
    pts = model["points"]
    c_model = max(pts, key=lambda q: q["normalized"])["c_us"]
    sim_r = {}
    for c in sorted({r["c_us"] for r in syn}):
        s = {r["policy"]: r["sim_us"] for r in syn if r["c_us"] == c}
        sim_r[c] = s["single"] / s["fixed"]
    c_sim = max(sim_r, key=sim_r.get)
    c_near = min(sim_r, key=lambda c: abs(c - L_REMOTE))
    ok = abs(c_model - L_REMOTE) < 1e-6 and c_sim == c_near
    rows.append(
        common.shape(
            "H4",
            R["H4"],
            "Tsingle/Tfixed largest at C = Lremote (113 us)",
            f"model: largest {max(q['normalized'] for q in pts):.3f} at C = {c_model:g} us; simulation: largest "
            f"{sim_r[c_sim]:.3f} at C = {c_sim:g} us (" + ", ".join(f"{c:g}: {v:.3f}" for c, v in sim_r.items()) + ")",
            ok,
            "" if ok else "the simulated gain peaks away from Lremote (handler queueing)",
        )
    )

    # H5: "Fixed performs better than ... Floating only when the utilization is moderate (e.g.,
    # more than 20% but less than 80%) and the overhead (2Opp + Oreply) is at least eight times
    # the remote latency". On the doubling ratios of the model's curves (the paper's Figure 3
    # has several curves, values not given): no interval below 8; at 8 an interval whose ends
    # lie within 0.1 of 20% and 80%.
    iv = {c["ratio"]: c["fixed_beats_floating"] for c in model["curves"]}
    below = [r for r, x in iv.items() if r < 8 and x is not None]
    at8 = iv.get(8.0)
    ok = not below and at8 is not None and abs(at8["u_low"] - 0.2) <= 0.1 and abs(at8["u_high"] - 0.8) <= 0.1
    first = next((c["ratio"] for c in scan if c["fixed_beats_floating"] is not None), None)
    rows.append(
        common.shape(
            "H5",
            R["H5"],
            "20-80% utilization, ratio >= 8",
            "ratios "
            + ", ".join(
                f"{r:g}: " + ("never" if x is None else f"{x['u_low']:.3f}-{x['u_high']:.3f}") for r, x in iv.items()
            )
            + f"; on a 0.25 grid first at ratio {first:g} (closed form: R > 2 needs ratio > 4)",
            ok,
            "" if ok else "the model's interval differs from the paper's reading of its Figure 3",
        )
    )

    # H6: "the Fixed policy must perform 100% better than the Single policy to be more
    # cost-effective than Floating": in the model Tfloating = Tsingle / 2 by definition; measured
    # here as the simulated Tsingle / Tfloating(2) - 1 of the synthetic workload at C = Lremote.
    s113 = {r["policy"]: r["sim_us"] for r in syn if r["c_us"] == c_near}
    bars = {c: {r["policy"]: r["sim_us"] for r in syn if r["c_us"] == c} for c in sim_r}
    bar_txt = ", ".join(f"C={c:g}: {100 * (v['single'] / v['floating'] - 1):+.0f}%" for c, v in bars.items())
    row = common.change(
        "H6",
        R["H6"],
        1.0,
        s113["single"] / s113["floating"] - 1,
        f"the +100% bar: simulated Floating (2) over Single at C = {c_near:g} us (over C: {bar_txt}); the +33% bar "
        "is the paper's price assumption (an input of the model's cost_effective interval), not a measured figure",
    )
    rows.append(row)

    # H7: "the Fixed policy is more beneficial for light-weight protocols ... than for
    # heavy-weight protocols": with Opp fixed, a heavier protocol (Lremote and Oreply x4) gains
    # less from Fixed, in the simulation at C = Lremote and in the model's largest gain.
    g = {}
    for kind in ("light", "heavy"):
        s = {r["policy"]: r for r in lh if r["kind"] == kind}
        g[kind] = (s["single"]["sim_us"] / s["fixed"]["sim_us"], s["single"]["model_r_max"])
    ok = g["light"][0] > g["heavy"][0] and g["light"][1] > g["heavy"][1]
    rows.append(
        common.shape(
            "H7",
            R["H7"],
            "Fixed's gain larger for the light protocol",
            f"Tsingle/Tfixed at C = Lremote, simulated (model max): light (Lremote 113, Oreply 27) {g['light'][0]:.3f} "
            f"({g['light'][1]:.3f}); heavy (x{HEAVY:g}) {g['heavy'][0]:.3f} ({g['heavy'][1]:.3f}); Opp {O_PP:g} us",
            ok,
            "" if ok else "the heavier protocol gains as much or more from Fixed",
        )
    )

    # H8: the model "underestimate[s] actual runtimes" because it omits contention: simulated
    # time above the model for every policy at the most communication-intensive C, and the
    # largest underestimate larger than the largest overestimate.
    diffs = {(r["c_us"], r["policy"]): r["sim_us"] / r["model_us"] - 1 for r in syn}
    cmin = min(r["c_us"] for r in syn)
    at_min = {pol: diffs[(cmin, pol)] for pol in ("single", "fixed", "floating")}
    over, under = max(diffs.values()), min(diffs.values())
    ok = all(v > 0 for v in at_min.values()) and over > -under
    waits = {pol: next(r["queue_wait_us"] for r in syn if r["c_us"] == cmin and r["policy"] == pol) for pol in at_min}
    rows.append(
        common.shape(
            "H8",
            R["H8"],
            "simulated runtimes above the model",
            f"at C = {cmin:g} us: "
            + ", ".join(f"{p} {100 * v:+.1f}% (queue wait {waits[p]:.1f} us)" for p, v in at_min.items())
            + f"; over all C: {100 * under:+.1f}% to {100 * over:+.1f}%",
            ok,
            "" if ok else "the simulation is not above the model where contention is highest",
        )
    )

    # tomcatv (Figure 4)
    gain = sp["tomcatv"][("fixed", 2, 1)] - 1
    # H9: "Fixed with two processors runs less than 10% [faster] than Single": 0 < gain < 10%.
    ok = 0 < gain < 0.10
    s1, f2 = run("tomcatv", "single", 1), run("tomcatv", "fixed", 2)
    busy_share = [p["compute_us"] / (s1["time_us"] - p["idle_us"]) for p in s1["processors"]]
    rows.append(
        common.shape(
            "H9",
            R["H9"],
            "< +10%",
            f"{100 * gain:+.1f}%",
            ok,
            ""
            if ok
            else (
                f"miss latency {s1['latency_us']:.0f} us under Single against {f2['latency_us']:.0f} under "
                f"Fixed; under Single a node computes {100 * min(busy_share):.0f}% to "
                f"{100 * max(busy_share):.0f}% of its busy time (the paper: up to 85%; the calibration used "
                "the edge nodes, one neighbour), the interior nodes (two neighbours, twice the misses and "
                "requests) least, and they are idle least"
            ),
        )
    )

    # H10: "running two threads per processor does not result in speedups" (Figure 4 right): the
    # largest two-thread speedup over one thread, over every configuration, under 5%.
    t21 = {(pol, p): T("tomcatv", pol, p, 1) / T("tomcatv", pol, p, 2) for (pol, p, t) in sp["tomcatv"] if t == 1}
    best = max(t21, key=t21.get)
    ok = t21[best] < 1.05
    rows.append(
        common.shape(
            "H10",
            R["H10"],
            "no speedup (< 5%)",
            f"largest two-thread speedup {t21[best]:.3f} ({best[0]} {best[1]}); Single {t21[('single', 1)]:.3f}",
            ok,
            ""
            if ok
            else (
                f"{best[0]} {best[1]}: the compute processors' idle share falls from "
                f"{100 * share(run('tomcatv', *best, 1), 'idle_us', role='compute'):.0f}% to "
                f"{100 * share(run('tomcatv', *best, 2), 'idle_us', role='compute'):.0f}% with two threads: "
                "the second thread computes while the border thread waits for its miss"
            ),
        )
    )

    # H11: "Floating with 2 processors is a nearly a factor 2 faster than Single".
    rows.append(
        common.numeric(
            "H11", R["H11"], 2.0, sp["tomcatv"][("floating", 2, 1)], "nearly 2x: the paper gives no closer figure"
        )
    )

    # H12: "with up to three processors, Floating outperforms Fixed".
    q = {p: T("tomcatv", "fixed", p) / T("tomcatv", "floating", p) for p in (2, 3)}
    ok = all(v > 1 for v in q.values())
    rows.append(
        common.shape(
            "H12",
            R["H12"],
            "Floating faster at 2 and 3 CPUs",
            ", ".join(f"{p} CPUs: Floating {v:.2f}x Fixed" for p, v in q.items()),
            ok,
            "" if ok else "Fixed is faster with 3 processors or fewer",
        )
    )

    # H13: "Once the computing processors push the bus to its limit, Fixed improves performance
    # slightly": at 4 processors Fixed faster than Floating, by under 10% ("slightly").
    v = T("tomcatv", "floating", 4) / T("tomcatv", "fixed", 4)
    ok = 1 < v < 1.10
    fl4 = run("tomcatv", "floating", 4)
    rows.append(
        common.shape(
            "H13",
            R["H13"],
            "Fixed slightly faster at 4 CPUs",
            f"Fixed {v:.3f}x Floating",
            ok,
            ""
            if ok
            else (
                f"Floating's 4 processors spend {100 * share(fl4, 'protocol_us'):.1f}% of the time on handlers and "
                f"{100 * share(fl4, 'switch_us'):.1f}% on switches: the bus pollution charged to a computing "
                "processor that runs a handler (14 us x (slowdown - 1)) costs less than the fourth compute "
                "processor gives; pktflow models no cache beyond that charge"
            ),
        )
    )

    # em3d (Figure 5)
    # H15: "the extra protocol processor in Fixed improves the performance by only 16% over Single".
    s1, f2 = run("em3d", "single", 1), run("em3d", "fixed", 2)
    rows.append(
        common.change(
            "H15",
            R["H15"],
            0.16,
            sp["em3d"][("fixed", 2, 1)] - 1,
            f"mean miss latency {s1['latency_us']:.0f} us under Single, {f2['latency_us']:.0f} under Fixed",
        )
    )

    # H16: "both multithreading and multiprocessing can utilize the available bandwidth" and
    # "Saturation for both Floating and Fixed occurs quite rapidly": (a) a second thread (Fixed 2,
    # Floating 1) and one more processor (Fixed 2->3, Floating 1->2) each gain more than 5%;
    # (b) with two threads, the fourth processor gains under 5% for both policies.
    e = sp["em3d"]
    gains_a = {
        "Fixed 2: 2nd thread": e[("fixed", 2, 2)] / e[("fixed", 2, 1)],
        "Floating 1: 2nd thread": e[("floating", 1, 2)] / e[("floating", 1, 1)],
        "Fixed 2->3 CPUs": e[("fixed", 3, 1)] / e[("fixed", 2, 1)],
        "Floating 1->2 CPUs": e[("floating", 2, 1)] / e[("floating", 1, 1)],
    }
    gains_b = {pol: e[(pol, 4, 2)] / e[(pol, 3, 2)] for pol in ("fixed", "floating")}
    ok = all(x > 1.05 for x in gains_a.values()) and all(x < 1.05 for x in gains_b.values())
    busy = share(run("em3d", "fixed", 4, 2), "protocol_us", role="protocol")
    rows.append(
        common.shape(
            "H16",
            R["H16"],
            "threads and CPUs both help; early saturation",
            ", ".join(f"{k} {v:.2f}x" for k, v in gains_a.items())
            + "; 3->4 CPUs with 2 threads: "
            + ", ".join(f"{k} {v:.2f}x" for k, v in gains_b.items())
            + f"; Fixed's protocol processor busy {100 * busy:.0f}% (4 CPUs, 2 threads)",
            ok,
            "" if ok else "threads or processors do not raise the request rate, or the policies do not saturate",
        )
    )

    # H17: "Fixed is 30% faster than Floating at the saturation point" (4 processors, 1 thread).
    rows.append(common.change("H17", R["H17"], 0.30, T("em3d", "floating", 4) / T("em3d", "fixed", 4) - 1))

    # gauss (Figure 6)
    rows.append(common.change("H18", R["H18"], 0.28, sp["gauss"][("fixed", 2, 1)] - 1))

    # H19: "The two-threaded configurations (right) do not exhibit any improvements": the largest
    # two-thread speedup over every configuration under 5%.
    g21 = {(pol, p): T("gauss", pol, p, 1) / T("gauss", pol, p, 2) for (pol, p, t) in sp["gauss"] if t == 1}
    best = max(g21, key=g21.get)
    ok = g21[best] < 1.05
    rows.append(
        common.shape(
            "H19",
            R["H19"],
            "no improvement (< 5%)",
            f"largest two-thread speedup {g21[best]:.3f} ({best[0]} {best[1]})",
            ok,
            "" if ok else "a second thread overlaps gauss's communication",
        )
    )

    # H20: "Floating initially outperforms Fixed ... With the broadcast eventually dominating the
    # running time, Fixed sustains a higher bandwidth": Floating faster at 2 processors, Fixed at 4.
    q2 = T("gauss", "fixed", 2) / T("gauss", "floating", 2)
    q4 = T("gauss", "floating", 4) / T("gauss", "fixed", 4)
    ok = q2 > 1 and q4 > 1
    rows.append(
        common.shape(
            "H20",
            R["H20"],
            "Floating ahead at 2 CPUs, Fixed at 4",
            f"2 CPUs: Floating {q2:.3f}x Fixed; 4 CPUs: Fixed {q4:.3f}x Floating",
            ok,
            "" if ok else "the order of the policies does not turn with the processor count",
        )
    )

    # H21: "Both Floating and Fixed effectively exploit the parallelism ... up to 3 processors,
    # after which the broadcast of the pivot row accounts for a large fraction of the running
    # time": each policy gains more than 5% from 2 to 3 processors, and less from 3 to 4.
    gs = sp["gauss"]
    inc = {pol: (gs[(pol, 3, 1)] / gs[(pol, 2, 1)], gs[(pol, 4, 1)] / gs[(pol, 3, 1)]) for pol in ("fixed", "floating")}
    ok = all(a > 1.05 and b < a for a, b in inc.values())
    comm = {p: 1 - share(run("gauss", "fixed", p), "compute_us", role="compute") for p in (2, 4)}
    rows.append(
        common.shape(
            "H21",
            R["H21"],
            "gains to 3 CPUs, flattening after",
            ", ".join(f"{pol}: 2->3 {a:.3f}x, 3->4 {b:.3f}x" for pol, (a, b) in inc.items())
            + f"; Fixed's compute processors not computing {100 * comm[2]:.0f}% (2 CPUs) -> "
            f"{100 * comm[4]:.0f}% (4 CPUs)",
            ok,
            "" if ok else "the speedup does not flatten after 3 processors",
        )
    )

    # H22: "Fixed outperformed Floating only for the very communication intensive program em3d or
    # when there were four processors per node": every configuration (app, processors, threads)
    # where Fixed is faster than Floating is em3d or has 4 processors.
    wins = fixed_wins(sp)
    bad = [w for w in wins if w[0] != "em3d" and w[1] != 4]
    missing4 = [a for a in APPS if not any(w[0] == a and w[1] == 4 for w in wins)]
    ok = not bad
    rows.append(
        common.shape(
            "H22",
            R["H22"],
            "Fixed wins only on em3d or at 4 CPUs",
            f"Fixed faster in {len(wins)} of {3 * 3 * 2} configurations; others than em3d / 4 CPUs: "
            + (", ".join(f"{a} {p} CPUs x{t}" for a, p, t in bad) or "none")
            + f"; apps with no Fixed win at 4 CPUs: {', '.join(missing4) or 'none'}",
            ok,
            ""
            if ok
            else (
                "Fixed / Floating speedups there: "
                + ", ".join(
                    f"{a} {p}x{t} {sp[a][('fixed', p, t)]:.2f}/{sp[a][('floating', p, t)]:.2f}" for a, p, t in bad
                )
                + (
                    "; gauss: Fixed's faster pivot-row broadcast already pays at 3 processors"
                    if any(b[0] == "gauss" for b in bad)
                    else ""
                )
            ),
        )
    )
    return rows
