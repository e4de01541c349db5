"""``pktflow report DIR --html OUT``: a self-contained page (plots embedded, no external URL),
checked in a real headless Chromium: a screenshot that is not blank and a DOM with the plots."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from test_sweep import SMALL, _main  # the same small experiment

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    exp = d / "small.toml"
    exp.write_text(SMALL)
    assert _main(["sweep", str(exp), "--out", str(d / "run"), "--workers", "2"]) == 0
    return d / "run"


def test_report_is_self_contained_with_one_plot_per_metric(swept, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert _main(["report", str(swept), "--html", str(out)]) == 0
    assert "2 plots" in capsys.readouterr().out
    page = out.read_text()
    assert page.count('<figure class="plot"') == 2
    assert page.count('src="data:image/png;base64,') == 2
    # Nothing fetched from elsewhere: no http(s) URL in any src/href, no script.
    assert not re.search(r'(src|href)\s*=\s*["\']?(https?:|//)', page)
    assert "<script" not in page
    # The settings and the summary over seeds are there.
    assert "95% confidence interval" in page and "time_us_ci95" in page and "protoproc" in page


def test_report_of_a_folder_that_is_not_a_sweep_is_one_line(tmp_path, capsys):
    assert _main(["report", str(tmp_path), "--html", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert "not a sweep folder" in err and err.strip().count("\n") == 0
    assert not (tmp_path / "x.html").exists()


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    # Not a skip: CI installs it (.ci/run); a missing browser is a broken set-up.
    pytest.fail("no chromium on PATH: install Debian's chromium package (apt-get install -y chromium)")


def test_report_renders_in_headless_chromium(swept, tmp_path):
    from PIL import Image, ImageStat

    page = tmp_path / "r.html"
    assert _main(["report", str(swept), "--html", str(page)]) == 0
    browser = _chromium()
    shot = tmp_path / "shot.png"
    common = [browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    r = subprocess.run(
        [*common, f"--screenshot={shot}", "--window-size=1200,1400", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.exists(), r.stderr[-2000:]
    img = Image.open(shot).convert("L")
    assert img.size == (1200, 1400)
    # Not blank: the plots' lines and text make the pixels vary a lot.
    stat = ImageStat.Stat(img)
    assert stat.stddev[0] > 20, stat.stddev
    colours = Image.open(shot).convert("RGB").getcolors(maxcolors=1 << 24) or []
    assert len(colours) > 50, len(colours)
    dom = subprocess.run([*common, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert dom.count('class="plot"') == 2
    assert len(re.findall(r'<img[^>]+src="data:image/png;base64,', dom)) == 2
    # The images decoded: Chromium gives a decoded <img> its natural size in the DOM only with
    # script, so check the PNG payloads themselves decode to real pictures.
    import base64
    import io

    for b64 in re.findall(r'src="data:image/png;base64,([^"]+)"', dom):
        im = Image.open(io.BytesIO(base64.b64decode(b64)))
        assert im.size[0] >= 400 and im.size[1] >= 300
