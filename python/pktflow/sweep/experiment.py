"""Experiment files: a TOML file that names one ``pktflow`` command, its fixed options, the
variables to sweep, the seeds to repeat and the metrics to keep (docs/sweeps.md).

Conventions:

* ``command`` is the words after ``pktflow`` (``"protoproc model"``, ``"maxrate"``); ``args`` are
  its positional arguments, where ``{name}`` stands for the value of variable ``name``.
* ``[options]`` are the command's options by their command-line names without ``--``. A value
  ``true`` is a flag given alone, ``false`` leaves the flag out, a list is joined with commas.
* ``[vary]`` gives each variable a list of values or a range ``{from, to, step}`` (``to`` included
  when a whole number of steps reaches it). Variables are crossed (every combination) except the
  groups named in ``zip = [["a", "b"], ...]``, whose lists are taken together, value by value.
* ``[seeds]``: ``option`` (default ``seed``) and ``values = [...]`` or ``count = N`` (seeds 1..N).
  Every combination of the variables runs once per seed.
* ``[metrics]``: ``keep`` maps a column name to a path into the command's JSON result
  (``"saturation.rate"``, ``"points[0].speedup"``), or is a list of paths (the column is the
  path). With ``rows = "PATH"`` the result holds a list and each item is a row; ``keep`` paths are
  then relative to the item, ``id`` names the item's keys that identify a row across points (for
  example ``["pes", "replication"]``), and ``keep_root`` keeps paths of the whole document.
* ``[plot]``: ``x``, ``y`` (list), ``series`` (a column or list of columns), ``logx``, ``title``:
  what the HTML report draws (it chooses when absent).

A point is one run of the command with one value of every variable and one seed; its key is a
hash of the command, its positional arguments, its options (as typed), the seed and the pktflow
version, so a re-run of the same sweep finds the points already done.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from pktflow._core import PktflowError
from pktflow._files import read_small_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10: the tomli package, when installed, is the same parser
    try:
        import tomli as tomllib
    except ImportError:
        tomllib = None

#: Most points (combinations times seeds) of one sweep; refused before anything is expanded.
MAX_POINTS = 1_000_000
#: Most values of one range.
MAX_RANGE_VALUES = 100_000

_TOP_KEYS = {"command", "description", "args", "options", "vary", "zip", "seeds", "metrics", "plot", "title"}
_METRIC_KEYS = {"keep", "rows", "id", "keep_root"}
_PLOT_KEYS = {"x", "y", "series", "logx", "logy", "title"}


@dataclass
class Point:
    """One run: the variables' values, the seed, the command line and its key."""

    values: dict[str, Any]
    seed: Optional[int]
    argv: list[str]
    key: str


