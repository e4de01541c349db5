"""``pktflow sweep``, ``pktflow compare-runs`` and ``pktflow report``: sweeps from experiment
files on every local core or a Dask cluster, resumable; two runs compared point by point; an
HTML report. The machinery is :mod:`pktflow.sweep` (docs/sweeps.md)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import List, Optional

import typer
from rich.markup import escape
from rich.table import Table

from pktflow import _ui
from pktflow._core import PktflowError


def sweep(
    experiment: Path = typer.Argument(
        ..., help="The experiment file (TOML): command, options, variables, seeds, metrics."
    ),
    out: Path = typer.Option(..., "--out", help="Folder of the results; run the same command again to resume into it."),
    workers: Optional[int] = typer.Option(
        None,
        "--workers",
        min=1,
        max=1024,
        help="Points run at once on this machine, one process each. Default: every core.",
    ),
    cluster: Optional[str] = typer.Option(
        None,
        "--cluster",
        help="Address of a running Dask scheduler (e.g. tcp://host:8786) to run the points on its workers "
        "instead of this machine's cores.",
    ),
    set_: Optional[List[str]] = typer.Option(
        None,
        "--set",
        help="NAME=VALUE: replace a fixed option of the file, or a variable's values (comma-separated). Repeatable.",
    ),
    seeds: Optional[str] = typer.Option(None, "--seeds", help="Comma-separated seeds replacing the file's."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="List the points' command lines (and which are done) without running."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the sweep's summary record as JSON."),
) -> None:
    """Run every point of an experiment file (each a pktflow command with one value per variable
    and one seed), keep each point's JSON, and write results.parquet/.csv (one row per point and
    seed) and summary.csv (mean and 95% confidence interval over seeds) into --out. Points already
    in --out are not run again, so the same command resumes an interrupted sweep."""
    from pktflow import sweep as sw
    from pktflow.sweep.engine import load_point

    if workers is not None and cluster is not None:
        raise PktflowError("--workers and --cluster exclude each other (a cluster's size is its workers')")
    exp = sw.override(sw.load(experiment), set_ or [], seeds)
    outdir = _ui.output_dir(out, "--out")
    assert outdir is not None
    if dry_run:
        from pktflow.sweep.engine import computed_hashes

        hashes = computed_hashes(outdir)
        pts = exp.points()
        t = Table(title=f"{len(pts)} points")
        t.add_column("done")
        t.add_column("key")
        t.add_column("command")
        for p in pts:
            t.add_row("yes" if load_point(outdir, p.key, hashes) else "", p.key, escape("pktflow " + " ".join(p.argv)))
        _ui.console.print(t)
        return
    try:
        m = sw.run_sweep(exp, outdir, workers=workers, cluster=cluster)
    except _ui.Interrupted:
        _ui.err.print(f"stopped: the finished points are saved in {outdir}; run the same command to resume")
        raise
    if m["failed"] and m["failed"] == m["points"]:
        first = m.get("errors", ["?"])[0].removeprefix("error: ")
        raise PktflowError(f"{experiment}: every point failed: {first}")
    if as_json:
        _ui.emit_json(m)
        return
    tm = m["timing"]
    _ui.console.print(
        f"{m['points']} points: {tm['computed']} computed, {tm['reused']} already done"
        + (f", {m['failed']} FAILED" if m["failed"] else "")
        + (f" in {tm['wall_seconds']:.1f} s on {tm['workers']} {tm['engine']} workers" if tm["engine"] else "")
    )
    for e in m.get("errors", [])[:5]:
        _ui.err.print(f"failed point: {escape(e)}")
    _ui.console.print(f"results: {outdir / 'results.parquet'} (and .csv), {outdir / 'summary.csv'}, points/*.json")


def compare_runs(
    a: Path = typer.Argument(..., help="The first sweep's --out folder."),
    b: Path = typer.Argument(..., help="The second sweep's --out folder."),
    tolerance: float = typer.Option(
        0.0, "--tolerance", help="Relative difference |B-A|/|A| up to which two values count as the same. Default: 0."
    ),
    csv_path: Optional[Path] = typer.Option(None, "--csv", help="Write one row per point and metric to this CSV file."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """The same points of two sweeps (matched on the variables, row and seed) side by side with
    their differences, and how many differ beyond --tolerance."""
    from pktflow.sweep.results import compare

    if not math.isfinite(tolerance) or tolerance < 0:
        raise PktflowError(f"--tolerance must be a finite number at least 0, got {tolerance}")
    csv_path = _ui.output_path(csv_path, "--csv")
    c = compare(a, b, tolerance)
    if csv_path is not None:
        import csv

        with _ui.atomic_write(csv_path, newline="") as f:
            w = csv.writer(f)
            w.writerow([*c["keys"], "metric", "a", "b", "diff", "rel"])
            for p in c["points"]:
                for mname in c["metrics"]:
                    v = p[mname]
                    w.writerow([*(p[k] for k in c["keys"]), mname, v["a"], v["b"], v["diff"], v["rel"]])
    if as_json:
        _ui.emit_json(c)
        return
    t = Table(title=f"{escape(str(a))} (A) against {escape(str(b))} (B)")
    for k in c["keys"]:
        t.add_column(k)
    for mname in c["metrics"]:
        t.add_column(f"{mname} A", justify="right")
        t.add_column("B", justify="right")
        t.add_column("B-A", justify="right")
        t.add_column("rel", justify="right")
    for p in c["points"]:
        cells = [str(p[k]) for k in c["keys"]]
        for mname in c["metrics"]:
            v = p[mname]
            cells += [
                _num(v["a"]),
                _num(v["b"]),
                _num(v["diff"]),
                "" if v["rel"] is None else f"{100 * v['rel']:+.2f}%",
            ]
        t.add_row(*cells)
    _ui.console.print(t)
    _ui.console.print(
        f"{c['matched']} points matched, {c['differing']} differ beyond {100 * tolerance:g}%"
        f" (largest relative difference {100 * c['max_relative_difference']:.3g}%);"
        f" only in A: {c['only_in_a']}, only in B: {c['only_in_b']}"
    )


def _num(v) -> str:
    return "" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v)


def report(
    folder: Path = typer.Argument(..., help="A sweep's --out folder."),
    html: Path = typer.Option(..., "--html", help="The HTML page to write (self-contained: plots embedded)."),
) -> None:
    """A self-contained HTML page of a sweep: its plots (error bars: 95% confidence intervals over
    seeds), the summary and results tables, and the settings."""
    from pktflow.sweep import report as rep

    out = _ui.output_path(html, "--html")
    assert out is not None
    # The page must not replace what it reports on: the folder's tables, record or points.
    from pktflow.sweep.engine import SWEEP_FILES

    if folder.is_dir():
        reads = [(f"the sweep's {f}", folder / f) for f in SWEEP_FILES]
        reads += [(f"a point of the sweep ({p.name})", p) for p in (folder / "points").glob("*.json")]
        _ui.refuse_same_file(out, "--html", reads)
    n = rep.write(folder, out)
    _ui.console.print(f"{out}: {n} plots")


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep)
    app.command("compare-runs")(compare_runs)
    app.command("report")(report)
