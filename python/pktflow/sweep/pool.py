"""The local process pool of ``pktflow sweep`` for Python callers (the experiment scripts): run a
module-level function over a list of arguments on every core and get the results back in the
order of the arguments, so a script's output does not depend on the number of workers."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing as mp
from typing import Any, Callable, Optional, Sequence

from pktflow import _ui
from pktflow.sweep.engine import _worker_init, default_workers


def map_ordered(
    fn: Callable[..., Any],
    args: Sequence[tuple],
    *,
    workers: Optional[int] = None,
    what: str = "runs",
    label: Optional[Callable[[tuple], str]] = None,
    on_result: Optional[Callable[[int, Any], None]] = None,
    progress: bool = True,
) -> list:
    """``[fn(*a) for a in args]`` on ``workers`` processes (default: every core; 1 runs in this
    process), in the order of ``args``, with progress (done/total, rate, ETA) on stderr unless
    ``progress`` is false. ``on_result(i, value)`` is called in this process as each call
    finishes (in completion order), so a caller can keep results before the last one is done.
    ``fn`` must be importable by name (a module-level function) because workers are spawned. On
    Ctrl-C the workers are stopped and KeyboardInterrupt is raised."""
    n = workers or default_workers()
    out: list = [None] * len(args)

    def done_one(i: int, v: Any) -> None:
        out[i] = v
        if on_result is not None:
            on_result(i, v)

    with _ui.progress(what, "runs", len(args)) if progress else contextlib.nullcontext() as bar:

        def tick(done: int, i: int) -> None:
            if bar is not None:
                bar.update(done, label=label(args[i]) if label else None)

        if n <= 1 or len(args) <= 1:
            for i, a in enumerate(args):
                done_one(i, fn(*a))
                tick(i + 1, i)
            return out
        ex = cf.ProcessPoolExecutor(
            max_workers=min(n, len(args)), mp_context=mp.get_context("spawn"), initializer=_worker_init
        )
        try:
            futs = {ex.submit(fn, *a): i for i, a in enumerate(args)}
            for done, f in enumerate(cf.as_completed(futs), 1):
                i = futs[f]
                done_one(i, f.result())
                tick(done, i)
        except BaseException:
            procs = list((getattr(ex, "_processes", None) or {}).values())
            ex.shutdown(wait=False, cancel_futures=True)
            for p in procs:
                p.terminate()
            raise
        ex.shutdown(wait=True)
    return out
