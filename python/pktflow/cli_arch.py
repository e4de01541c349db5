"""``pktflow arch list`` and ``pktflow arch show``: architecture presets. Wired into the main CLI by
``pktflow.cli``."""

from __future__ import annotations

import json
from typing import Any, List, Optional

import typer
from rich.markup import escape
from rich.table import Table

import pktflow
from pktflow import npsim
from pktflow._ui import console, emit_json

arch_app = typer.Typer(help="Architecture presets (TOML, every parameter with its unit).", no_args_is_help=True)

# Units by the ending of a parameter's name (the names carry their unit).
_UNITS = (
    ("_flits_per_cycle", "flits per cycle"),
    ("contexts_per_pe", "contexts per PE"),
    ("loads_per_context", "loads per context"),
    ("_bytes_per_core", "bytes per core"),
    ("_bytes_shared", "bytes"),
    ("cycles_per_instruction", "cycles per instruction"),
    ("_cycles", "cycles"),
    ("_mhz", "MHz"),
    ("_bytes", "bytes"),
    ("_bits", "bits"),
    ("_flits", "flits"),
    ("_gbps", "Gb/s"),
    ("_requests", "requests"),
    ("_per_cycle", "per cycle"),
    ("_entries", "entries"),
    ("_slots", "slots"),
    ("_pes", "PEs"),
    ("_per_pe", "per PE"),
    ("_per_context", "per context"),
    ("_per_engine", "instructions"),
    ("pe_count", "PEs"),
    ("channels", "channels"),
    ("cycles_per_instruction", "cycles"),
    ("hardware_contexts", "contexts"),
    ("cores", "cores"),
    ("threads_per_core", "threads"),
    ("cols", "tiles"),
    ("rows", "tiles"),
    ("virtual_channels", "VCs"),
    ("circuit_stages", "stages"),
    ("pipeline_stages", "stages"),
    ("mutexes", "mutexes"),
    ("ethernet_ports", "ports"),
)


def unit_of(key: str, value: Any = None) -> str:
    """The unit of a parameter, from its name ("" when it has none: a name, a choice, a flag)."""
    if isinstance(value, (bool, str)):
        return ""
    last = key.rsplit(".", 1)[-1]
    for suffix, unit in _UNITS:
        if last.endswith(suffix):
            return unit
    return ""


def toml_value(v: Any) -> str:
    """A value as it is written in a TOML preset: true/false, quoted strings, [a, b]."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + "}"
    return str(v)


def register(app: typer.Typer) -> None:
    app.add_typer(arch_app, name="arch")


@arch_app.command("list")
def arch_list(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of a table."),
) -> None:
    """List the built-in presets (`host` is this machine once `pktflow arch measure-host` has
    measured it, else the reference machine it was measured on)."""
    rows = [pktflow.arch(n)["preset"] | {"name": n} for n in pktflow.arch_names()]
    if as_json:
        emit_json(rows)
        return
    t = Table("preset", "description")
    for r in rows:
        t.add_row(escape(r["name"]), escape(r["description"]))
    console.print(t)


@arch_app.command("measure-host")
def arch_measure_host(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of a table."),
) -> None:
    """Measure this machine (cores, threads per core, caches, clock, load latencies; a few seconds)
    and keep it as the `host` preset, which `pktflow run --predict host` and `--arch host` then
    use. Without it, `host` is the built-in preset of the reference machine it was measured on.
    The file is kept in $PKTFLOW_CACHE_DIR, else $XDG_CACHE_HOME/pktflow, else ~/.cache/pktflow,
    one per CPU model and count; delete it to go back, run again to re-measure."""
    from pktflow import _core, _ui

    _ui.err.print("measuring this machine (a clock loop, pointer chases up to 512 MiB) ...")
    doc = json.loads(_core.measure_host())
    path = doc["path"]
    if path is None:
        raise pktflow.PktflowError("no cache folder: set PKTFLOW_CACHE_DIR (or HOME) to keep the measured preset")
    target = _ui.output_path(path, "the host preset file")
    with _ui.atomic_write(target, encoding="utf-8") as f:
        f.write(doc["toml"])
    m = doc["measurement"]
    if as_json:
        emit_json({"measurement": m, "path": str(target), "preset": pktflow.arch("host")})
        return
    t = Table("measured", "value")
    t.add_row("CPU", escape(m["cpu_model"]))
    t.add_row("cores x threads per core", f"{m['cores']} x {m['threads_per_core']}")
    t.add_row("clock", f"{m['clock_mhz']} MHz" if m["clock_mhz"] else "not measurable here")
    for lvl, b in zip(("L1d", "L2", "L3"), m["cache_bytes"]):
        if b:
            t.add_row(f"{lvl} size", f"{b >> 10} KiB")
    for lvl, b, ns in m["latency_ns"]:
        t.add_row(f"{lvl} load latency", f"{ns:.1f} ns (over {b >> 10} KiB)")
    console.print(t)
    console.print(f"host preset written to {escape(str(target))}: {escape(pktflow.arch('host')['preset']['description'])}")


@arch_app.command("show")
def arch_show(
    name: str = typer.Argument(..., help='Preset name or TOML file (which may inherit with base = "npire").'),
    arch_set: Optional[List[str]] = typer.Option(
        None,
        "--set",
        metavar="KEY=VALUE",
        help="Override one parameter, value in TOML syntax (e.g. np.hardware_contexts_per_pe=4); repeatable.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of a table."),
) -> None:
    """Print an architecture with every parameter, its value (as written in TOML) and its unit."""
    a = npsim.arch(name, arch_set)
    if as_json:
        emit_json(a)
        return
    console.print(f"[bold]{escape(a['preset']['name'])}[/bold] ({a['kind']}): {escape(a['preset']['description'])}")
    if a["preset"].get("source"):
        console.print(f"source: {escape(a['preset']['source'])}")
    t = Table("parameter", "value", "unit")

    def walk(prefix: str, v) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(f"{prefix}.{k}" if prefix else k, x)
        elif v is not None:
            t.add_row(escape(prefix), escape(toml_value(v)), unit_of(prefix, v))

    walk("", a["params"])
    console.print(t)
