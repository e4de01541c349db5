"""Reports of a profile: a per-element table (pandas) and a plot (matplotlib, PNG)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

#: Most elements drawn by :func:`plot_profile` (the costliest by instructions per packet).
MAX_PLOTTED_ELEMENTS = 60

MEM_TYPES = ("packet_data", "packet_meta", "static_state", "dynamic_state", "stack")


COLUMNS = (
    "element",
    "class",
    "visits",
    "visits_per_packet",
    "instructions_per_visit",
    "instructions_per_packet",
    "critical_section_instructions",
    *(f"{m}_bytes_per_packet" for m in MEM_TYPES),
)


def profile_elements_frame(profile: dict[str, Any]) -> pd.DataFrame:
    """One row per element: visits, instructions and bytes per packet by memory type (a
    DataFrame with these columns, and no rows, for a profile of no packets)."""
    rows = []
    for e in profile["elements"]:
        row = {
            "element": e["name"],
            "class": e["class"],
            "visits": e["visits"],
            "visits_per_packet": e["visits_per_packet"],
            "instructions_per_visit": e["instructions_per_visit"],
            "instructions_per_packet": e["instructions_per_visit"] * e["visits_per_packet"],
            "critical_section_instructions": e["critical_section_instructions"],
        }
        for m in MEM_TYPES:
            row[f"{m}_bytes_per_packet"] = e["bytes_per_visit"][m] * e["visits_per_packet"]
        rows.append(row)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def plot_profile(profile: dict[str, Any], path: str | Path, *, format: str | None = None) -> None:
    """Write a figure to ``path`` (PNG unless ``format`` or the file name says otherwise):
    horizontal bars of instructions per packet by element, and bytes per packet by memory type.
    Returns nothing. A profile of no packets gives a figure that says so."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = profile_elements_frame(profile).sort_values("instructions_per_packet")
    shown = ""
    if len(df) > MAX_PLOTTED_ELEMENTS:
        # A figure with a bar per element of a 100,000-element configuration would not fit in
        # memory: the costliest elements only, said in the title.
        shown = f" (the {MAX_PLOTTED_ELEMENTS} costliest of {len(df):,} elements)"
        df = df.tail(MAX_PLOTTED_ELEMENTS)
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, max(4, 0.28 * len(df) + 1.5)), sharey=True)
    labels = [f"{n} ({c})" for n, c in zip(df["element"], df["class"], strict=True)]
    a.barh(labels, df["instructions_per_packet"], color="#4477aa")
    a.set_xlabel("instructions per packet")
    left = None
    colors = ["#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377"]
    for m, col in zip(MEM_TYPES, colors, strict=True):
        vals = df[f"{m}_bytes_per_packet"].to_numpy()
        b.barh(labels, vals, left=left, label=m, color=col)
        left = vals if left is None else left + vals
    b.set_xlabel("bytes per packet")
    b.legend(loc="lower right", fontsize=8)
    if profile.get("packets"):
        share = 100 * profile["critical_section_instruction_share"]
        fig.suptitle(
            f"{profile['app']}: {profile['elements_visited_per_packet']['mean']:.1f} elements, "
            f"{profile['instructions_per_packet']['mean']:.0f} instructions per packet, "
            f"{share:.1f}% in critical sections ({profile['packets']:,} packets){shown}"
        )
    else:
        fig.suptitle(f"{profile['app']}: no packets, nothing measured")
    fig.tight_layout()
    fig.savefig(path, dpi=110, format=format)
    plt.close(fig)
