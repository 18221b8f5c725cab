"""`make bench` judges its targets on ratios taken round by round, each round's figure over the
baseline timed in the same round, and prints their spread beside them (benchmarks/run.py). The
report is built here from figures made up for it, so a slip in the arithmetic or a verdict shows in
seconds, not after a quarter of an hour of benchmarking."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import inprocess  # noqa: E402
import run  # noqa: E402


def test_a_ratio_is_taken_round_by_round_not_as_a_ratio_of_medians() -> None:
    # the medians' ratio is 3 / 2 = 1.5; the rounds' ratios are 0.5, 2.5 and 3.0
    assert run.paired([1.0, 10.0, 3.0], [2.0, 4.0, 1.0]) == [2.5, 0.5, 3.0]


def test_rounds_must_pair() -> None:
    with pytest.raises(ValueError):
        run.paired([1.0, 2.0], [1.0])


def stdin_figures(warm: list[float], bare: list[float]) -> dict:
    names = ["python -c pass", "python -S -c pass", 'python -c "import msgspec"', run.WARM, run.WARM_BY_NAME,
             run.WARM_PLUGIN, run.COLD, run.COLD_BASH, run.PEER]
    times = {name: [0.02] * len(warm) for name in names}
    times[run.WARM], times["python -c pass"] = warm, bare
    ratios = {"warm hook / bare python": run.paired(warm, bare),
              "cold hook / msgspec-import floor": run.paired(times[run.COLD], times['python -c "import msgspec"'])}
    return {"medians_ms": {name: 20.0 for name in names}, "min_max_ms": {name: [10.0, 30.0] for name in names},
            "warm_breakdown_ms": {}, "ratios": ratios, "rounds": len(warm)}


def line(lines: list[str], start: str) -> str:
    (found,) = [text for text in lines if text.strip().startswith(start)]
    return found


def test_a_target_is_judged_on_the_median_and_the_spread_is_printed() -> None:
    # three rounds: the warm call under the bare start in two of them, far over it in one
    lines = run.stdin_lines(stdin_figures(warm=[0.018, 0.019, 0.040], bare=[0.020, 0.020, 0.020]))
    assert line(lines, "warm hook / bare python").split()[-5:] == ["0.950x", "[0.900-2.000]", "[<=", "1.0x:", "met]"]
    assert line(lines, "cold hook / msgspec-import floor").endswith("1.000x [1.000-1.000]  [<= 1.3x: met]")


def test_a_median_over_the_target_is_missed_whatever_its_best_round() -> None:
    lines = run.stdin_lines(stdin_figures(warm=[0.015, 0.021, 0.022], bare=[0.020, 0.020, 0.020]))
    assert line(lines, "warm hook / bare python").endswith("1.050x [0.750-1.100]  [<= 1.0x: MISSED]")


def test_engine_rows_print_their_spread_and_only_the_role_judged_writes_meet_a_target() -> None:
    rounds = {"bare call": [1_000_000.0, 1_000_000.0, 1_000_000.0],
              "PreToolUse Glob, nothing written": [40_000.0, 50_000.0, 45_000.0],
              inprocess.ALLOWED: [60_000.0, 40_000.0, 55_000.0],
              inprocess.DENIED: [20_000.0, 25_000.0, 30_000.0],
              "its system calls alone, allowed": [120_000.0, 80_000.0, 110_000.0]}
    lines = run.engine_lines({"rounds": rounds, "judged": inprocess.JUDGED, "floors": inprocess.FLOORS})
    assert line(lines, "PreToolUse Write, allowed").split("/s")[0].split()[-1] == "55,000"
    assert line(lines, "PreToolUse Write, allowed").endswith("[40,000-60,000]  ( 18.2x a bare call)  [>= 50,000/s: met]")
    assert line(lines, "PreToolUse Write, denied").endswith("[>= 50,000/s: MISSED]")
    assert "MISSED" not in line(lines, "PreToolUse Glob") and "met" not in line(lines, "PreToolUse Glob")
    assert line(lines, "its system calls alone, allowed").endswith("[the same system calls, no engine]")
    # each round's floor over the same round's decision: 2.0 in every round
    assert line(lines, "Write, allowed / its calls alone").endswith("2.00x [2.00-2.00]")
    assert not [text for text in lines if "denied / its calls alone" in text]  # a refused Write makes none


def test_the_pause_row_is_each_decision_after_a_pause_over_the_one_right_after_it() -> None:
    # pairs (cold, hot) in seconds: ratios 4, 2 and 5; medians 400 and 100 us
    pause = {"after_pause_s": [400e-6, 200e-6, 500e-6], "at_once_s": [100e-6, 100e-6, 100e-6], "pause_s": 0.033}
    lines = run.engine_lines({"rounds": {"bare call": [1.0]}, "judged": (), "floors": {}}, None, pause)
    assert line(lines, "allowed Write after a 33 ms pause / the next").endswith(
        "4.00x [2.00-5.00]  (400 vs 100 us, 3 pairs)")


def test_the_opencode_effect_row_is_judged_on_its_p50_and_its_pairs_ratio_printed_beside_it() -> None:
    on, off = [1.0, 3.0, 2.0, 4.0], [0.5, 1.0, 2.0, 4.0]  # ms per pair, the projects taking turns
    off_side, on_side, home_side = run.EFFECT_SIDES
    effect = {"kept_copies": 192, "rounds": 4, "opencode_pairs": 4,
              "medians_ms": {off_side: 50.0, on_side: 60.0, home_side: 80.0},
              "min_max_ms": {off_side: [40.0, 60.0], on_side: [50.0, 70.0], home_side: [70.0, 90.0]},
              "ratios": {"Bash pre+post, effect check on / off": run.paired([0.06] * 4, [0.05] * 4),
                         "Bash pre+post, on in a populated home / off": run.paired([0.08] * 4, [0.05] * 4),
                         "OpenCode before+after, effect check on / off": run.paired(on, off)},
              "opencode_pair_ms": {off_side: {"p50": 1.0, "p99": 2.0}, on_side: {"p50": 2.5, "p99": 3.0},
                                   home_side: {"p50": 1.5, "p99": 3.0}}}
    lines = run.effect_lines(effect)
    # pair by pair 2.0, 3.0, 1.0 and 1.0: their median, 1.5 (the medians' ratio would be 2.5 / 1.5)
    assert line(lines, "OpenCode before+after, effect check on / off").split()[-2:] == ["1.50x", "[1.00-3.00]"]
    on_row = line(lines, "OpenCode before+after, effect check on, p50")
    assert "2.50 / 3.00 ms  [<= 2 ms: MISSED]  (4 pairs" in on_row
    assert "MISSED" not in line(lines, "OpenCode before+after, effect check off, p50")
    # the populated home is judged as the check on is: its pair against 2 ms, its ratio against 1.5x
    assert "1.50 / 3.00 ms  [<= 2 ms: met]" in line(lines, f"OpenCode before+after, {home_side}, p50")
    assert line(lines, "Bash pre+post, on in a populated home / off").endswith("1.600x [1.600-1.600]  [<= 1.5x: MISSED]")


def test_the_opencode_section_judges_each_runtime_apart_and_says_which_it_could_not_run() -> None:
    figures = {"ms": {"plugin -> core p50": 0.4, "plugin -> core p99": 3.0, "waiting asleep (awakeMs 0) p50": 0.6,
                      "always awake (awakeMs 1) p50": 0.7, "echo floor p50": 0.9},
               "ratios": {"process per call / plugin, p50": 80.0, "as registered / asleep, p50": 0.667,
                          "always awake / asleep, p50": 1.1667}}
    lines = run.opencode_lines({"calls": 3, "runtimes": {"Node v20": figures, "the pinned OpenCode's own Bun": None}})
    assert any("the plugin under Node v20, 3 interleaved calls per side" in text for text in lines)
    assert line(lines, "plugin -> core p50").endswith("0.40 ms  [<= 0.5 ms: met]")
    assert line(lines, "plugin -> core p99").endswith("3.00 ms  [<= 2 ms: MISSED]")
    assert line(lines, "waiting asleep (awakeMs 0) p50").endswith("0.60 ms")  # beside the target, not judged by it
    assert line(lines, "echo floor p50").endswith("0.90 ms")
    assert line(lines, "always awake (awakeMs 1) p50").endswith("0.70 ms")
    assert line(lines, "as registered / asleep, p50").endswith("0.67x")
    assert line(lines, "always awake / asleep, p50").endswith("1.17x")
    assert line(lines, "process per call / plugin, p50").endswith("80.0x  [>= 50x: met]")
    assert any(text.endswith("the plugin under the pinned OpenCode's own Bun: not measured, it is not installed (make runtimes)")
               for text in lines)


def test_the_machine_line_names_the_interpreter() -> None:
    figures = {"cpus": 2, "cpu": "Some Processor", "load_average": (0.5, 1.0, 1.25),
               "interpreter": {"version": "CPython 3.11.7", "executable": "/opt/py/bin/python3.11", "shared": True}}
    assert run.machine_line(figures) == ("machine: 2 cpus (Some Processor), load average 0.50 1.00 1.25 (1, 5, 15 min) "
                                         "at the end of the run; CPython 3.11.7 (/opt/py/bin/python3.11, libpython shared)")
    figures["interpreter"] = {"version": "CPython 3.12.1", "executable": "/usr/bin/python3.12", "shared": False}
    assert run.machine_line({**figures, "cpu": None}).endswith(
        "(processor unknown), load average 0.50 1.00 1.25 (1, 5, 15 min) at the end of the run; "
        "CPython 3.12.1 (/usr/bin/python3.12, libpython linked in)")
    figures["interpreter"]["shared"] = None  # not Linux: nothing said about it
    assert run.machine_line(figures).endswith("CPython 3.12.1 (/usr/bin/python3.12)")


def test_the_interpreter_is_asked_of_the_one_measured() -> None:
    """The interpreter of the test run and Debian's, when there: whether each calls into a shared
    libpython is what the dynamic linker mapped into it (ldd says the same)."""
    import os
    import platform
    import shutil
    import subprocess

    build = run.machine(Path(sys.executable))["interpreter"]
    assert build["version"] == f"CPython {platform.python_version()}"
    assert build["executable"] == os.path.realpath(sys.executable)
    for python in {build["executable"], shutil.which("python3.11", path="/usr/bin") or build["executable"]}:
        linked = subprocess.run(["ldd", python], capture_output=True, text=True).stdout
        assert run.machine(Path(python))["interpreter"]["shared"] == ("libpython" in linked)
