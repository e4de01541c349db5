"""``pktflow report DIR --html OUT.html``: one self-contained HTML page for a sweep folder: the
plots (PNG from matplotlib, embedded as base64 data URIs; error bars are 95% confidence intervals
of the mean where seeds repeat), the summary and results tables, and the settings (the experiment
as resolved, the pktflow version, the counts). No external URL, script or stylesheet."""

from __future__ import annotations

import base64
import html
import io
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from pktflow._core import PktflowError
from pktflow.sweep.results import group_columns, load_run, metric_columns, summarize

#: Most plots of one report (one per metric), most lines per plot, most result rows in the table.
MAX_PLOTS = 12
MAX_SERIES = 12
MAX_TABLE_ROWS = 2000


def _choose(exp: dict, df: pd.DataFrame) -> tuple[str | None, list[str], list[str]]:
    plot = exp.get("plot") or {}
    keys = group_columns(exp, df)
    mets = metric_columns(exp, df)
    x = plot.get("x")
    if x is None:
        num = [k for k in keys if pd.api.types.is_numeric_dtype(df[k]) and k != "row"]
        x = num[0] if num else (keys[0] if keys else None)
    ys = plot.get("y") or mets
    ys = [y for y in ys if y in mets][:MAX_PLOTS]
    series = plot.get("series")
    if series is None:
        series = [k for k in keys if k not in (x, "row")]
    elif isinstance(series, str):
        series = [series]
    return x, ys, [s for s in series if s in df.columns]


def _figure(summary: pd.DataFrame, x: str, y: str, series: list[str], exp: dict) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.2), dpi=100)
    groups = [((), summary)] if not series else list(summary.groupby(series, sort=False, dropna=False))
    for label, g in groups[:MAX_SERIES]:
        g = g.sort_values(x) if x in g.columns else g
        xs = g[x] if x in g.columns else range(len(g))
        ys = g[f"{y}_mean"]
        ci = g.get(f"{y}_ci95")
        name = ", ".join(
            f"{s}={v}" for s, v in zip(series, label if isinstance(label, tuple) else (label,), strict=False)
        )
        if ci is not None and ci.notna().any():
            ax.errorbar(xs, ys, yerr=ci.fillna(0), marker="o", capsize=3, label=name or y)
        else:
            ax.plot(xs, ys, marker="o", label=name or y)
    p = exp.get("plot") or {}
    if p.get("logx"):
        ax.set_xscale("log")
    if p.get("logy"):
        ax.set_yscale("log")
    ax.set_xlabel(x or "point")
    ax.set_ylabel(y)
    ax.set_title(
        f"{y} against {x}"
        + (" (error bars: 95% CI over seeds)" if (summary.get("n", pd.Series([1])) > 1).any() else ""),
        fontsize=10,
    )
    ax.grid(True, alpha=0.3)
    if x in summary.columns and not pd.api.types.is_numeric_dtype(summary[x]):
        ax.tick_params(axis="x", labelrotation=30)
    if ax.get_legend_handles_labels()[0] and (len(groups) > 1 or series):
        # Beside the axes, so it hides no line.
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _table(df: pd.DataFrame, limit: int) -> str:
    more = ""
    if len(df) > limit:
        more = f"<p>First {limit:,} of {len(df):,} rows (all rows are in results.parquet / results.csv).</p>"
        df = df.head(limit)
    return df.to_html(index=False, na_rep="", float_format=lambda v: f"{v:.6g}", border=0, classes="t") + more


def render(folder: str | Path) -> str:
    """The HTML page of a sweep folder (as a string)."""
    manifest, df = load_run(folder)
    exp = manifest["experiment"]
    if df.empty or (manifest.get("failed") or 0) >= (manifest.get("points") or 0):
        # every point failed (or none ran): the summary has no metric columns to plot
        errors = manifest.get("errors") or []
        first = f" (the first: {str(errors[0]).removeprefix('error: ')})" if errors else ""
        raise PktflowError(
            f"{folder}: no point of the sweep succeeded ({manifest.get('failed', 0)} failed{first}): nothing to report"
        )
    summary = summarize(exp, df)
    x, ys, series = _choose(exp, df)
    title = exp.get("title") or " ".join(exp.get("command", [])) or "sweep"
    figs = []
    for y in ys:
        if x is None or x not in summary.columns or f"{y}_mean" not in summary.columns:
            continue
        png = _figure(summary, x, y, series, exp)
        figs.append(
            f'<figure class="plot" id="plot-{html.escape(y)}"><img alt="{html.escape(y)} against {html.escape(x)}" '
            f'src="data:image/png;base64,{png}">'
            f"<figcaption>{html.escape(y)} against {html.escape(x)}</figcaption></figure>"
        )
    counts = {k: manifest.get(k) for k in ("points", "done", "failed", "interrupted")}
    last = manifest.get("timing") or {}
    counts.update({f"last run: {k}": last.get(k) for k in ("computed", "reused", "engine", "workers")})
    settings = {
        "pktflow version": manifest.get("pktflow_version"),
        "experiment file": manifest.get("source"),
        **counts,
    }
    errors = manifest.get("errors") or []
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}"
        "table.t{border-collapse:collapse;font-size:12px;margin:1em 0}"
        "table.t td,table.t th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
        "figure.plot{display:inline-block;margin:0.5em}figure.plot img{max-width:100%}"
        "pre{background:#f4f4f4;padding:1em;overflow:auto;font-size:12px}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    if exp.get("description"):
        parts.append(f"<p>{html.escape(exp['description'])}</p>")
    parts.append(
        "<p>Command of every point: <code>pktflow "
        + html.escape(" ".join([*exp.get("command", []), *exp.get("args", [])]))
        + " ...</code>; one row per point and seed in results.parquet. Summary: mean over seeds and "
        "the half-width of the 95% confidence interval of the mean (Student's t).</p>"
    )
    parts.append("<h2>Plots</h2>")
    parts.append("".join(figs) if figs else "<p>No numeric metric to plot.</p>")
    parts.append("<h2>Summary over seeds</h2>" + _table(summary, MAX_TABLE_ROWS))
    parts.append("<h2>Results</h2>" + _table(df.drop(columns=["key"], errors="ignore"), MAX_TABLE_ROWS))
    if errors:
        parts.append("<h2>Failed points</h2><ul>" + "".join(f"<li>{html.escape(e)}</li>" for e in errors) + "</ul>")
    parts.append(
        "<h2>Settings</h2>" + _table(pd.DataFrame([{"setting": k, "value": str(v)} for k, v in settings.items()]), 100)
    )
    parts.append("<pre id='experiment'>" + html.escape(json.dumps(exp, indent=2, default=str)) + "</pre>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write(folder: str | Path, out: str | Path) -> int:
    """Write the page to ``out`` atomically; returns the number of plots."""
    from pktflow import _ui

    page = render(folder)
    with _ui.atomic_write(out, encoding="utf-8") as f:
        f.write(page)
    return page.count('<figure class="plot"')


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)
