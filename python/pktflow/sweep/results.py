"""The tables of a sweep: one row per point and seed, the summary over seeds (mean and a 95%
confidence interval), and the comparison of two runs.

Summary convention: for each combination of the variables (and row id), each numeric metric's
mean over the seeds, its sample standard deviation, the number of seeds ``n`` and the half-width
of the 95% confidence interval of the mean, ``t(0.975, n-1) * std / sqrt(n)`` (Student's t;
empty for n = 1). Failed points are left out of the summary.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Optional

import pandas as pd
import pyarrow  # noqa: F401  (the Parquet engine: imported here so a missing one fails at once)

from pktflow import _ui
from pktflow._core import PktflowError

# Two-sided 95% quantiles of Student's t, t(0.975, df), df = 1..30; above 30 the normal 1.96
# is within 2% and used as is... interpolated through 40, 60, 120.
_T975 = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
]  # fmt: skip


def t975(df: int) -> float:
    """Student's t quantile for a two-sided 95% interval with ``df`` degrees of freedom."""
    if df < 1:
        return math.nan
    if df <= 30:
        return _T975[df - 1]
    if df <= 40:
        return 2.042 + (2.021 - 2.042) * (df - 30) / 10
    if df <= 60:
        return 2.021 + (2.000 - 2.021) * (df - 40) / 20
    if df <= 120:
        return 2.000 + (1.980 - 2.000) * (df - 60) / 60
    return 1.960


def table(exp, points, records: dict[int, dict]) -> pd.DataFrame:
    from pktflow.sweep.engine import rows_of

    rows = []
    for i, p in enumerate(points):
        if i in records:
            rows.extend(rows_of(exp, p, records[i]))
    cols = [*exp.variables()]
    if exp.seeds:
        cols.append("seed")
    if exp.rows is not None:
        cols += ["row", *exp.row_id, *exp.keep_root]
    cols += [*exp.keep, "error", "key"]
    df = pd.DataFrame(rows, columns=cols)
    # A variable whose values mix types (typically `false`, the option left out, beside strings)
    # is stored as text, `false` as an empty cell: a Parquet column holds one type.
    from pktflow.sweep.experiment import _text

    for c in exp.variables():
        kinds = {type(v) for v in df[c] if v is not None}
        if len(kinds) > 1 and kinds & {str, bool}:
            df[c] = pd.Series([None if v is None or v is False else _text(v) for v in df[c]], dtype=object)
    return df


def group_columns(exp_json: dict, df: pd.DataFrame) -> list[str]:
    """The columns that identify a point apart from its seed."""
    m = exp_json.get("metrics") or {}
    cols = list(exp_json.get("vary") or {})
    if m.get("rows"):
        cols += ["row", *m.get("id", [])]
    return [c for c in cols if c in df.columns]


def metric_columns(exp_json: dict, df: pd.DataFrame) -> list[str]:
    m = exp_json.get("metrics") or {}
    cols = [*(m.get("keep_root") or {}), *(m.get("keep") or {})]
    return [c for c in cols if c in df.columns and pd.api.types.is_numeric_dtype(df[c])]


def summarize(exp_json: dict, df: pd.DataFrame) -> pd.DataFrame:
    """Mean, std, n and 95% CI half-width of every numeric metric over the seeds."""
    ok = df[df["error"].isna()] if "error" in df.columns else df
    keys = group_columns(exp_json, ok)
    mets = metric_columns(exp_json, ok)
    if ok.empty:
        return pd.DataFrame(columns=[*keys])
    if not keys:
        ok = ok.assign(_all=0)
        keys = ["_all"]
    g = ok.groupby(keys, sort=False, dropna=False)
    parts = {"n": g.size()}
    for m in mets:
        mean = g[m].mean()
        std = g[m].std(ddof=1)
        n = g[m].count()
        ci = [
            t975(int(k) - 1) * s / math.sqrt(k) if k > 1 and not math.isnan(s) else math.nan
            for k, s in zip(n, std, strict=True)
        ]
        parts[f"{m}_mean"] = mean
        parts[f"{m}_std"] = std
        parts[f"{m}_ci95"] = pd.Series(ci, index=mean.index)
    out = pd.DataFrame(parts).reset_index()
    return out.drop(columns=["_all"], errors="ignore")


def write_tables(exp, points, records: dict[int, dict], out: Path) -> None:
    df = table(exp, points, records)
    with _ui.atomic_path(out / "results.parquet") as tmp:
        df.to_parquet(tmp, index=False, engine="pyarrow")
    with _ui.atomic_path(out / "results.csv") as tmp:
        df.to_csv(tmp, index=False)
    s = summarize(exp.to_json(), df)
    with _ui.atomic_path(out / "summary.csv") as tmp:
        s.to_csv(tmp, index=False)


