"""Trust on first use for simulate, maxrate, bottleneck, explore, map and arch: readable text
output, whole tables and progress in a pipe, Ctrl-C, checked outputs, re-runnable results,
architecture overrides, and bad numbers refused by name. Runs are tiny (a few hundred packets)."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import struct
import sys
import time

import pytest
from cli_run import spawned
from conftest import run_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pktflow
from pktflow import PktflowError, tdpm
from pktflow import npsim as api
from pktflow._ui import strip_volatile
from pktflow.cli import main

TINY = ["--packets", "300", "--pes", "4"]


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    """``pktflow ARGV`` in-process: (exit code, stdout, stderr)."""
    code = 0
    try:
        main(list(argv))
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def run_proc(*argv: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "pktflow", *argv], capture_output=True, text=True, timeout=timeout, env=e
    )


# A progress line (``rtc: 3/10 rates (30%), ..., elapsed 20s``): printed every few seconds of a
# long step whether or not stderr is a terminal, so a refusal that comes after a slow step (a
# slower CI machine) follows some; they are not part of the error.
PROGRESS_LINE = re.compile(r"^[a-z][\w-]*: .*\belapsed \d")


def one_error_line(code: int, err: str) -> str:
    assert code == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip() and not PROGRESS_LINE.match(ln)]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# ------------------------------------------------------------------------------------------------
# 1. text output of every command


@pytest.mark.parametrize(
    "argv, expect",
    [
        (["simulate", "router", "--inter-arrival", "3000", *TINY], ["delivered", "PEs (share of time)"]),
        (
            ["maxrate", "router", *TINY, "--replication", "none"],
            ["packets/s", "inter-arrival bracket", "PEs (share of time)"],
        ),
        (["bottleneck", "router", *TINY, "--replication", "none", "--no-chain"], ["idealized executions", "ranking"]),
        (
            [
                "explore",
                "router",
                "--pes",
                "4,8",
                "--replication",
                "none",
                "--packets",
                "300",
                "--no-bottleneck",
                "--mapper",
                "round-robin",
            ],
            ["speedup", "binding resource", "2 points"],
        ),
        (["map", "mpls", "--engines", "2", "--packets", "300"], ["predicted", "binding"]),
        (["arch", "list"], ["npire", "ixp2400"]),
        (["arch", "show", "npire"], ["hardware_contexts_per_pe", "cycles"]),
    ],
)
def test_every_command_prints_text(capsys, argv, expect):
    code, out, err = run_main(capsys, *argv)
    assert code == 0, err
    for x in expect:
        assert x in out, out
    assert "Traceback" not in err


# ------------------------------------------------------------------------------------------------
# 2. a pipe: whole tables, progress lines


def test_explore_in_a_pipe_has_whole_headers_and_progress_lines():
    p = run_proc(
        "explore",
        "router",
        "--pes",
        "4,8",
        "--replication",
        "none,global",
        "--packets",
        "300",
        "--mapper",
        "round-robin",
        "--no-bottleneck",
        env={"PKTFLOW_PROGRESS_SECONDS": "0"},
    )
    assert p.returncode == 0, p.stderr
    for h in ("PEs", "replication", "packets/s", "Gb/s", "speedup", "PE busy", "replicated", "binding resource",
              "idealized"):
        assert h in p.stdout
    assert "…" not in p.stdout
    prog = [ln for ln in p.stderr.splitlines() if ln.startswith("explore: ")]
    assert prog and "points" in prog[0] and "ETA" in prog[0], p.stderr
    assert "/5 points" in p.stderr  # step 1 + 4 points


@pytest.mark.parametrize(
    "argv, what",
    [
        (["maxrate", "router", *TINY, "--replication", "none"], "maxrate: "),
        (["bottleneck", "router", *TINY, "--replication", "none", "--no-chain"], "bottleneck: "),
        (["simulate", "router", "--inter-arrival", "3000", "--packets", "8000", "--pes", "4"], "simulate: "),
    ],
)
def test_long_commands_report_progress_off_a_tty(argv, what):
    p = run_proc(*argv, env={"PKTFLOW_PROGRESS_SECONDS": "0"})
    assert p.returncode == 0, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith(what)]
    assert lines and "ETA" in lines[0], p.stderr


def test_explore_help_defines_the_idealization_letters():
    p = run_proc("explore", "--help", env={"COLUMNS": "200"})
    for words in ("no synchronization", "bus pipelining", "1-cycle occupancy", "infinite PEs", "take no time"):
        assert words in p.stdout, p.stdout


# ------------------------------------------------------------------------------------------------
# 3. Ctrl-C


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "router", "--inter-arrival", "2000", "--packets", "50000000"],
        ["maxrate", "router", "--packets", "5000000"],
        ["bottleneck", "router", "--packets", "5000000"],
        ["explore", "router", "--pes", "4:32:4", "--packets", "200000"],
        ["map", "router", "--mapper", "optimal", "--packets", "2000000"],
    ],
)
def test_ctrl_c_stops_promptly_with_one_line(argv):
    cmd = [sys.executable, "-m", "pktflow", *argv]
    with spawned(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        time.sleep(1.5)
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{argv[0]} kept running after Ctrl-C")
    assert p.returncode == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == "interrupted", err


# ------------------------------------------------------------------------------------------------
# 4. output files checked before the run, written whole


def test_output_files_are_checked_before_the_run(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for opt, cmd in (("--plot", "explore"), ("--csv", "explore"), ("--dot", "map")):
        args = [cmd, "router", "--packets", "300"]
        if cmd == "explore":
            args += ["--pes", "4"]
        p = run_proc(*args, opt, str(blocker / "sub" / "out.x"), env={"PKTFLOW_PROGRESS_SECONDS": "0"})
        line = one_error_line(p.returncode, p.stderr)
        assert opt in line
        assert "points" not in p.stderr  # no progress: nothing ran
    # A missing folder is created, and the file appears complete.
    code, out, err = run_main(
        capsys,
        "explore",
        "router",
        "--pes",
        "4",
        "--replication",
        "none",
        "--packets",
        "300",
        "--no-bottleneck",
        "--mapper",
        "round-robin",
        "--csv",
        str(tmp_path / "new" / "x.csv"),
    )
    assert code == 0, err
    assert (tmp_path / "new" / "x.csv").read_text().startswith("app,")
    assert not [f for f in (tmp_path / "new").iterdir() if f.name.endswith(".partial")]


# ------------------------------------------------------------------------------------------------
# 5. nothing left in the temporary folder


def test_runs_leave_no_folder_in_the_temporary_directory(tmp_path):
    env = {"TMPDIR": str(tmp_path)}
    for argv in (
        ["simulate", "router", "--inter-arrival", "3000", *TINY, "--json"],
        ["map", "mpls", "--engines", "2", "--packets", "300", "--json"],
    ):
        p = run_proc(*argv, env=env)
        assert p.returncode == 0, p.stderr
    left = [f.name for f in tmp_path.iterdir() if f.name.startswith("pktflow-")]
    assert left == []


# ------------------------------------------------------------------------------------------------
# 6. results that can be re-run


def test_results_record_resolved_settings_and_api_equals_cli(capsys):
    code, out, err = run_main(capsys, "maxrate", "router", *TINY, "--replication", "none", "--json")
    assert code == 0, err
    cli = json.loads(out)
    s = cli["settings"]
    assert s["sim"]["warmup_packets"] == 60  # a fifth of 300, resolved by Rust
    assert s["spec"]["mapper"] == "round-robin" and s["spec"]["arch"] == "npire"
    assert s["search"]["precision"] == 0.01
    assert s["architecture"]["params"]["np"]["pe_count"] == 16
    py = api.maxrate("router", packets=300, pes=4, replication="none")
    assert strip_volatile({**cli, "run": None}) == strip_volatile(py)
    # The same warm-up whoever sets the default: Rust.
    again = api.maxrate("router", packets=300, pes=4, replication="none", warmup_packets=60)
    assert again["packets_per_second"] == py["packets_per_second"]


@pytest.mark.parametrize(
    "argv",
    [
        ["maxrate", "router", *TINY, "--replication", "none", "--json"],
        ["map", "mpls", "--engines", "2", "--packets", "300", "--json"],
    ],
)
def test_rerun_reproduces_a_saved_result(tmp_path, argv):
    p = run_proc(*argv)
    assert p.returncode == 0, p.stderr
    saved = tmp_path / "r.json"
    saved.write_text(p.stdout)
    r = run_proc("rerun", str(saved))
    assert r.returncode == 0, r.stdout + r.stderr


# ------------------------------------------------------------------------------------------------
# 7. architecture overrides and inheritance


def test_arch_show_with_overrides_prints_toml_values_and_units(capsys):
    code, out, err = run_main(capsys, "arch", "show", "npire", "--set", "np.hardware_contexts_per_pe=4")
    assert code == 0, err
    row = next(ln for ln in out.splitlines() if "np.hardware_contexts_per_pe" in ln)
    assert " 4 " in row and "contexts per PE" in row
    assert "True" not in out and "None" not in out
    assert '"dram"' in out
    row = next(ln for ln in out.splitlines() if "np.pe_frequency_mhz" in ln)
    assert "MHz" in row
    row = next(ln for ln in out.splitlines() if "storage.dram.private_per_pe" in ln)
    assert "false" in row and "per PE" not in row
    code, out, err = run_main(capsys, "arch", "show", "ixp2400")
    assert "true" in out or "false" in out  # TOML booleans
    assert "True" not in out and "False" not in out


def test_inherited_presets_and_key_errors_with_lines(tmp_path, capsys):
    f = tmp_path / "myarch.toml"
    f.write_text('base = "npire"\n\n[preset]\nname = "mine"\ndescription = "d"\n\n[np]\nhardwar_contexts = 4\n')
    code, out, err = run_main(capsys, "arch", "show", str(f))
    line = one_error_line(code, err)
    assert "myarch.toml:8: unknown key np.hardwar_contexts" in line
    f.write_text('base = "npire"\n[np]\npe_count = "many"\n')
    code, out, err = run_main(capsys, "arch", "show", str(f))
    line = one_error_line(code, err)
    assert "myarch.toml:3: np.pe_count" in line
    f.write_text('base = "npire"\n[np]\nhardware_contexts_per_pe = 4\n')
    code, out, err = run_main(
        capsys, "simulate", "router", "--arch", str(f), "--inter-arrival", "3000", *TINY, "--json"
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["settings"]["architecture"]["params"]["np"]["hardware_contexts_per_pe"] == 4
    code, out, err = run_main(capsys, "maxrate", "router", *TINY, "--set", "np.hardwar_contexts=4")
    assert "--set np.hardwar_contexts=4: unknown key np.hardwar_contexts" in one_error_line(code, err)


# ------------------------------------------------------------------------------------------------
# 8. bad numbers


@pytest.mark.parametrize(
    "argv, words",
    [
        (["maxrate", "router", "--pes", "100000"], ["--pes", "4096"]),
        (["simulate", "router", "--inter-arrival", "3000", "--set", "np.hardware_contexts_per_pe=1000000"], ["256"]),
        (["maxrate", "router", "--set", "np.pe_count=4294967295"], ["4096"]),
        (["maxrate", "router", "--set", "np.queue_size_requests=4294967295"], ["65536"]),
        (["maxrate", "router", "--set", "storage.dram.channels=4294967295"], ["1024"]),
        (["simulate", "router", "--inter-arrival", "nan"], ["--inter-arrival", "NaN"]),
        (["simulate", "router", "--inter-arrival", "-5"], ["--inter-arrival"]),
        (["simulate", "router", "--inter-arrival", "inf"], ["--inter-arrival"]),
        (["maxrate", "router", "--tolerance", "nan"], ["--tolerance"]),
        (["maxrate", "router", "--precision", "0"], ["--precision"]),
        (["maxrate", "router", "--packets", "0"], ["--packets"]),
        (["bottleneck", "router", "--threshold", "-1"], ["--threshold"]),
        (["explore", "router", "--pes", "4,100000"], ["--pes"]),
        (["map", "mpls", "--offered-gbps", "-1"], ["--offered-gbps"]),
        (["map", "mpls", "--offered-gbps", "nan"], ["--offered-gbps"]),
        (["map", "mpls", "--engines", "0"], ["--engines"]),
        (["simulate", "router", "--inter-arrival", "3000", "--replication", "sometimes"], ["sometimes"]),
        (["map", "mpls", "--mapper", "best"], ["best"]),
    ],
)
def test_bad_numbers_and_choices_are_refused_by_name(capsys, argv, words):
    code, out, err = run_main(capsys, *argv)
    line = one_error_line(code, err) if code == 2 and "Usage" not in err else err
    assert code == 2, err
    for w in words:
        assert w in line, line


def test_api_gets_the_same_messages():
    with pytest.raises(
        PktflowError, match=r"inter_arrival_cycles \(--inter-arrival\) must be a positive number, got NaN"
    ):
        api.simulate("router", inter_arrival_cycles=math.nan, packets=300)
    with pytest.raises(PktflowError, match=r"offered_gbps \(--offered-gbps\)"):
        tdpm.map_app("mpls", offered_gbps=-1.0, packets=300)


# ------------------------------------------------------------------------------------------------
# 9. choices are enums listed in --help


@pytest.mark.parametrize(
    "cmd, opt, choices",
    [
        ("simulate", "--replication", ["none", "pe", "subset", "global"]),
        ("maxrate", "--mapper", ["round-robin", "greedy", "greedy+replicate", "anneal"]),
        ("maxrate", "--scheduling", ["fifo", "first-eligible"]),
        ("bottleneck", "--lock-release", ["after-completion", "after-issue"]),
        ("simulate", "--destinations", ["zipf", "uniform", "address-space", "per-port"]),
        ("simulate", "--arrivals", ["fixed", "recorded"]),
        ("map", "--mapper", ["tdpm-refine", "tdpm", "tdpm-s", "comm", "res", "base", "optimal"]),
    ],
)
def test_choice_options_list_their_values(cmd, opt, choices):
    p = run_proc(cmd, "--help", env={"COLUMNS": "250"})
    assert p.returncode == 0
    for c in choices:
        assert c in p.stdout
    bad = run_proc(cmd, "mpls" if cmd == "map" else "router", opt, "bogus-choice")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_help_has_no_development_wording():
    for cmd in ("simulate", "maxrate", "bottleneck", "explore", "map"):
        p = run_proc(cmd, "--help", env={"COLUMNS": "250"})
        for w in (r"seed \d", r"Fig\. ", r"issue \d", r"section \d", r"before this change", r"this session"):
            assert not re.search(w, p.stdout), (cmd, w)


# ------------------------------------------------------------------------------------------------
# 10. hypothesis: numeric options never crash


NUMS = st.sampled_from(["0", "-1", "nan", "inf", "-inf", "1e300", "4294967296", "0.5", "3000"])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(opt=st.sampled_from(["--inter-arrival", "--pes", "--packets", "--time-scale", "--warmup"]), val=NUMS)
def test_simulate_numeric_options_exit_0_or_2(capsys, opt, val):
    argv = ["simulate", "router", "--packets", "200", "--pes", "4", "--inter-arrival", "3000", "--json"]
    if opt in argv:
        i = argv.index(opt)
        argv[i + 1] = val
    else:
        argv += [opt, val]
    code, out, err = run_main(capsys, *argv)
    assert code in (0, 2), err
    assert "Traceback" not in err
    if code == 2:
        assert len([ln for ln in err.splitlines() if ln.strip()]) >= 1


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(opt=st.sampled_from(["--tolerance", "--precision", "--pes", "--subset-size"]), val=NUMS)
def test_maxrate_numeric_options_exit_0_or_2(capsys, opt, val):
    argv = ["maxrate", "router", "--packets", "200", "--replication", "none", "--json"]
    if opt != "--pes":
        argv += ["--pes", "4"]
    code, out, err = run_main(capsys, *argv, opt, val)
    assert code in (0, 2), err
    assert "Traceback" not in err


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(opt=st.sampled_from(["--offered-gbps", "--packet-bytes", "--engines", "--packets"]), val=NUMS)
def test_map_numeric_options_exit_0_or_2(capsys, opt, val):
    argv = ["map", "mpls", "--json"]
    if opt != "--packets":
        argv += ["--packets", "200"]
    if opt == "--packets" and val in ("1e300", "4294967296", "3000"):
        val = "0"  # a long functional run is not what this test is about
    code, out, err = run_main(capsys, *argv, opt, val)
    assert code in (0, 2), err
    assert "Traceback" not in err


def test_interrupted_explore_prints_its_finished_points_then_interrupted(capsys, monkeypatch):
    doc = api.explore("router", pes="4,8", replication=["none"], packets=300, bottleneck=False, mapper="round-robin")
    assert doc["interrupted"] is False and len(doc["points"]) == 2
    doc["interrupted"] = True
    doc["points"] = doc["points"][:1]
    import pktflow.cli_np as cli_np

    monkeypatch.setattr(cli_np.api, "explore", lambda *a, **k: doc)
    code, out, err = run_main(capsys, "explore", "router", "--pes", "4,8", "--replication", "none")
    assert code == 130
    assert "interrupted: finished points only" in out and "1 points" in out
    assert err.strip().splitlines()[-1] == "interrupted"


def test_map_api_equals_cli_and_records_its_settings(capsys):
    code, out, err = run_main(capsys, "map", "mpls", "--engines", "2", "--packets", "300", "--json")
    assert code == 0, err
    cli = json.loads(out)
    s = cli["settings"]
    assert (s["mapper"], s["arch"], s["seed"], s["packets"], s["engines"]) == ("tdpm-refine", "ixp2400", 1, 300, 2)
    assert s["architecture"]["params"]["np"]["pe_count"] == 8
    assert "mapper_seconds" in cli["timing"] and "mapper_seconds" not in cli
    py = tdpm.map_app("mpls", engines=2, packets=300)
    assert strip_volatile({**cli, "run": None}) == strip_volatile(py)


def test_maxrate_on_a_short_trace_file_measures(tmp_path):
    """A trace file shorter than the default 20,000 packets: the warm-up is a fifth of what it
    holds, so the measurement window is not empty (it was, with a fifth of 20,000)."""
    trace = tmp_path / "short.pcap"
    pktflow.write_synthetic(trace, 3000, seed=1)
    r = run_json("maxrate", "router", "--trace", str(trace))
    assert r["settings"]["sim"]["warmup_packets"] == 600
    assert r["packets_per_second"] > 0


# ------------------------------------------------------------------------------------------------
# numbers that contradict themselves (issue: trust, round two)


def test_sub_cycle_inter_arrival_is_one_line_not_a_traceback(capsys):
    code, _, err = run_main(capsys, "simulate", "router", "--inter-arrival", "1e-300", *TINY)
    assert "below the 1e-3 cycles" in one_error_line(code, err)


def test_empty_trace_is_refused_not_reported_as_zero_rate(capsys, tmp_path):
    f = tmp_path / "global_hdr_only.pcap"
    f.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    code, out, err = run_main(capsys, "simulate", "router", "--trace", str(f), "--inter-arrival", "400")
    assert "holds no packets" in one_error_line(code, err) and "busy" not in out


def test_a_window_no_packet_leaves_is_flagged_not_shown_as_a_rate(capsys):
    """Overload: every departure falls after the measurement window, so its rate is 0 although
    packets were delivered; the report must say so next to the 0."""
    code, out, _ = run_main(capsys, "simulate", "router", "--inter-arrival", "1", "--packets", "2000")
    assert code == 0
    assert "delivered 0 packets/s" in out
    assert "no packet left during the measurement window" in out and "delivered after it" in out


# ------------------------------------------------------------------------------------------------
# Ctrl-C and exceptions in the Python API: raised after cleaning up, never swallowed


class _Boom(Exception):
    pass


@pytest.mark.parametrize("exc", [KeyboardInterrupt, _Boom])
def test_an_exception_in_a_progress_callback_stops_the_call_and_is_raised(exc):
    """It used to be printed and ignored (a script's Ctrl-C inside its callback was lost)."""
    calls = []

    def cb(*args):
        calls.append(args)
        raise exc("from the callback")

    with pytest.raises(exc, match="from the callback"):
        api.explore("router", pes=[4, 8], replication=["none", "global"], packets=300, progress=cb)
    assert len(calls) == 1, "callbacks stop after the first exception"
    # the next call starts clean (the cancellation and the kept exception were reset)
    assert api.maxrate("router", pes=4, packets=300)["packets_per_second"] > 0


_API_CTRL_C = """
import sys
import pktflow
try:
    r = pktflow.npsim.explore("router", pes=[4, 8, 12, 16, 20, 24, 28, 32], packets=3000,
                              progress=lambda *a: print("started", flush=True))
except pktflow.Interrupted as e:
    print("raised, kept", len(e.result["points"]), "points", flush=True)
    raise
print("carried on", flush=True)
"""


def test_ctrl_c_in_an_api_call_raises_keyboard_interrupt_with_the_finished_part():
    """A script's loop used to carry on with a partial result (4.0 packets/s recorded where the
    value is 25); now the call raises pktflow.Interrupted, a KeyboardInterrupt holding what was
    finished."""
    with spawned(
        [sys.executable, "-c", _API_CTRL_C], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as p:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 60:
            line = p.stdout.readline()
            if line.startswith("started") or not line:
                break
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    assert "carried on" not in out
    assert "raised, kept" in out and "KeyboardInterrupt" in err or "Interrupted" in err, (out, err)
    assert p.returncode != 0


def test_a_negative_count_is_not_answered_with_the_integer_types_range(capsys):
    code, _, err = run_main(capsys, "rtc", "nat", "--cores", "-1")
    line = one_error_line(code, err)
    assert "--cores" in line and "negative" in line and "4294967295" not in line


@pytest.mark.parametrize("argv", [["sweep", "/dev/zero", "--out", "OUT"], ["rerun", "/dev/zero"]])
def test_an_endless_input_file_is_refused_without_reading_it_whole(argv, tmp_path):
    """`sweep /dev/zero` and `rerun /dev/zero` read 5.5 GB (and then gave a traceback)."""
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    r = run_proc(*argv, timeout=60)
    assert "larger than" in one_error_line(r.returncode, r.stderr)


_ZERO_RATE_PPF = """name = "demo"
[[ppf]]
name = "classify"
rate = 0.0
instructions = 120
code_size = 900
[[channel]]
from = "rx"
to = "classify"
rate = 0.0
[[channel]]
from = "classify"
to = "tx"
rate = 0.0
"""

_NESTED_VARY = """command = "maxrate"
args = ["router"]
[options]
packets = 200
[vary]
pes = [[4, 8], [12]]
[metrics]
keep = { packets_per_second = "packets_per_second" }
"""

_ALL_FAIL = """command = "maxrate"
args = ["router"]
[options]
packets = 200
[vary]
pes = [0, 5000]
[metrics]
keep = { packets_per_second = "packets_per_second" }
"""


def test_inputs_that_gave_tracebacks_get_one_line(tmp_path, capsys):
    """Three of the round's tracebacks: a PPF graph whose every rate is 0, a [vary] of lists,
    and the report of a sweep whose every point failed."""
    g = tmp_path / "z.toml"
    g.write_text(_ZERO_RATE_PPF)
    code, _, err = run_main(capsys, "map", str(g), "--engines", "4")
    assert "every PPF's rate is 0" in one_error_line(code, err)
    e = tmp_path / "v.toml"
    e.write_text(_NESTED_VARY)
    code, _, err = run_main(capsys, "sweep", str(e), "--out", str(tmp_path / "v"))
    assert "vary.pes: each value must be" in one_error_line(code, err)
    f = tmp_path / "f.toml"
    f.write_text(_ALL_FAIL)
    code, _, err = run_main(capsys, "sweep", str(f), "--out", str(tmp_path / "f"))
    assert code == 2 and "every point failed" in err
    code, _, err = run_main(capsys, "report", str(tmp_path / "f"), "--html", str(tmp_path / "f.html"))
    assert "no point of the sweep succeeded" in one_error_line(code, err)
    assert not (tmp_path / "f.html").exists()


def test_the_udhcp_default_fits_the_operation_budget():
    """The thesis's UDHCP with its defaults (2,000 packets) used to be refused ("exceed 67108864
    operations"): each search read a whole 16-byte hardware address per lease entry where memcmp
    stops at the first differing word. Building its workload is enough to show it fits. (The
    refusal's wording: crates/rtc/src/workload.rs,
    a_workload_over_the_operation_budget_names_the_option_and_what_fits.)"""
    from pktflow import rtc

    s = rtc.conflicts("udhcp", window="2")
    assert s["packets"] == 2000, s