@dataclass
class Experiment:
    command: list[str]
    args: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    vary: dict[str, list] = field(default_factory=dict)
    zip_groups: list[list[str]] = field(default_factory=list)
    seed_option: Optional[str] = None
    seeds: list[int] = field(default_factory=list)
    keep: dict[str, str] = field(default_factory=dict)
    rows: Optional[str] = None
    row_id: list[str] = field(default_factory=list)
    keep_root: dict[str, str] = field(default_factory=dict)
    plot: dict[str, Any] = field(default_factory=dict)
    title: str = ""
    description: str = ""
    source: str = ""

    # ------------------------------------------------------------------ resolved description
    def to_json(self) -> dict:
        return {
            "title": self.title,
            "description": self.description,
            "command": self.command,
            "args": self.args,
            "options": self.options,
            "vary": self.vary,
            "zip": self.zip_groups,
            "seeds": {"option": self.seed_option, "values": self.seeds} if self.seeds else None,
            "metrics": {"keep": self.keep, "rows": self.rows, "id": self.row_id, "keep_root": self.keep_root},
            "plot": self.plot,
        }

    def variables(self) -> list[str]:
        return list(self.vary)

    def count(self) -> int:
        """Points of the sweep, computed without expanding them."""
        n = 1
        for g in self._groups():
            n *= len(self.vary[g[0]])
        return n * max(1, len(self.seeds))

    def _groups(self) -> list[list[str]]:
        zipped = {v for g in self.zip_groups for v in g}
        groups = [list(g) for g in self.zip_groups]
        groups += [[v] for v in self.vary if v not in zipped]
        # Keep the file's order of variables: a group sits where its first variable is.
        order = {v: i for i, v in enumerate(self.vary)}
        groups.sort(key=lambda g: min(order[v] for v in g))
        return groups

    def points(self) -> list[Point]:
        import pktflow

        total = self.count()
        if total > MAX_POINTS:
            raise PktflowError(f"the sweep has {total:,} points, more than the limit of {MAX_POINTS:,}")
        groups = self._groups()
        combos = itertools.product(*[range(len(self.vary[g[0]])) for g in groups])
        out = []
        for idx in combos:
            values: dict[str, Any] = {}
            for g, i in zip(groups, idx, strict=True):
                for v in g:
                    values[v] = self.vary[v][i]
            ordered = {v: values[v] for v in self.vary}
            for seed in self.seeds or [None]:
                argv, opts = self.argv(ordered, seed)
                positional = argv[len(self.command) : len(self.command) + len(self.args)]
                key = point_key(self.command, positional, opts, seed, pktflow.__version__)
                out.append(Point(ordered, seed, argv, key))
        return out

    def argv(self, values: dict[str, Any], seed: Optional[int]) -> tuple[list[str], dict[str, str]]:
        """The command line of one point (without ``--json``) and its options as typed."""
        used_in_args = set()
        args = []
        for a in self.args:
            s = a
            for v, x in values.items():
                if "{" + v + "}" in s:
                    used_in_args.add(v)
                    s = s.replace("{" + v + "}", _text(x))
            args.append(s)
        opts: dict[str, Any] = dict(self.options)
        for v, x in values.items():
            if v not in used_in_args:
                opts[v] = x
        if seed is not None and self.seed_option:
            opts[self.seed_option] = seed
        argv = [*self.command, *args]
        typed: dict[str, str] = {}
        for name, x in opts.items():
            if x is False or x is None:
                continue
            if x is True:
                argv.append(f"--{name}")
                typed[name] = "true"
            else:
                argv += [f"--{name}", _text(x)]
                typed[name] = _text(x)
        return argv, typed


def point_key(command: Sequence[str], args: Sequence[str], options: dict[str, str], seed, version: str) -> str:
    """Hash of what determines one point's result (the pktflow version included)."""
    blob = json.dumps(
        {"command": list(command), "argv": list(args), "options": options, "seed": seed, "version": version},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _text(x: Any) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, float):
        return repr(x)
    if isinstance(x, (list, tuple)):
        return ",".join(_text(v) for v in x)
    return str(x)


# ---------------------------------------------------------------------------------------------
# loading


def _where(src: str, key: str) -> str:
    # Keys come from the file: a control character in one must not break the one-line message.
    key = "".join(c if c.isprintable() else repr(c)[1:-1] for c in key)
    return f"{src}: {key}"


def _scalar_ok(x: Any) -> bool:
    if isinstance(x, float):
        return math.isfinite(x)
    return isinstance(x, (str, int, bool))


def _range(src: str, name: str, r: dict) -> list:
    extra = set(r) - {"from", "to", "step"}
    if extra or not {"from", "to"} <= set(r):
        raise PktflowError(
            _where(src, f"vary.{name}")
            + ": a range is {from = A, to = B, step = S} (step 1 by default)"
            + (f"; unknown key {sorted(extra)[0]!r}" if extra else "")
        )
    a, b, s = r["from"], r["to"], r.get("step", 1)
    for k, x in (("from", a), ("to", b), ("step", s)):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise PktflowError(_where(src, f"vary.{name}.{k}") + f": must be a finite number, got {x!r}")
    if s <= 0:
        raise PktflowError(_where(src, f"vary.{name}.step") + f": must be positive, got {s!r}")
    if b < a:
        raise PktflowError(_where(src, f"vary.{name}") + f": 'to' ({b!r}) is below 'from' ({a!r})")
    n = math.floor((b - a) / s + 1e-9) + 1
    if n > MAX_RANGE_VALUES:
        raise PktflowError(_where(src, f"vary.{name}") + f": {n:,} values, more than the limit of {MAX_RANGE_VALUES:,}")
    if all(isinstance(x, int) for x in (a, b, s)):
        return [a + i * s for i in range(n)]
    # Rounded to 12 significant digits so 0.1 + 2 * 0.1 prints as 0.3.
    return [float(f"{a + i * s:.12g}") for i in range(n)]


