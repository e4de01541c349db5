"""The README and docs speak to users: papers are named as in docs/sources.md (not by the file
names of the developers' extractions), there is no development-log wording, and every file the
docs point to exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "apps" / "README.md"]

# (`--seed 000`, the scoreboard's option naming a paper, is a command, not log wording.)
DEV_WORDS = re.compile(
    r"\b[0-9]{3}_[0-9a-f]{16}\.txt|\bseeds?/|(?<!-)\bseed 00[0-9]\b|\bissue [0-9]+\b|\bthis session\b|"
    r"\bbefore this change\b|\bnew this session\b|\bprevious session\b",
    re.IGNORECASE,
)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_have_no_development_log_wording(doc):
    bad = [f"{doc.name}:{i}: {line.strip()[:100]}" for i, line in enumerate(doc.read_text().splitlines(), 1)
           if DEV_WORDS.search(line) and "sources.md" not in doc.name]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_files_the_docs_name_exist(doc):
    missing = []
    for m in re.finditer(r"`((?:docs|apps|presets|experiments|crates|python|tests|data|scripts)/[\w./-]+)`",
                         doc.read_text()):
        path = m.group(1).rstrip(".")
        if "*" in path:
            continue
        # A path may be relative to the repository or to the crate a doc is about (tests/x.rs).
        if not (ROOT / path).exists() and not any(c.joinpath(path).exists() for c in (ROOT / "crates").iterdir()):
            missing.append(path)
    assert not missing, f"{doc.name} names files that do not exist: {missing}"


EXPERIMENTS = sorted((ROOT / "experiments").glob("*.py"))


@pytest.mark.parametrize("script", EXPERIMENTS, ids=lambda p: p.name)
def test_experiment_help_speaks_to_users(script):
    """An experiment's docstring is its ``--help``: papers by name, no development-log words."""
    import ast

    doc = ast.get_docstring(ast.parse(script.read_text())) or ""
    assert doc, f"{script.name} has no docstring (its --help)"
    bad = [line for line in doc.splitlines() if DEV_WORDS.search(line)]
    assert not bad, bad


@pytest.mark.parametrize("preset", sorted((ROOT / "presets").glob("*.toml")), ids=lambda p: p.name)
def test_preset_descriptions_name_papers(preset):
    """``pktflow arch show`` prints a preset's description and source: papers by name."""
    lines = [ln for ln in preset.read_text().splitlines() if re.match(r"\s*(description|source)\s*=", ln)]
    bad = [ln for ln in lines if DEV_WORDS.search(ln)]
    assert not bad, bad
