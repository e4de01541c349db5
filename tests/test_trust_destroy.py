"""Issue 25, section 0: nothing the user has is destroyed. Each hostile case of the issue, through
the command line as a user types it:

* device, FIFO and symlink targets are written through, never replaced;
* an output that is an input or another output is refused (one line, exit 2), compared by
  identity, not by name;
* ToDump files stay inside a --out-dir the user named, and every written file is listed;
* SIGTERM leaves no hidden ``.partial`` file (as Ctrl-C);
* ``pktflow rerun`` of a tampered result and a resumed sweep with an edited point are checked;
* names echoed from files carry no raw terminal escape sequences.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cli_run import one_error_line, run_main, spawned

PKTFLOW = [sys.executable, "-m", "pktflow"]


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def partials(d: Path) -> list[str]:
    return sorted(str(p) for p in d.rglob("*.partial")) + sorted(str(p) for p in d.rglob("*.merging"))


@pytest.fixture
def trace(tmp_path, capsys) -> Path:
    """A small router trace (two interfaces)."""
    p = tmp_path / "in.pcap"
    code, _, err = run_main(capsys, "gen-trace", str(p), "-n", "200")
    assert code == 0, err
    return p


def click_file(d: Path, text: str, name: str = "d.click") -> Path:
    f = d / name
    f.write_text(text)
    return f


def is_pcap(p: Path) -> bool:
    return p.read_bytes()[:4] in (bytes.fromhex("d4c3b2a1"), bytes.fromhex("4d3cb2a1"))


# ------------------------------------------------------------------- targets that are not files


def _restore_dev_null() -> None:
    """A regression must not leave the test machine without /dev/null (tests may run as root)."""
    st = os.lstat("/dev/null")
    if not stat.S_ISCHR(st.st_mode) and os.geteuid() == 0:
        os.remove("/dev/null")
        os.mknod("/dev/null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        os.chmod("/dev/null", 0o666)


def test_todump_to_dev_null_writes_through_the_device(tmp_path, trace, capsys):
    f = click_file(tmp_path, f"FromDump({trace}) -> ToDump(/dev/null);\n")
    try:
        code, _, err = run_main(capsys, "profile", str(f))
        assert stat.S_ISCHR(os.lstat("/dev/null").st_mode), "/dev/null was replaced by a regular file"
    finally:
        _restore_dev_null()
    assert code == 0, err
    assert not list(Path("/dev").glob(".null.*.partial"))


def test_gen_trace_and_csv_to_dev_null(tmp_path, trace, capsys):
    try:
        code, _, err = run_main(capsys, "gen-trace", "/dev/null", "-n", "100")
        assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)
        assert code == 0, err
        code, _, err = run_main(capsys, "profile", "router", "--trace", str(trace), "--csv", "/dev/null")
        assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)
        assert code == 0, err
    finally:
        _restore_dev_null()


def _read_fifo(path: Path, into: list) -> threading.Thread:
    def read():
        with open(path, "rb") as f:
            into.append(f.read())

    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t


def test_todump_into_a_fifo_writes_through_it(tmp_path, trace, capsys):
    fifo = tmp_path / "pipe.pcap"
    os.mkfifo(fifo)
    got: list = []
    reader = _read_fifo(fifo, got)
    f = click_file(tmp_path, f"FromDump({trace}) -> ToDump({fifo});\n")
    code, _, err = run_main(capsys, "profile", str(f))
    if reader.is_alive():  # the old code renamed a regular file onto the FIFO: unblock the reader
        with open(fifo, "wb"):
            pass
    reader.join(10)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a regular file"
    assert code == 0, err
    assert got and got[0][:4] in (bytes.fromhex("4d3cb2a1"), bytes.fromhex("d4c3b2a1"))
    assert partials(tmp_path) == []


def test_gen_trace_into_a_fifo_writes_through_it(tmp_path, capsys):
    fifo = tmp_path / "pipe.pcap"
    os.mkfifo(fifo)
    got: list = []
    reader = _read_fifo(fifo, got)
    code, _, err = run_main(capsys, "gen-trace", str(fifo), "-n", "50")
    if reader.is_alive():
        with open(fifo, "wb"):
            pass
    reader.join(10)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a regular file"
    assert code == 0, err
    assert got and len(got[0]) > 24 * 2


def test_a_symlink_target_is_written_through_and_stays_a_link(tmp_path, trace, capsys):
    real = tmp_path / "keep" / "real.pcap"
    real.parent.mkdir()
    real.write_bytes(b"old")
    # ToDump (Rust)
    link = tmp_path / "link.pcap"
    link.symlink_to(real)
    f = click_file(tmp_path, f"FromDump({trace}) -> ToDump({link});\n")
    code, _, err = run_main(capsys, "profile", str(f))
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert is_pcap(real)
    # gen-trace (Rust) and --csv (Python) through links as well
    real.write_bytes(b"old")
    code, _, err = run_main(capsys, "gen-trace", str(link), "-n", "20")
    assert code == 0, err
    assert link.is_symlink() and is_pcap(real)
    csv_real = tmp_path / "keep" / "table.csv"
    csv_real.write_text("old")
    csv_link = tmp_path / "table.csv"
    csv_link.symlink_to(csv_real)
    code, _, err = run_main(capsys, "profile", "router", "--trace", str(trace), "--csv", str(csv_link))
    assert code == 0, err
    assert csv_link.is_symlink() and csv_real.read_text().startswith("element")
    assert partials(tmp_path) == []


def test_a_dangling_symlink_is_refused_in_one_line(tmp_path, trace, capsys):
    link = tmp_path / "dangling.pcap"
    link.symlink_to(tmp_path / "nowhere" / "x.pcap")
    f = click_file(tmp_path, f"FromDump({trace}) -> ToDump({link});\n")
    code, _, err = run_main(capsys, "profile", str(f))
    assert code == 2, err
    assert "symbolic link" in one_error_line(err)
    assert link.is_symlink()


# --------------------------------------------------------------------- outputs that are inputs


def test_todump_onto_its_own_fromdump_input_is_refused(tmp_path, trace, capsys):
    before = sha(trace)
    f = click_file(tmp_path, "FromDump(in.pcap) -> ToDump(in.pcap);\n")
    code, _, err = run_main(capsys, "profile", str(f), "--out-dir", str(tmp_path))
    assert code == 2, err
    line = one_error_line(err)
    assert "in.pcap" in line and "input" in line
    assert sha(trace) == before
    # Through another name of the same file (a symlink, ./), still refused: identity, not name.
    (tmp_path / "alias.pcap").symlink_to(trace)
    f = click_file(tmp_path, f"FromDump({trace}) -> ToDump(./alias.pcap);\n")
    code, _, err = run_main(capsys, "profile", str(f), "--out-dir", str(tmp_path))
    assert code == 2, err
    assert sha(trace) == before


def test_run_with_the_trace_inside_out_dir_as_a_device_output_is_refused(tmp_path, trace, capsys):
    cc = tmp_path / "cc"
    cc.mkdir()
    t = cc / "eth0.pcap"
    t.write_bytes(trace.read_bytes())
    before = sha(t)
    for cmd in ("run", "profile"):
        code, _, err = run_main(capsys, cmd, "router", "--trace", str(t), "--out-dir", str(cc))
        assert code == 2, (cmd, err)
        line = one_error_line(err)
        assert "eth0" in line and "input" in line, line
        assert sha(t) == before, f"pktflow {cmd} overwrote its trace"


def test_two_todumps_to_one_file_are_refused(tmp_path, trace, capsys):
    f = click_file(
        tmp_path,
        f"src :: FromDump({trace}) -> t :: Tee(2);\n"
        "t[0] -> a :: ToDump(same.pcap);\nt[1] -> b :: ToDump(./same.pcap);\n",
    )
    code, _, err = run_main(capsys, "profile", str(f), "--out-dir", str(tmp_path / "o"))
    assert code == 2, err
    line = one_error_line(err)
    assert "'a'" in line and "'b'" in line and "one file" in line
    assert not (tmp_path / "o" / "same.pcap").exists()


def test_an_output_option_naming_an_input_is_refused(tmp_path, trace, capsys):
    before = sha(trace)
    code, _, err = run_main(capsys, "profile", "router", "--trace", str(trace), "--csv", str(trace))
    assert code == 2, err
    assert "--csv" in one_error_line(err)
    assert sha(trace) == before


# ----------------------------------------------------------------------------- out-dir as root


@pytest.mark.parametrize("name", ["../../../../escaped.pcap", "ABSOLUTE"])
def test_todump_outside_out_dir_is_refused(tmp_path, trace, capsys, name):
    out = tmp_path / "a" / "b" / "out"
    target = tmp_path / "escaped.pcap"
    if name == "ABSOLUTE":
        name = str(target)
    f = click_file(tmp_path, f"FromDump({trace}) -> dump :: ToDump({name});\n")
    code, _, err = run_main(capsys, "profile", str(f), "--out-dir", str(out))
    assert code == 2, err
    line = one_error_line(err)
    assert "'dump'" in line and "outside --out-dir" in line and name in line
    assert not target.exists() and not (Path("/") / "escaped.pcap").exists()


def test_every_written_file_is_listed(tmp_path, trace, capsys):
    out = tmp_path / "out"
    f = click_file(tmp_path, f"FromDump({trace}) -> ToDump(copy.pcap);\n")
    code, stdout, err = run_main(capsys, "profile", str(f), "--out-dir", str(out), "--json")
    assert code == 0, err
    doc = json.loads(stdout)
    assert doc["files_written"] == [str(out / "copy.pcap")]
    code, stdout, err = run_main(capsys, "profile", str(f), "--out-dir", str(out))
    assert f"wrote {out / 'copy.pcap'}" in stdout


# ------------------------------------------------------------------------------------- sweeps

EXP = """
command = "protoproc sim"
[options]
app = "synthetic"
nodes = 2
[vary]
c = [50, 200]
[seeds]
values = [1]
[metrics]
keep = { time_us = "execution_time_us" }
"""


def _sweep(capsys, exp: Path, out: Path) -> tuple[int, str, str]:
    return run_main(capsys, "sweep", str(exp), "--out", str(out), "--workers", "1", "--json")


def _swept(tmp_path: Path, capsys) -> tuple[Path, Path]:
    """The experiment EXP written to a.toml and swept into sw/: (experiment file, folder)."""
    a = tmp_path / "a.toml"
    a.write_text(EXP)
    out = tmp_path / "sw"
    code, _, err = _sweep(capsys, a, out)
    assert code == 0, err
    return a, out


def test_another_experiment_into_a_sweep_folder_is_refused(tmp_path, capsys):
    a, out = _swept(tmp_path, capsys)
    tables = {n: sha(out / n) for n in ("results.csv", "summary.csv", "sweep.json")}
    b = tmp_path / "b.toml"
    b.write_text(EXP.replace("nodes = 2", "nodes = 3"))
    code, _, err = _sweep(capsys, b, out)
    assert code == 2, err
    assert "another experiment" in one_error_line(err)
    assert {n: sha(out / n) for n in tables} == tables
    # The same experiment resumes (computes nothing); more values of a variable extend it.
    code, stdout, err = _sweep(capsys, a, out)
    assert code == 0, err
    assert json.loads(stdout)["timing"]["computed"] == 0
    a.write_text(EXP.replace("c = [50, 200]", "c = [50, 200, 400]"))
    code, stdout, err = _sweep(capsys, a, out)
    assert code == 0, err
    assert json.loads(stdout)["timing"]["computed"] == 1


def test_a_sweep_into_a_folder_of_other_files_is_refused(tmp_path, capsys):
    a = tmp_path / "a.toml"
    a.write_text(EXP)
    out = tmp_path / "mine"
    out.mkdir()
    (out / "results.csv").write_text("my own table\n")
    code, _, err = _sweep(capsys, a, out)
    assert code == 2, err
    assert "results.csv" in one_error_line(err)
    assert (out / "results.csv").read_text() == "my own table\n"


def test_an_edited_point_file_is_not_reused(tmp_path, capsys):
    a, out = _swept(tmp_path, capsys)
    pt = sorted((out / "points").glob("*.json"))[0]
    d = json.loads(pt.read_text())
    d["result"]["execution_time_us"] = 999999
    pt.write_text(json.dumps(d))
    code, stdout, err = _sweep(capsys, a, out)
    assert code == 0, err
    assert json.loads(stdout)["timing"]["computed"] == 1
    assert "changed after it was computed" in err and pt.name.removesuffix(".json") in err
    assert "999999" not in (out / "results.csv").read_text()


def test_report_html_onto_the_results_is_refused(tmp_path, capsys):
    a, out = _swept(tmp_path, capsys)
    for victim in ("results.csv", "sweep.json", "summary.csv"):
        before = sha(out / victim)
        code, _, err = run_main(capsys, "report", str(out), "--html", str(out / victim))
        assert code == 2, err
        assert "--html" in one_error_line(err)
        assert sha(out / victim) == before
    code, _, err = run_main(capsys, "report", str(out), "--html", str(out / "report.html"))
    assert code == 0, err


# ---------------------------------------------------------------------------------- SIGTERM


def _sigterm_leaves_nothing(tmp_path: Path, argv: list[str], watch: Path) -> None:
    with spawned([*PKTFLOW, *argv], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as p:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 120 and not list(watch.glob(".*.partial")):
            if p.poll() is not None:
                err = p.stderr.read() if p.stderr else ""
                if p.returncode == 2 and "free" in err:
                    # gen-trace refuses a trace the disk cannot hold, before writing anything
                    pytest.skip(f"not enough free space for the test's trace: {err.strip()}")
                pytest.fail(f"the command ended before writing: {err}")
            time.sleep(0.02)
        assert list(watch.glob(".*.partial")), "the command never started writing"
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    assert err.strip().splitlines()[-1] == "terminated", err
    assert partials(tmp_path) == [], "SIGTERM left partial files"


def test_sigterm_during_gen_trace_leaves_no_partial_file(tmp_path):
    _sigterm_leaves_nothing(tmp_path, ["gen-trace", "big.pcap", "-n", "1e7"], tmp_path)
    assert not (tmp_path / "big.pcap").exists()


def test_sigterm_during_a_todump_run_leaves_no_partial_file(tmp_path):
    out = tmp_path / "out"
    click_file(tmp_path, "InfiniteSource(LENGTH 1000, LIMIT -1) -> ToDump(big.pcap, SNAPLEN 0);\n")
    _sigterm_leaves_nothing(tmp_path, ["profile", "d.click", "--out-dir", "out"], out)
    assert not (out / "big.pcap").exists()


# ------------------------------------------------------------------------------------- rerun


def _result(tmp_path: Path, argv: list[str], cwd: Path | str, inputs: dict | None = None) -> Path:
    r = tmp_path / "result.json"
    r.write_text(
        json.dumps(
            {"run": {"pktflow_version": "0", "argv": argv, "cwd": str(cwd), "inputs_sha256": inputs or {}}}
        )
    )
    return r


def test_rerun_refuses_a_tampered_command_that_would_replace_a_file(tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    for argv in (["gen-trace", "victim.txt", "-n", "10"], ["profile", "router", "--csv", "victim.txt"]):
        r = _result(tmp_path, argv, tmp_path)
        code, _, err = run_main(capsys, "rerun", str(r))
        assert code == 2, err
        assert "victim.txt" in one_error_line(err)
        assert victim.read_text() == "precious\n"


@pytest.mark.parametrize(
    "argv,words",
    [
        (["rm", "-rf", "x"], "not a pktflow command"),
        (["profile", "router", "--exec", "x"], "not one pktflow accepts"),
        (["--version"], "not a pktflow command"),
    ],
)
def test_rerun_refuses_what_is_not_pktflows_own_command_line(tmp_path, capsys, argv, words):
    r = _result(tmp_path, argv, tmp_path)
    code, _, err = run_main(capsys, "rerun", str(r))
    assert code == 2, err
    assert words in one_error_line(err)


def test_rerun_refuses_a_recorded_folder_that_does_not_exist(tmp_path, capsys):
    r = _result(tmp_path, ["arch", "list"], tmp_path / "gone")
    code, _, err = run_main(capsys, "rerun", str(r))
    assert code == 2, err
    assert "gone" in one_error_line(err)


def test_rerun_still_reruns_a_result_that_wrote_its_own_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, stdout, err = run_main(capsys, "gen-trace", "t.pcap", "-n", "30", "--json")
    assert code == 0, err
    (tmp_path / "r.json").write_text(stdout)
    code, stdout, err = run_main(capsys, "rerun", "r.json")
    assert code == 0, err
    assert "identical" in stdout


# ---------------------------------------------------------------------- terminal escapes


def test_names_from_files_are_printed_without_raw_escape_sequences(tmp_path, capsys):
    # A file name quoted by the Rust core (FromDump's error) and a table cell printed by rich.
    f = click_file(tmp_path, 'FromDump("\x1b]0;owned\x07\x1b[2Jnothing.pcap") -> Discard;\n')
    code, out, err = run_main(capsys, "profile", str(f))
    assert code == 2
    assert "\x1b" not in err and "\x07" not in err and "\x1b" not in out
    assert "\\x1b]0;owned\\x07" in one_error_line(err)
    code, out, err = run_main(capsys, "rerun", str(_result(tmp_path, ["\x1b[31mevil"], tmp_path)))
    assert code == 2 and "\x1b" not in err and "\\x1b[31mevil" in one_error_line(err)


def test_the_consoles_escape_control_characters_in_printed_text(capsys):
    from rich.table import Table

    from pktflow import _ui

    c = _ui._wide_console()
    t = Table("name")
    t.add_row("cell\x1b[2J\x1b]0;owned\x07")
    c.print(t)
    c.print("note: \x1b[31mred\x9b")
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "cell\\x1b[2J" in out and "\\x1b[31mred\\x9b" in out
