"""The real runtime: run an application on the host's cores, its elements compiled with cost
recording compiled out (``crates/runtime``; every convention in ``docs/runtime.md``).

Example::

    from pktflow import runtime
    r = runtime.run("router", trace="in.pcap", out_dir="out", threads=2)
    print(r["timing"]["packets_per_second"], r["balance"]["conserved"])

Only what the caller sets is sent; the defaults live in Rust and the result records them under
``"settings"``. Wall-clock figures (rates, utilization) are under ``"timing"``.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

from pktflow import _core
from pktflow._request import choice

__all__ = ["Model", "Io", "Costs", "run", "host_costs", "cost_table", "predict"]


class Model(str, enum.Enum):
    """How the graph is spread over threads."""

    rtc = "rtc"
    pipeline = "pipeline"
    hybrid = "hybrid"


class Io(str, enum.Enum):
    """Where reading the trace runs: an I/O thread on a core of its own (``dedicated``) or on
    whichever core is idle (``shared``), or no I/O thread, every run-to-completion worker reading
    the trace itself and keeping its own flows (``each``)."""

    dedicated = "dedicated"
    shared = "shared"
    each = "each"


def run(
    app: str,
    *,
    trace: Optional[Union[str, Path]] = None,
    synthetic: Optional[int] = None,
    seed: Optional[int] = None,
    input_port: Optional[str] = None,
    out_dir: Optional[Union[str, Path]] = None,
    threads: Optional[int] = None,
    model: Optional[Union[str, Model]] = None,
    io: Optional[Union[str, Io]] = None,
    pin: Optional[bool] = None,
    ring_slots: Optional[int] = None,
    batch: Optional[int] = None,
    reply_every: Optional[int] = None,
    mapping: Optional[Union[str, Path]] = None,
    profile_packets: Optional[int] = None,
    warmup: Optional[int] = None,
    progress: Optional[Callable[[int], None]] = None,
) -> dict[str, Any]:
    """Run ``app`` on a trace file or a synthetic trace and return the result document.

    ``model``: ``rtc`` (a copy of the graph per thread), ``pipeline`` (the graph cut into
    ``threads`` groups of elements joined by rings, balanced by a quick profile of
    ``profile_packets`` packets) or ``hybrid`` (the placement of ``mapping``, a JSON file written
    by ``pktflow explore/maxrate/map --json`` or by hand: docs/runtime.md). ``warmup``
    (pipeline and hybrid): the first packets handed over one at a time, each finished with all
    it causes before the next.
    """
    req: dict[str, Any] = {"app": str(app)}
    for key, val in (
        ("trace", None if trace is None else str(trace)),
        ("synthetic", synthetic),
        ("seed", seed),
        ("input_port", input_port),
        ("out_dir", None if out_dir is None else str(out_dir)),
        ("threads", threads),
        ("model", choice(model, Model, "--model")),
        ("io", choice(io, Io, "--io")),
        ("pin", pin),
        ("ring_slots", ring_slots),
        ("batch", batch),
        ("reply_every", reply_every),
        ("mapping", None if mapping is None else str(mapping)),
        ("profile_packets", profile_packets),
        ("warmup", warmup),
    ):
        if val is not None:
            req[key] = val
    return json.loads(_core.runtime_run(json.dumps(req), progress))


class Costs(str, enum.Enum):
    """Which element costs the simulator charges in a prediction."""

    measured = "measured"
    estimates = "estimates"


def host_costs(
    app: str,
    *,
    trace: Optional[Union[str, Path]] = None,
    synthetic: Optional[int] = None,
    seed: Optional[int] = None,
    reply_every: Optional[int] = None,
) -> dict[str, Any]:
    """What each element of ``app`` costs on this host: the packets driven on one thread
    through the timed build of the elements (``crates/runtime/src/hostcost.rs``). Returns, per
    element, its visits and mean ``ns_per_visit``, the ``driver_ns_per_packet`` spent outside
    the elements, the clock and its measured rate. Docs: docs/runtime.md, "Prediction"."""
    req: dict[str, Any] = {"app": str(app)}
    for key, val in (
        ("trace", None if trace is None else str(trace)),
        ("synthetic", synthetic),
        ("seed", seed),
        ("reply_every", reply_every),
    ):
        if val is not None:
            req[key] = val
    return json.loads(_core.runtime_host_costs(json.dumps(req)))


def cost_table(measured: dict[str, Any], arch_params: dict[str, Any]) -> dict[str, Any]:
    """The simulator's per-element cost table (``spec.element_costs``) from :func:`host_costs`:
    nanoseconds to the architecture's cycles (``pe_frequency_mhz / 1000`` per ns), to its
    instructions (``/ cycles_per_instruction``). Every element is named (one never visited in
    the timed run, such as the source element whose visit is the driver's work, costs 0); the
    driver's time per packet goes on each packet's first visit; memory accesses are dropped
    (the measured times already include the host's caches)."""
    np_ = arch_params["np"]
    per_ns = float(np_["pe_frequency_mhz"]) / 1000.0 / float(np_["cycles_per_instruction"])
    return {
        "instructions_per_visit": {e["name"]: e["ns_per_visit"] * per_ns for e in measured["elements"]},
        "per_packet_instructions": measured["driver_ns_per_packet"] * per_ns,
        "keep_accesses": False,
    }


# Element classes the simulator treats as interface tasks (pktflow_npsim::app::is_interface_class).
_INTERFACE_CLASSES = ("FromDevice", "PollDevice", "ToDevice", "FromHost", "ToHost")


def rtc_mapping(app: str, threads: int) -> dict[str, Any]:
    """Run-to-completion on ``threads`` threads as the simulator's explicit mapping: the
    interface elements on every PE too. (Global replication puts every other element on every
    PE, but binds each interface task to one PE; on the host every thread receives, carries and
    sends its own packets.)"""
    from pktflow import graph

    pes = list(range(threads))
    return {e["name"]: {"pes": pes} for e in graph(app)["elements"] if e["class"] in _INTERFACE_CLASSES}


def placement_mapping(result: dict[str, Any]) -> dict[str, Any]:
    """The element groups of a ``pipeline`` or ``hybrid`` run (its ``placement.stages``: the
    elements of each thread) as the simulator's explicit mapping: every element on the PEs of
    the threads that hold it (thread k = PE k; an element on several threads is replicated)."""
    from pktflow import PktflowError

    stages = (result.get("placement") or {}).get("stages")
    if not stages:
        raise PktflowError("--predict: the run reports no placement of its elements on threads")
    mapping: dict[str, Any] = {}
    for st in stages:
        for name in st["elements"]:
            mapping.setdefault(name, {"pes": []})["pes"].append(int(st["thread"]))
    return mapping


def predict(
    result: dict[str, Any],
    arch: str,
    *,
    trace: Optional[Union[str, Path]] = None,
    seed: Optional[int] = None,
    arch_set: Optional[Sequence[str]] = None,
    costs: Optional[Union[str, Costs]] = None,
    progress: Optional[Callable[[int, int, float], None]] = None,
) -> dict[str, Any]:
    """The NP timing simulator's maximum sustainable rate (``pktflow maxrate``'s engine) for the
    mapping that corresponds to the run ``result`` (of :func:`run`), on architecture ``arch`` (a
    built-in preset such as ``"host"`` or a TOML file), beside the measured rate, with the
    relative error ``(predicted - measured) / measured``.

    Run-to-completion on N threads is global replication over N PEs (every task may run on any
    PE, interface tasks included: :func:`rtc_mapping`; one thread is one PE). The simulator is
    fed the same packets: ``trace`` (the run's trace file) or, for a synthetic run, as many
    synthetic packets as the run took, with ``seed`` when the run was given one. ``arch_set``:
    ``KEY=VALUE`` overrides of the architecture (as ``pktflow maxrate --set``).

    ``costs``: ``measured`` (the default for ``arch="host"``) charges each element visit its
    mean time on this host (:func:`host_costs`, converted with the architecture's clock) and
    each packet the driver's time outside the elements; ``estimates`` (the default otherwise)
    charges the elements' own estimates (instructions and memory accesses). Docs:
    docs/runtime.md, "Prediction".
    """
    from pktflow import PktflowError, npsim

    settings = result["settings"]
    model = settings.get("model", "rtc")
    kind = choice(costs, Costs, "--predict-costs")
    if kind is None:
        kind = "measured" if str(arch) == "host" else "estimates"
    threads = int(settings["threads"])
    from_source = int(result["packets"]["from_source"])
    if from_source == 0:
        raise PktflowError("--predict: the run took no packet from its source: nothing to compare")
    resolved = npsim.arch(str(arch), arch_set)
    cost_doc: dict[str, Any] = {"kind": kind}
    table = None
    if kind == "measured":
        measured = host_costs(
            result["app"],
            trace=trace,
            synthetic=None if trace is not None else from_source,
            seed=None if trace is not None else seed,
            reply_every=settings.get("reply_every"),
        )
        table = cost_table(measured, resolved["params"])
        cost_doc.update(
            {
                "instructions_per_ns": float(resolved["params"]["np"]["pe_frequency_mhz"])
                / 1000.0
                / float(resolved["params"]["np"]["cycles_per_instruction"]),
                "table": table,
                "measurement": measured,
            }
        )
    req = json.loads(
        npsim._request(
            result["app"],
            str(arch),
            [str(x) for x in arch_set] if arch_set else None,
            threads,
            "global",
            None if trace is not None else from_source,
            None if trace is None else str(trace),
            None if trace is not None else seed,
            None,
            None,
            None,
        )
    )
    if model == "rtc":
        req["spec"]["mapping"] = rtc_mapping(result["app"], threads)
        mapping_doc = f"run-to-completion on {threads} thread(s) = global replication over {threads} PE(s)"
    else:
        req["spec"]["mapping"] = placement_mapping(result)
        mapping_doc = (
            f"{model}: each element on the PEs of the threads the run placed it on "
            f"({threads} thread(s) = {threads} PE(s)), replicas where the run replicated it"
        )
    if table is not None:
        req["spec"]["element_costs"] = table
    m = json.loads(_core.maxrate(json.dumps(req, allow_nan=False), progress))
    measured_rate = float(result["timing"]["packets_per_second"])
    # The simulator counts every packet it is fed, the neighbours' answers too (each arriving
    # at the same fixed interval); the run counts packets from its source only.
    sim_rate = float(m["packets_per_second"])
    sim_packets = int((m.get("report") or {}).get("injected") or 0)
    source_share = from_source / sim_packets if sim_packets >= from_source > 0 else 1.0
    predicted = sim_rate * source_share
    notes = []
    cores = m["settings"]["architecture"]["params"]["np"]["pe_count"]
    if isinstance(cores, int) and threads > cores:
        notes.append(
            f"{threads} threads on a machine of {cores} cores: the simulator gives each thread a PE of its own, "
            "the host time-shares its cores"
        )
    if kind == "measured":
        notes.append(
            "costs measured on this host on one thread (timed build of the elements); the driver's time per "
            "packet (reading the packet, carrying it between elements, handling what leaves) is charged on "
            "each packet's first visit"
        )
        notes.append(
            "memory accesses dropped (the measured times include the host's caches): no contention for "
            "memory or shared state between threads is simulated"
        )
        if threads > 1:
            notes.append("the I/O thread that hands packets to the threads is not simulated")

    else:
        notes.append(
            "reading the trace and handing packets to threads are not simulated: "
            "the simulator's packets arrive for free"
        )
    if model != "rtc":
        notes.append(
            "packets handed between threads through rings cost nothing in the simulator "
            "(no hand-off cost is charged between element groups)"
        )
    return {
        "arch": str(arch),
        "pes": threads,
        "replication": "global" if model == "rtc" else "as placed",
        "model": model,
        "mapping": mapping_doc,
        "simulator_mapping": req["spec"]["mapping"],
        "measured_packets_per_second": measured_rate,
        "predicted_packets_per_second": predicted,
        "simulator_packets_per_second": sim_rate,
        "source_share_of_simulated_packets": source_share,
        "relative_error": (predicted - measured_rate) / measured_rate if measured_rate > 0 else None,
        "costs": cost_doc,
        "bracket_inter_arrival_cycles": m.get("bracket"),
        "simulator_settings": m.get("settings"),
        "notes": notes,
    }