def parse(doc: dict, src: str = "experiment") -> Experiment:
    """An :class:`Experiment` from a parsed TOML document; errors name the file and the key."""
    if not isinstance(doc, dict):
        raise PktflowError(f"{src}: not a table")
    unknown = set(doc) - _TOP_KEYS
    if unknown:
        raise PktflowError(
            _where(src, sorted(unknown)[0]) + f": unknown key (expected one of {', '.join(sorted(_TOP_KEYS))})"
        )
    cmd = doc.get("command")
    if not isinstance(cmd, str) or not cmd.split():
        raise PktflowError(_where(src, "command") + ': required: the pktflow command to run, e.g. "protoproc model"')
    words = cmd.split()
    if words[0] in ("sweep", "report", "compare-runs", "rerun"):
        raise PktflowError(_where(src, "command") + f": {words[0]!r} cannot be swept")
    args = doc.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, (str, int, float)) for a in args):
        raise PktflowError(_where(src, "args") + ": must be a list of strings")
    options = doc.get("options", {})
    if not isinstance(options, dict):
        raise PktflowError(_where(src, "options") + ": must be a table of option = value")
    for k, x in options.items():
        _check_option(src, f"options.{k}", k, x)
    vary_in = doc.get("vary", {})
    if not isinstance(vary_in, dict):
        raise PktflowError(_where(src, "vary") + ": must be a table of variable = [values] or {from, to, step}")
    vary: dict[str, list] = {}
    for k, x in vary_in.items():
        if k in _TOP_KEYS - {"title"} and k not in options:
            raise PktflowError(
                _where(src, f"vary.{k}")
                + f": '{k}' is a top-level key: in TOML it must come before the first [table] header"
            )
        if isinstance(x, dict):
            vals = _range(src, k, x)
        elif isinstance(x, list):
            vals = x
        else:
            raise PktflowError(_where(src, f"vary.{k}") + f": must be a list of values or a range table, got {x!r}")
        if not vals:
            raise PktflowError(_where(src, f"vary.{k}") + ": has no value")
        for v in vals:
            if isinstance(v, (list, dict)):
                # a value per point becomes a column of the results table: lists there broke the
                # report with a traceback; a repeated option stays a fixed option in [options]
                raise PktflowError(
                    _where(src, f"vary.{k}")
                    + f": each value must be a string, integer, finite number or boolean (lists belong in [options]), got {v!r}"
                )
            _check_option(src, f"vary.{k}", k, v)
        if k in options:
            raise PktflowError(_where(src, f"vary.{k}") + ": is also a fixed option in [options]")
        vary[k] = list(vals)
    zips = doc.get("zip", [])
    if not isinstance(zips, list) or not all(isinstance(g, list) and all(isinstance(v, str) for v in g) for g in zips):
        raise PktflowError(_where(src, "zip") + ': must be a list of lists of variable names, e.g. [["a", "b"]]')
    seen: set[str] = set()
    for g in zips:
        if len(g) < 2:
            raise PktflowError(_where(src, "zip") + f": a group needs at least two variables, got {g}")
        for v in g:
            if v not in vary:
                raise PktflowError(_where(src, "zip") + f": {v!r} is not a variable of [vary]")
            if v in seen:
                raise PktflowError(_where(src, "zip") + f": {v!r} is in two groups")
            seen.add(v)
        lens = {len(vary[v]) for v in g}
        if len(lens) > 1:
            desc = ", ".join(f"{v} has {len(vary[v])}" for v in g)
            raise PktflowError(_where(src, "zip") + f": zipped variables need as many values each ({desc})")
    seeds_in = doc.get("seeds")
    seed_option, seeds = None, []
    if seeds_in is not None:
        if not isinstance(seeds_in, dict) or set(seeds_in) - {"option", "values", "count"}:
            raise PktflowError(_where(src, "seeds") + ': must be {option = "seed", values = [...]} or {count = N}')
        seed_option = seeds_in.get("option", "seed")
        if not isinstance(seed_option, str) or not seed_option or seed_option.startswith("-"):
            raise PktflowError(_where(src, "seeds.option") + ": an option name without '--'")
        if "values" in seeds_in and "count" in seeds_in:
            raise PktflowError(_where(src, "seeds") + ": give values or count, not both")
        if "count" in seeds_in:
            c = seeds_in["count"]
            if isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= 10_000:
                raise PktflowError(_where(src, "seeds.count") + f": must be 1 to 10000, got {c!r}")
            seeds = list(range(1, c + 1))
        else:
            seeds = seeds_in.get("values", [])
            if not isinstance(seeds, list) or not seeds:
                raise PktflowError(_where(src, "seeds.values") + ": must be a non-empty list of integers")
        seeds = check_seeds(seeds, _where(src, "seeds.values"))
        if seed_option in vary or seed_option in options:
            raise PktflowError(_where(src, "seeds.option") + f": {seed_option!r} is also in [options] or [vary]")
    metrics = doc.get("metrics", {})
    if not isinstance(metrics, dict) or set(metrics) - _METRIC_KEYS:
        raise PktflowError(_where(src, "metrics") + f": keys are {', '.join(sorted(_METRIC_KEYS))}")
    keep = _keep(src, "metrics.keep", metrics.get("keep", {}))
    keep_root = _keep(src, "metrics.keep_root", metrics.get("keep_root", {}))
    rows = metrics.get("rows")
    if rows is not None and (not isinstance(rows, str) or not rows):
        raise PktflowError(_where(src, "metrics.rows") + ": must be a path to a list in the result")
    row_id = metrics.get("id", [])
    if not isinstance(row_id, list) or not all(isinstance(v, str) for v in row_id):
        raise PktflowError(_where(src, "metrics.id") + ": must be a list of keys of a row")
    if row_id and rows is None:
        raise PktflowError(_where(src, "metrics.id") + ": needs metrics.rows")
    if keep_root and rows is None:
        raise PktflowError(_where(src, "metrics.keep_root") + ": needs metrics.rows (use metrics.keep)")
    names = [*vary, "seed", *keep, *keep_root, *row_id]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise PktflowError(_where(src, "metrics") + f": column {sorted(dup)[0]!r} is named twice")
    plot = doc.get("plot", {})
    if not isinstance(plot, dict) or set(plot) - _PLOT_KEYS:
        raise PktflowError(_where(src, "plot") + f": keys are {', '.join(sorted(_PLOT_KEYS))}")
    title = doc.get("title", "")
    desc = doc.get("description", "")
    if not isinstance(title, str) or not isinstance(desc, str):
        raise PktflowError(_where(src, "title") + ": title and description must be strings")
    e = Experiment(
        command=words,
        args=[str(a) for a in args],
        options=dict(options),
        vary=vary,
        zip_groups=[list(g) for g in zips],
        seed_option=seed_option,
        seeds=seeds,
        keep=keep,
        rows=rows,
        row_id=list(row_id),
        keep_root=keep_root,
        plot=dict(plot),
        title=title,
        description=desc,
        source=src,
    )
    total = e.count()
    if total > MAX_POINTS:
        raise PktflowError(f"{src}: the sweep has {total:,} points, more than the limit of {MAX_POINTS:,}")
    return e