# ---------------------------------------------------------------------------------------------
# reading a sweep folder


def load_run(path: str | Path) -> tuple[dict, pd.DataFrame]:
    """A sweep folder's manifest and results table (``sweep.json`` + ``results.parquet``)."""
    d = Path(path)
    if not d.is_dir():
        raise PktflowError(f"{d}: not a sweep folder (no such directory)")
    try:
        manifest = json.loads((d / "sweep.json").read_text())
    except FileNotFoundError:
        raise PktflowError(f"{d}: not a sweep folder (no sweep.json; made by 'pktflow sweep --out'?)") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise PktflowError(f"{d}/sweep.json: unreadable: {e}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("experiment"), dict):
        raise PktflowError(f"{d}/sweep.json: not a sweep manifest")
    try:
        df = pd.read_parquet(d / "results.parquet", engine="pyarrow")
    except FileNotFoundError:
        raise PktflowError(f"{d}: no results.parquet") from None
    except Exception as e:  # pyarrow raises several kinds for a corrupt file
        raise PktflowError(f"{d}/results.parquet: unreadable: {type(e).__name__}: {e}") from None
    return manifest, df


def compare(a: str | Path, b: str | Path, rel_tol: float = 0.0) -> dict:
    """The same points of two sweeps side by side: for every numeric metric both have, A, B,
    B - A and (B - A) / |A|. Points are matched on the variables, the row id and the seed."""
    if not (math.isfinite(rel_tol) and rel_tol >= 0):
        raise PktflowError(f"--tolerance must be a finite number at least 0, got {rel_tol}")
    ma, da = load_run(a)
    mb, db = load_run(b)
    ea, eb = ma["experiment"], mb["experiment"]
    keys = [c for c in group_columns(ea, da) if c in db.columns]
    if "seed" in da.columns and "seed" in db.columns:
        keys.append("seed")
    mets = [c for c in metric_columns(ea, da) if c in metric_columns(eb, db)]
    if not mets:
        raise PktflowError(f"{a} and {b} have no numeric metric in common")
    da = da[da["error"].isna()] if "error" in da.columns else da
    db = db[db["error"].isna()] if "error" in db.columns else db
    if keys:
        j = da[keys + mets].merge(db[keys + mets], on=keys, how="outer", suffixes=("_a", "_b"), indicator=True)
    else:
        j = da[mets].reset_index(drop=True).join(db[mets].reset_index(drop=True), lsuffix="_a", rsuffix="_b")
        j["_merge"] = "both"
    both = j[j["_merge"] == "both"].copy()
    rows = []
    differing = 0
    max_rel = 0.0
    for _, r in both.iterrows():
        row: dict[str, Any] = {k: _plain(r[k]) for k in keys}
        diff_here = False
        for m in mets:
            x, y = _plain(r[f"{m}_a"]), _plain(r[f"{m}_b"])
            d = None if x is None or y is None else y - x
            rel = None
            if d is not None and x != 0:
                rel = d / abs(x)
            elif d is not None:
                rel = 0.0 if d == 0 else None  # A is 0 and B is not: no relative difference
            row[m] = {"a": x, "b": y, "diff": d, "rel": rel}
            if (x is None) != (y is None) or (rel is None and d) or (rel is not None and abs(rel) > rel_tol):
                diff_here = True
            if rel is not None and math.isfinite(rel):
                max_rel = max(max_rel, abs(rel))
        differing += diff_here
        rows.append(row)
    return {
        "a": str(a),
        "b": str(b),
        "versions": {"a": ma.get("pktflow_version"), "b": mb.get("pktflow_version")},
        "keys": keys,
        "metrics": mets,
        "matched": len(both),
        "only_in_a": int((j["_merge"] == "left_only").sum()),
        "only_in_b": int((j["_merge"] == "right_only").sum()),
        "differing": differing,
        "tolerance": rel_tol,
        "max_relative_difference": max_rel,
        "points": rows,
    }


def _plain(x: Any) -> Any:
    if x is None:
        return None
    try:
        if pd.isna(x):
            return None
    except (TypeError, ValueError):
        pass
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def explode_json(df: pd.DataFrame, col: str) -> Optional[pd.Series]:
    """A JSON-encoded column back as Python values (for cells that held lists or tables)."""
    if col not in df.columns:
        return None
    return df[col].map(lambda v: json.loads(v) if isinstance(v, str) and v[:1] in "[{" else v)
