"""Running a sweep: every point is one run of a ``pktflow`` command (in-process, ``--json``
captured) on a local process pool or a Dask distributed cluster; each finished point's JSON is
written atomically as it arrives, so an interrupted or crashed sweep resumes where it stopped.

The output folder holds (docs/sweeps.md):

* ``points/KEY.json``: one file per finished point: its values, seed, command line, exit code,
  error if any, and the command's whole JSON result (with its ``run`` record);
* ``computed.log``: one line per point computed by a run (resumed points are not in it);
* ``results.parquet`` and ``results.csv``: one row per point and seed (per item with
  ``metrics.rows``), the variables, the seed, the kept metrics and the point's key;
* ``summary.csv``: the metrics averaged over seeds with a 95% confidence interval;
* ``sweep.json``: the experiment as resolved, the pktflow version, and the counts.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from pktflow import _ui
from pktflow._core import PktflowError
from pktflow.sweep.experiment import Experiment, Point, get_path

_IN_POINT = False
#: Longest wait without a progress update while points run (progress lines still come at the
#: interval of ``pktflow._ui.Progress``; this only wakes the loop to print them).
HEARTBEAT_SECONDS = 1.0


def _worker_init() -> None:
    """Local pool workers: Ctrl-C during a point stops the point (the command's own handling);
    between points it ends the worker quietly."""

    def handler(signum, frame):  # pragma: no cover - runs in the worker
        if _IN_POINT:
            raise KeyboardInterrupt
        os._exit(130)

    signal.signal(signal.SIGINT, handler)
    # SIGTERM (the sweep stopping its pool) ends a point the same way: its temporary files go.
    signal.signal(signal.SIGTERM, handler)


def run_point(argv: list[str], cwd: Optional[str] = None) -> dict:
    """Run ``pktflow ARGV --json`` in this process and return ``{"exit", "result" | "error",
    "worker", "wall_seconds"}`` (the unit of work of both engines)."""
    global _IN_POINT
    from pktflow import cli

    out, errs = io.StringIO(), io.StringIO()
    args = [*argv, "--json"]
    old_argv = sys.argv
    t0 = time.monotonic()
    code = 0
    _IN_POINT = True
    try:
        sys.argv = ["pktflow", *args]
        with contextlib.ExitStack() as st:
            if cwd and os.path.isdir(cwd):
                st.enter_context(contextlib.chdir(cwd)) if hasattr(contextlib, "chdir") else _chdir(st, cwd)
            st.enter_context(contextlib.redirect_stdout(out))
            st.enter_context(contextlib.redirect_stderr(errs))
            try:
                cli.main(args)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except KeyboardInterrupt:
                code = 130
            except Exception as e:  # an internal error of the command: reported, not fatal
                code = 1
                errs.write(f"error: internal error: {type(e).__name__}: {e}\n")
    finally:
        _IN_POINT = False
        sys.argv = old_argv
    rec: dict[str, Any] = {
        "exit": code,
        "worker": f"{socket.gethostname()}:{os.getpid()}",
        "wall_seconds": time.monotonic() - t0,
    }
    if code == 0:
        try:
            rec["result"] = json.loads(out.getvalue())
        except json.JSONDecodeError:
            rec["exit"] = 1
            rec["error"] = "the command did not print one JSON document"
    if rec["exit"] != 0 and "error" not in rec:
        lines = [ln for ln in errs.getvalue().splitlines() if ln.strip()]
        rec["error"] = lines[-1] if lines else f"exit code {code}"
    return rec


def _chdir(st: contextlib.ExitStack, cwd: str) -> None:  # Python 3.10
    old = os.getcwd()
    os.chdir(cwd)
    st.callback(os.chdir, old)


# ---------------------------------------------------------------------------------------------
# executors: both yield (point index, record) as points finish


class LocalPool:
    """A process pool over this machine's cores (spawn: the Rust extension is not fork-safe)."""

    name = "local"

    def __init__(self, workers: int):
        import concurrent.futures as cf
        import multiprocessing as mp

        self.workers = workers
        self._cf = cf
        self._ex = cf.ProcessPoolExecutor(
            max_workers=workers, mp_context=mp.get_context("spawn"), initializer=_worker_init
        )

    def run(self, jobs: list[tuple[int, list[str]]], cwd: str) -> Iterable[tuple[Optional[int], Optional[dict]]]:
        futs = {self._ex.submit(run_point, argv, cwd): i for i, argv in jobs}
        pending = set(futs)
        while pending:
            done, pending = self._cf.wait(pending, timeout=HEARTBEAT_SECONDS, return_when=self._cf.FIRST_COMPLETED)
            if not done:
                yield None, None  # nothing finished for a while: let the progress line say so
            for f in done:
                yield futs[f], f.result()

    def stop(self) -> None:
        procs = list((getattr(self._ex, "_processes", None) or {}).values())
        self._ex.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            with contextlib.suppress(Exception):
                p.terminate()

    def close(self) -> None:
        self._ex.shutdown(wait=True)


class DaskCluster:
    """A Dask distributed cluster the user started (``dask scheduler`` and ``dask worker``);
    pktflow only connects to its scheduler."""

    name = "dask"

    def __init__(self, address: str):
        try:
            from distributed import Client
        except ImportError:  # pragma: no cover - a declared dependency
            raise PktflowError("--cluster needs the 'distributed' package (pip install 'dask[distributed]')") from None
        try:
            self.client = Client(address, timeout="10s")
        except (OSError, TimeoutError, ValueError) as e:
            raise PktflowError(f"--cluster {address}: cannot connect to a Dask scheduler: {e}") from None
        self.workers = len(self.client.scheduler_info().get("workers", {}))
        if self.workers == 0:
            with contextlib.suppress(Exception):
                self.client.wait_for_workers(1, timeout=10)
            self.workers = len(self.client.scheduler_info().get("workers", {}))
        if self.workers == 0:
            self.client.close()
            raise PktflowError(f"--cluster {address}: the scheduler has no worker")
        self._futs: list = []

    def run(self, jobs: list[tuple[int, list[str]]], cwd: str) -> Iterable[tuple[int, dict]]:
        from distributed import as_completed

        futs = {}
        for i, argv in jobs:
            f = self.client.submit(
                run_point, argv, cwd, pure=False, key=f"pktflow-point-{i}-{os.getpid()}-{time.time_ns()}"
            )
            futs[f] = i
        self._futs = list(futs)
        ac = as_completed(futs)
        last = time.monotonic()
        while not ac.is_empty():
            batch = ac.next_batch(block=False)
            if not batch:
                if time.monotonic() - last >= HEARTBEAT_SECONDS:
                    last = time.monotonic()
                    yield None, None
                time.sleep(0.02)
                continue
            last = time.monotonic()
            for f in batch:
                yield futs[f], f.result()

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.client.cancel(self._futs)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()


# ---------------------------------------------------------------------------------------------
# the sweep


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def point_path(out: Path, key: str) -> Path:
    return out / "points" / f"{key}.json"


def computed_hashes(out: Path) -> dict[str, str]:
    """The SHA-256 of each point file as it was written, from ``computed.log`` (the last line of
    a key wins)."""
    hashes: dict[str, str] = {}
    try:
        lines = (out / "computed.log").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return hashes
    for ln in lines:
        try:
            d = json.loads(ln)
        except json.JSONDecodeError:
            continue
        if isinstance(d, dict) and isinstance(d.get("key"), str) and isinstance(d.get("sha256"), str):
            hashes[d["key"]] = d["sha256"]
    return hashes


def _sha256_text(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_point(
    out: Path, key: str, hashes: Optional[dict[str, str]] = None, changed: Optional[list] = None
) -> Optional[dict]:
    """A finished point's record, or None when it is missing, unreadable or changed since it was
    computed (its SHA-256 is not the one ``computed.log`` recorded): then it is computed again,
    and its key is added to ``changed`` when the file was there."""
    p = point_path(out, key)
    if hashes is None:
        hashes = computed_hashes(out)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if hashes.get(key) != _sha256_text(text):
        if changed is not None:
            changed.append(key)
        return None
    try:
        d = json.loads(text)
    except json.JSONDecodeError:
        return None
    # Kept: successes and bad-input refusals (exit 2, deterministic). An internal error or an
    # interruption is run again.
    return d if isinstance(d, dict) and d.get("key") == key and d.get("exit") in (0, 2) else None


#: Files a sweep writes in its folder (besides ``points/``).
SWEEP_FILES = ("results.parquet", "results.csv", "summary.csv", "sweep.json", "computed.log")


def experiment_id(exp: Experiment) -> str:
    """What the results of a sweep folder mean (see :func:`experiment_id_of`)."""
    return experiment_id_of(exp.to_json())


def experiment_id_of(j: dict) -> str:
    """What the results of a sweep folder mean, from an experiment's resolved description: the
    command, its fixed arguments and options, the names of the variables and the seed option, and
    the metrics kept. Values of variables and seeds are not in it: adding values or seeds resumes
    (only the new points run)."""
    ident = {
        "command": j.get("command"),
        "args": j.get("args"),
        "options": j.get("options"),
        "variables": sorted(j.get("vary") or {}),
        "zip": j.get("zip"),
        "seed_option": (j.get("seeds") or {}).get("option"),
        "metrics": j.get("metrics"),
    }
    return _sha256_text(json.dumps(ident, sort_keys=True, default=str))[:20]


def check_folder(exp: Experiment, out: Path) -> None:
    """Refuse (one line) to sweep into a folder holding another experiment's results (its
    ``sweep.json`` records another experiment) or files a sweep would replace without a
    ``sweep.json`` saying whose they are."""
    manifest = out / "sweep.json"
    if manifest.exists():
        try:
            m = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            m = None
        if not isinstance(m, dict):
            raise PktflowError(f"--out {out}: its sweep.json is not a sweep's record; choose another folder")
        theirs = m.get("experiment_id")
        if theirs is None and isinstance(m.get("experiment"), dict):
            theirs = experiment_id_of(m["experiment"])
        if theirs != experiment_id(exp):
            src = m.get("source") or "another experiment"
            raise PktflowError(
                f"--out {out}: holds the results of another experiment ({src}); "
                "choose another folder (the same experiment resumes into its own)"
            )
        return
    present = [f for f in SWEEP_FILES if (out / f).exists()]
    if present:
        raise PktflowError(
            f"--out {out}: holds {present[0]} but no sweep.json saying which experiment made it; "
            "choose another folder"
        )


def run_sweep(
    exp: Experiment,
    out: Path,
    *,
    workers: Optional[int] = None,
    cluster: Optional[str] = None,
    on_progress: Optional[Callable[[int, int, str], None]] = None,
) -> dict:
    """Run (or resume) the sweep into folder ``out``; returns the manifest (also ``sweep.json``).
    Raises :class:`pktflow._ui.Interrupted` after saving what finished when Ctrl-C stops it."""
    import pktflow

    points = exp.points()
    check_folder(exp, out)
    (out / "points").mkdir(parents=True, exist_ok=True)
    records: dict[int, dict] = {}
    todo = []
    hashes = computed_hashes(out)
    changed: list[str] = []
    for i, p in enumerate(points):
        r = load_point(out, p.key, hashes, changed)
        if r is not None:
            records[i] = r
        else:
            todo.append(i)
    for key in changed:
        _ui.err.print(
            f"warning: {point_path(out, key)} was changed after it was computed "
            "(not the SHA-256 computed.log recorded): computing it again"
        )
    reused = len(records)
    cwd = os.getcwd()
    manifest: dict[str, Any] = {
        "experiment": exp.to_json(),
        "experiment_id": experiment_id(exp),
        "source": exp.source,
        "pktflow_version": pktflow.__version__,
        "points": len(points),
        "cwd": cwd,
    }
    # Say whose folder this is before any point runs (a killed sweep leaves no other record).
    if not (out / "sweep.json").exists():
        with _ui.atomic_write(out / "sweep.json") as f:
            json.dump({**manifest, "done": reused, "interrupted": True}, f, indent=2, allow_nan=False)
    engine = None
    interrupted = False
    computed = 0
    per_worker: dict[str, int] = {}
    t0 = time.monotonic()
    total = len(points)
    try:
        if todo:
            if cluster:
                engine = DaskCluster(cluster)
            else:
                n = workers or default_workers()
                engine = LocalPool(min(n, len(todo)))
            with _ui.progress("sweep", "points", total) as prog, open(out / "computed.log", "a") as log:
                prog.update(reused, total, f"{reused} resumed" if reused else "")
                if on_progress:
                    on_progress(reused, total, "")
                label = ""
                for i, rec in engine.run([(i, points[i].argv) for i in todo], cwd):
                    if i is None or rec is None:
                        prog.update(reused + computed, total, label)
                        continue
                    if rec["exit"] == 130:
                        interrupted = True
                        continue
                    p = points[i]
                    full = {"key": p.key, "values": p.values, "seed": p.seed, "argv": p.argv, **rec}
                    text = json.dumps(full, allow_nan=False)
                    with _ui.atomic_write(point_path(out, p.key), encoding="utf-8") as f:
                        f.write(text)
                    # Then its SHA-256, checked when resuming: a point file the log has no hash
                    # for (a sweep killed in between, an edit) is computed again, never trusted.
                    line = {"key": p.key, "worker": rec["worker"], "sha256": _sha256_text(text)}
                    log.write(json.dumps(line) + "\n")
                    log.flush()
                    records[i] = full
                    computed += 1
                    w = rec.get("worker", "?")
                    per_worker[w] = per_worker.get(w, 0) + 1
                    label = ""
                    if len(per_worker) > 1 or engine.name == "dask":
                        label = "per worker: " + ", ".join(f"{k} {v}" for k, v in sorted(per_worker.items()))
                    done = reused + computed
                    prog.update(done, total, label)
                    if on_progress:
                        on_progress(done, total, label)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if engine is not None:
            if interrupted:
                engine.stop()
            else:
                engine.close()
    wall = time.monotonic() - t0
    failed = {i: r for i, r in records.items() if r.get("exit") != 0}
    manifest.update(
        {
            "done": len(records),
            "failed": len(failed),
            "interrupted": interrupted or len(records) < total,
            # What this run did (a resumed run differs from the first one, not its results):
            # under "timing", which `pktflow rerun` does not compare.
            "timing": {
                "reused": reused,
                "computed": computed,
                "wall_seconds": wall,
                "engine": engine.name if engine else None,
                "workers": engine.workers if engine else 0,
                "per_worker": per_worker,
            },
        }
    )
    if failed:
        msgs = sorted({r.get("error", "") for r in failed.values()})
        manifest["errors"] = msgs[:20]
    from pktflow.sweep.results import write_tables

    write_tables(exp, points, records, out)
    with _ui.atomic_write(out / "sweep.json") as f:
        json.dump(manifest, f, indent=2, allow_nan=False)
    if interrupted:
        raise _ui.Interrupted()
    return manifest


def rows_of(exp: Experiment, p: Point, rec: dict) -> list[dict]:
    """The table rows of one finished point."""
    base: dict[str, Any] = dict(p.values)
    if exp.seeds:
        base["seed"] = p.seed
    base["key"] = p.key
    if rec.get("exit") != 0:
        return [{**base, "error": rec.get("error", "failed")}]
    doc = rec.get("result")
    if exp.rows is None:
        row = dict(base)
        for col, path in exp.keep.items():
            row[col] = _cell(get_path(doc, path))
        row["error"] = None
        return [row]
    items = get_path(doc, exp.rows)
    if not isinstance(items, list):
        return [{**base, "error": f"metrics.rows: {exp.rows!r} is not a list in the result"}]
    root = {col: _cell(get_path(doc, path)) for col, path in exp.keep_root.items()}
    out = []
    for k, it in enumerate(items):
        row = dict(base)
        row["row"] = k
        for c in exp.row_id:
            row[c] = _cell(get_path(it, c))
        row.update(root)
        for col, path in exp.keep.items():
            row[col] = _cell(get_path(it, path))
        row["error"] = None
        out.append(row)
    return out


def _cell(x: Any) -> Any:
    if isinstance(x, (dict, list)):
        return json.dumps(x, sort_keys=True)
    return x