def check_seeds(seeds: list, where: str) -> list[int]:
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**63:
            raise PktflowError(f"{where}: a seed must be an integer from 0 to 2^63-1, got {s!r}")
    if len(set(seeds)) != len(seeds):
        raise PktflowError(f"{where}: a seed is repeated")
    return list(seeds)


def _check_option(src: str, where: str, name: str, x: Any) -> None:
    if not isinstance(name, str) or not name or name.startswith("-") or any(c.isspace() for c in name):
        raise PktflowError(_where(src, where) + ": an option name is written without '--' and without spaces")
    vals = x if isinstance(x, list) else [x]
    for v in vals:
        if not _scalar_ok(v):
            raise PktflowError(
                _where(src, where) + f": values must be strings, integers, finite numbers or booleans, got {v!r}"
            )


def _keep(src: str, where: str, keep: Any) -> dict[str, str]:
    if isinstance(keep, list):
        if not all(isinstance(p, str) and p for p in keep):
            raise PktflowError(_where(src, where) + ": must be a list of paths or a table column = path")
        return {p: p for p in keep}
    if isinstance(keep, dict):
        if not all(isinstance(p, str) and p for p in keep.values()):
            raise PktflowError(_where(src, where) + ": every path must be a non-empty string")
        return dict(keep)
    raise PktflowError(_where(src, where) + ": must be a list of paths or a table column = path")


