"""Sweeps at scale: experiment files (:mod:`.experiment`), a local process pool or a Dask cluster
over the points with resume (:mod:`.engine`), tables with confidence intervals and comparisons
(:mod:`.results`) and a self-contained HTML report (:mod:`.report`). See docs/sweeps.md."""

from pktflow.sweep.engine import run_point, run_sweep
from pktflow.sweep.experiment import Experiment, load, override, parse
from pktflow.sweep.results import compare, load_run, summarize

__all__ = ["Experiment", "compare", "load", "load_run", "override", "parse", "run_point", "run_sweep", "summarize"]
