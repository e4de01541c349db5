"""``pktflow arch list`` and ``pktflow arch show``: architecture presets. Wired into the main CLI by
``pktflow.cli``."""

from __future__ import annotations

import typer
from rich.table import Table

import pktflow
from pktflow._ui import console, emit_json

arch_app = typer.Typer(help="Architecture presets (TOML, every parameter with its unit).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(arch_app, name="arch")


@arch_app.command("list")
def arch_list(as_json: bool = typer.Option(False, "--json")) -> None:
    """List the built-in presets."""
    rows = [pktflow.arch(n)["preset"] | {"name": n} for n in pktflow.arch_names()]
    if as_json:
        emit_json(rows)
        return
    t = Table("preset", "description")
    for r in rows:
        t.add_row(r["name"], r["description"])
    console.print(t)


@arch_app.command("show")
def arch_show(
    name: str = typer.Argument(..., help="Preset name or TOML file."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Print an architecture with every parameter and its unit."""
    a = pktflow.arch(name)
    if as_json:
        emit_json(a)
        return
    console.print(f"[bold]{a['preset']['name']}[/bold] ({a['kind']}): {a['preset']['description']}")
    if a["preset"].get("source"):
        console.print(f"source: {a['preset']['source']}")
    t = Table("parameter", "value")

    def walk(prefix: str, v) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(f"{prefix}.{k}" if prefix else k, x)
        else:
            t.add_row(prefix, str(v))

    walk("", a["params"])
    console.print(t)