def load(path: str | Path) -> Experiment:
    """Read and check an experiment file."""
    p = Path(path)
    try:
        text = read_small_text(p, 1 << 20, "an experiment file")
    except FileNotFoundError:
        raise PktflowError(f"{p}: no such experiment file") from None
    except IsADirectoryError:
        raise PktflowError(f"{p}: is a directory, expected an experiment file (.toml)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise PktflowError(f"{p}: cannot read: {e}") from None
    if tomllib is None:  # pragma: no cover
        raise PktflowError(f"{p}: reading experiment files needs Python 3.11 or the tomli package (pip install tomli)")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise PktflowError(f"{p}: not valid TOML: {e}") from None
    return parse(doc, str(p))


def _value(text: str) -> Any:
    """A command-line value: integer, number, true/false, else the string itself."""
    t = text.strip()
    if t in ("true", "false"):
        return t == "true"
    try:
        return int(t)
    except ValueError:
        pass
    try:
        f = float(t)
        if math.isfinite(f):
            return f
    except ValueError:
        pass
    return t


def override(e: Experiment, sets: Sequence[str], seeds: Optional[str]) -> Experiment:
    """Apply ``--set NAME=VALUE`` (a variable: comma-separated values replacing its list; else a
    fixed option, ``false`` to drop a flag) and ``--seeds 1,2,3``."""
    for s in sets:
        if "=" not in s:
            raise PktflowError(f"--set {s!r}: expected NAME=VALUE")
        name, val = s.split("=", 1)
        name = name.strip()
        if name.startswith("--"):
            name = name[2:]
        _check_option("--set", s, name, "x")
        if name in e.vary:
            vals = [_value(v) for v in val.split(",") if v.strip()]
            if not vals:
                raise PktflowError(f"--set {s!r}: no value for variable {name}")
            grp = next((g for g in e.zip_groups if name in g), None)
            if grp and len(vals) != len(e.vary[name]):
                raise PktflowError(
                    f"--set {s!r}: {name} is zipped with {', '.join(v for v in grp if v != name)} and needs "
                    f"{len(e.vary[name])} values, got {len(vals)}"
                )
            e.vary[name] = vals
        elif e.seed_option and name == e.seed_option:
            raise PktflowError(f"--set {s!r}: the seeds are set with --seeds")
        else:
            e.options[name] = _value(val)
    if seeds is not None:
        vals = []
        for v in seeds.split(","):
            try:
                vals.append(int(v))
            except ValueError:
                raise PktflowError(f"--seeds: {v.strip()!r} is not an integer") from None
        if not vals:
            raise PktflowError("--seeds: no seed given")
        e.seeds = check_seeds(vals, "--seeds")
        e.seed_option = e.seed_option or "seed"
    total = e.count()
    if total > MAX_POINTS:
        raise PktflowError(f"the sweep has {total:,} points, more than the limit of {MAX_POINTS:,}")
    return e


def get_path(doc: Any, path: str) -> Any:
    """``a.b[2].c`` in a JSON document; ``None`` when any step is missing."""
    cur = doc
    for part in path.replace("]", "").split("."):
        if not part:
            return None
        name, *idx = part.split("[")
        if name:
            if not isinstance(cur, dict) or name not in cur:
                return None
            cur = cur[name]
        for i in idx:
            try:
                k = int(i)
            except ValueError:
                return None
            if not isinstance(cur, list) or not -len(cur) <= k < len(cur):
                return None
            cur = cur[k]
    return cur
