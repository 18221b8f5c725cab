"""hookgate benchmarks: one command, a table on stdout, the figures as JSON.

    python benchmarks/run.py [--rounds N] [--effect-rounds N] [--json PATH] [--only SECTION]

Machines here are shared and noisy, so every figure is a ratio against a baseline measured in the
same run, with the commands interleaved round by round; a ratio is taken in each round (paired)
and printed as the median of the rounds' ratios with their min-max, the target judged on the
median. hookgate is measured as users run it: a regular (not editable) install in a venv of its
own, built on first use under benchmarks/.venv.

- stdin hook: `hookgate hook claude` on a PreToolUse Write the build role refuses, as `hookgate install
  claude` registers it (`python -S .../bin/hookgate`), answered by the project's warm core and
  in-process (HOOKGATE_WARM=off), warm by name (`hookgate` on PATH, under site), and warm through
  the Claude Code plugin's shipped handler (as the runtime starts it); in-process also a
  Bash call's PreToolUse and PostToolUse (`ls` under the build role: the effect check reads the
  project before and after), against two floors, and the same pair in a home whose protected
  folders hold 1,000 files (populated_home: a cold call keeps no feed, and lists them); against bare `python -c pass`, `python -S -c
  pass` and the msgspec-import floor (`python -c "import msgspec"`: no in-process hook can be
  faster). Beside them, the same Write decided by a
  process-per-script peer written the way GodotMaker's scripts are (benchmarks/peers/: two scripts per
  Write, each its own interpreter and JSON parse) and by a minimal C client of the warm core
  (benchmarks/cclient/, compiled here with gcc; a benchmark only). Where a warm call's time goes:
  -X importtime self times of the client's imports and the round trip to the core, measured apart.
- engine: decisions per second in-process (benchmarks/inprocess.py), beside bare Python calls.
- completion gate: a Stop decision in a session with a 1,000,000-line log against an empty one.
- effect check: a Bash PreToolUse + PostToolUse pair, warm, in a project of 5,000 files with a
  20,000-file `addons/` tree under the build role, with the effect check on against the same project
  with `[effect] enabled = false`, and on again in a home whose protected folders hold 1,000 files
  (skills, agents, commands: listed around every call); and the same pair through the OpenCode
  plugin and its core (tool.execute.before + after, benchmarks/opencode_effect.mjs) in all three.
- OpenCode: `tool.execute.before` through the real plugin and its core (each call after a process
  spawn, and back to back), against a Python process spawned per call (benchmarks/opencode_bench.mjs),
  beside the same plugin told to wait asleep for its answers (`awakeMs: 0`) and to keep its event loop
  turning (`awakeMs: 1`), which the plugin as registered chooses between by measuring, and the
  transport's floor: a process of the same interpreter that echoes each line at once. The plugin runs under Node and
  under the pinned OpenCode's own Bun (`make runtimes`), which is where OpenCode runs it.
- OpenTelemetry: a decision as `hookgate serve` makes it, exporting to a dead endpoint, against no
  export and a live endpoint (benchmarks/otel_bench.py).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")
BENCH_VENV = ROOT / "benchmarks" / ".venv"
# hookgate caches nothing built from files younger than this (config/cache.py); a fresh install
# must age past it, as every real install has
RACY_SECONDS = 2.0
SETTLE_SECONDS = 0.03  # before each timed command: the last one's core has made its next fork
TARGETS = {
    "warm hook / bare python": 1.0,
    "cold hook / msgspec-import floor": 1.3,
    "cold Bash pair / two msgspec-import floors": 1.3,
    "cold Bash pair, populated home / two floors": 1.3,
    "session-length cost (1M-line log / empty)": 2.0,
    "Bash pre+post, effect check on / off": 1.5,
    "Bash pre+post, on in a populated home / off": 1.5,
}
MIN_DECISIONS_PER_SECOND = 50_000
OPENCODE_MAX_P50_MS = 0.5  # the absolute figures: printed targets, never tests
OPENCODE_MAX_P99_MS = 2.0
OPENCODE_MAX_PAIR_P50_MS = 2.0  # a bash call's before + after with the effect check on
OPENCODE_MIN_SPEEDUP = 50.0


def spread(values: list[float]) -> list[float]:
    """[median, min, max]: a figure and the machine's noise around it."""
    return [statistics.median(values), min(values), max(values)]


def paired(tops: list[float], bottoms: list[float]) -> list[float]:
    """A ratio taken round by round, each round's figure over its baseline timed in the same round
    (a slow stretch of the machine weighs on both sides of it), as spread() of those ratios."""
    return [round(x, 3) for x in spread([top / bottom for top, bottom in zip(tops, bottoms, strict=True)])]


def mark(met: bool, target: str) -> str:
    return f"  [{target}: {'met' if met else 'MISSED'}]"


def ratio_text(ratio: list[float], width: int = 8, digits: int = 2) -> str:
    median, low, high = ratio
    return f"{median:{width}.{digits}f}x [{low:.{digits}f}-{high:.{digits}f}]"


def judged(ratio: list[float], target: float | None) -> str:
    """A ratio and, where a target (at most) judges it, its verdict, with three digits so that a
    median just over the line does not print as on it."""
    if target is None:
        return ratio_text(ratio)
    return ratio_text(ratio, digits=3) + mark(ratio[0] <= target, f"<= {target}x")


def bench_python() -> Path:
    """A venv with hookgate installed the way users install it; rebuilt when the source changed."""
    python = BENCH_VENV / "bin" / "python"
    stamp = BENCH_VENV / "source-stamp"
    sources = sorted(p for d in ("core", "adapters") for p in (ROOT / d).rglob("*")
                     if p.is_file() and "__pycache__" not in p.parts) + [ROOT / "pyproject.toml"]
    digest = str(max(p.stat().st_mtime_ns for p in sources)) + str(len(sources))
    if not python.exists() or not stamp.exists() or stamp.read_text() != digest:
        print("building the benchmark venv (a regular install of this checkout)...", file=sys.stderr)
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(BENCH_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", str(ROOT)],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "msgspec", "watchfiles", "opentelemetry-sdk",
                        "opentelemetry-exporter-otlp-proto-http"], check=True, stdout=subprocess.DEVNULL)
        stamp.write_text(digest)
        time.sleep(RACY_SECONDS + 0.5)
    return python


# processes run one after the other; their stdin (one for all, or one each); the environment
Command = tuple[list[list[str]], bytes | list[bytes], dict[str, str]]


_STARTED = time.monotonic()


def progress(text: str) -> None:
    """A line on stderr as the run goes, with the minutes it has taken so far: the report comes
    only at the end, on stdout, and a full run takes minutes."""
    elapsed = int(time.monotonic() - _STARTED)
    print(f"[{elapsed // 60}:{elapsed % 60:02d}] {text}", file=sys.stderr, flush=True)


def measured(what: str, measure: Callable[[], T]) -> T:
    progress(what)
    return measure()


def time_commands(commands: dict[str, Command], rounds: int, cwd: Path | dict[str, Path],
                  shown: bool = False) -> dict[str, list[float]]:
    """Run every command once per round, interleaved, and keep each one's wall times (a command of
    several processes: all of them, one after the other, as a runtime runs two hooks of one event).

    Each round takes the commands in a new order, each after a pause: a warm core replaces the
    fork that answered right after the answer, and with a fixed order the command after a warm
    call (the baseline, at the start of the next round) always paid for that. `shown`: a progress
    line every tenth round."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    order = random.Random(16)  # the same orders on every run
    for finished in range(1, rounds + 1):
        for name in order.sample(list(commands), len(commands)):
            argvs, stdin, env = commands[name]
            where = cwd.get(name, cwd["*"]) if isinstance(cwd, dict) else cwd
            time.sleep(SETTLE_SECONDS)
            inputs = stdin if isinstance(stdin, list) else [stdin] * len(argvs)
            start = time.perf_counter()
            for argv, given in zip(argvs, inputs):
                done = subprocess.run(argv, input=given, cwd=where, env=env, capture_output=True)
                if done.returncode not in (0, 2):
                    raise SystemExit(f"{name} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
            times[name].append(time.perf_counter() - start)
        if shown and finished % 10 == 0 and finished < rounds:
            progress(f"  round {finished} of {rounds}")
    return times


WARM = "hookgate hook claude, warm, as registered"
WARM_BY_NAME = "hookgate hook claude, warm, by name"
WARM_PLUGIN = "the same through the plugin channels' command"
COLD = "hookgate hook claude, cold, as registered"
COLD_BASH = "cold Bash pair (before + after, effect check on)"
COLD_BASH_HOME = "the same, 1,000 files in the home"
C_CLIENT = "a C client of the warm core"
PEER = "peer: 2 scripts per Write (GodotMaker's way)"


def claude_handler(path: Path, event: str) -> tuple[dict, list[str]]:
    """The first handler for `event` in a Claude Code hooks document, and the argv Claude Code
    starts for it: exec form (`command`, `args`) as it is, a command line alone through a shell."""
    handler = next(h for entry in json.loads(path.read_text())["hooks"][event] for h in entry["hooks"])
    args = handler.get("args")
    return handler, [handler["command"], *args] if isinstance(args, list) else ["sh", "-c", handler["command"]]


def registered_command(python: Path, root: Path, env: dict[str, str]) -> list[str]:
    """The PreToolUse handler `hookgate install claude` writes, as the argv Claude Code starts."""
    hookgate = str(python.with_name("hookgate"))
    subprocess.run([hookgate, "install", "claude", "--project", str(root)], env=env, check=True, capture_output=True)
    handler, argv = claude_handler(root / ".claude" / "settings.json", "PreToolUse")
    if "args" not in handler:
        raise SystemExit(f"the registration is not in exec form (Claude Code would start a shell first): {handler}")
    argv = argv[:argv.index("hook")]  # the program; the benchmark adds `hook claude`
    if "-S" not in argv:
        raise SystemExit(f"the registration does not start hookgate without site: {argv}")
    return argv


def stdin_hook(python: Path, rounds: int) -> dict[str, object]:
    hookgate = str(python.with_name("hookgate"))
    with tempfile.TemporaryDirectory(prefix="hookgate-bench-") as tmp:
        root, peer_root = Path(tmp) / "project", Path(tmp) / "peer"
        for folder, state in ((root, ".hookgate"), (peer_root, ".godotmaker")):
            (folder / state).mkdir(parents=True)
            (folder / state / "current_role").write_text("build\n")
        def payload(where: Path) -> bytes:
            return json.dumps({
                "session_id": f"bench-{where.name}", "cwd": str(where), "hook_event_name": "PreToolUse", "tool_name": "Write",
                "tool_input": {"file_path": str(where / "src" / "player.gd"), "content": "extends Node\n"},
            }).encode()
        bash = {"session_id": f"bench-{root.name}", "cwd": str(root), "tool_name": "Bash",
                "tool_input": {"command": "ls"}, "tool_use_id": "toolu_cold"}
        bash_pair = [json.dumps({**bash, "hook_event_name": event, **extra}).encode()
                     for event, extra in (("PreToolUse", {}), ("PostToolUse", {"tool_response": "ok"}))]
        env = {k: v for k, v in os.environ.items() if not k.startswith("HOOKGATE_")}
        cold_env = {**env, "HOOKGATE_WARM": "off"}
        home = Path(tmp) / "home"
        populated_home(home)
        # that home's user keeps hookgate's state in it, as a user does: with the run's state folder
        # the two homes would share the project's store and take turns reading it afresh
        home_env = {**{k: v for k, v in cold_env.items() if k != "XDG_STATE_HOME"}, "HOME": str(home)}
        registered = registered_command(python, root, env)
        _, plugin = claude_handler(ROOT / "adapters" / "claude" / "plugin" / "hooks" / "hooks.json", "PreToolUse")
        # the core first: it makes the private directory the socket's path is worked out in (on a
        # fresh machine there is none before a core has started)
        subprocess.run([hookgate, "warm", "start"], cwd=root, env=env, check=True, capture_output=True)
        identity, socket = warm_identity(python, root, env)
        (Path(tmp) / "identity").write_bytes(identity)
        client = c_client(Path(tmp))
        peers = ROOT / "benchmarks" / "peers"
        commands: dict[str, Command] = {
            "python -c pass": ([[str(python), "-c", "pass"]], b"", env),
            "python -S -c pass": ([[str(python), "-S", "-c", "pass"]], b"", env),
            'python -c "import msgspec"': ([[str(python), "-c", "import msgspec"]], b"", env),
            WARM: ([[*registered, "hook", "claude"]], payload(root), env),
            WARM_BY_NAME: ([[hookgate, "hook", "claude"]], payload(root), env),
            WARM_PLUGIN: ([plugin], payload(root),
                          {**env, "PATH": f"{python.parent}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"}),
            COLD: ([[*registered, "hook", "claude"]], payload(root), cold_env),
            COLD_BASH: ([[*registered, "hook", "claude"]] * 2, bash_pair, cold_env),
            COLD_BASH_HOME: ([[*registered, "hook", "claude"]] * 2, bash_pair, home_env),
            PEER: ([[str(python), str(peers / "check_file_permissions.py")],
                    [str(python), str(peers / "stage_reminder.py")]], payload(peer_root), env),
        }
        if client:
            commands[C_CLIENT] = ([[str(client), socket, str(Path(tmp) / "identity"), "claude"]], payload(root), env)
        cwd = {"*": root, PEER: peer_root}
        try:
            time_commands(commands, 2, cwd)  # warm-up: page cache, the config cache
            for name in (WARM, WARM_PLUGIN, C_CLIENT, PEER):  # every side decides the same Write the same way
                if name in commands:
                    argvs, stdin, run_env = commands[name]
                    said = subprocess.run(argvs[0], input=stdin, cwd=cwd.get(name, root), env=run_env,
                                          capture_output=True).stdout
                    if b'"deny"' not in said:
                        raise SystemExit(f"{name} did not refuse the Write: {said!r}")
            decided = (root / ".hookgate" / "sessions" / f"bench-{root.name}" / "decisions.jsonl").read_text()
            if '"effect_snapshot"' not in decided or '"effect_restore"' not in decided:
                raise SystemExit("the cold Bash pair did not go through the effect check")
            if kept_copies(python, root, home_env) < HOME_FILES:
                raise SystemExit("the cold Bash pair in the populated home did not read its protected folders")
            times = time_commands(commands, rounds, cwd, shown=True)
            breakdown = warm_breakdown(python, registered, payload(root), root, env)
            served = subprocess.run([hookgate, "warm", "status"], cwd=root, env=env, capture_output=True, text=True)
        finally:
            subprocess.run([hookgate, "warm", "stop"], cwd=root, env=env, capture_output=True)
        if "running" not in served.stdout:
            raise SystemExit(f"the warm core was not running through the benchmark: {served.stdout}")
    medians = {name: statistics.median(values) for name, values in times.items()}
    bare, floor, warm = times["python -c pass"], times['python -c "import msgspec"'], times[WARM]
    ratios = {
        "warm hook / bare python": paired(warm, bare),
        "warm hook by name / bare python": paired(times[WARM_BY_NAME], bare),
        "warm hook, plugin channels' command / bare python": paired(times[WARM_PLUGIN], bare),
        "warm hook, plugin channels' command / by name": paired(times[WARM_PLUGIN], times[WARM_BY_NAME]),
        "warm hook / msgspec-import floor": paired(warm, floor),
        "cold hook / bare python": paired(times[COLD], bare),
        "cold hook / msgspec-import floor": paired(times[COLD], floor),
        "cold Bash pair / two msgspec-import floors": paired(times[COLD_BASH], [2 * t for t in floor]),
        "cold Bash pair, populated home / two floors": paired(times[COLD_BASH_HOME], [2 * t for t in floor]),
        "cold Bash pair, populated home / empty home": paired(times[COLD_BASH_HOME], times[COLD_BASH]),
        "warm hook / cold hook": paired(warm, times[COLD]),
        "peer (2 scripts) / warm hook": paired(times[PEER], warm),
    }
    if C_CLIENT in times:
        ratios["C client / warm hook"] = paired(times[C_CLIENT], warm)
        ratios["C client / bare python"] = paired(times[C_CLIENT], bare)
    breakdown["interpreter start without site"] = round(medians["python -S -c pass"] * 1000, 2)
    breakdown["site (python -c pass minus python -S)"] = round((medians["python -c pass"] - medians["python -S -c pass"]) * 1000, 2)
    return {
        "medians_ms": {k: round(v * 1000, 2) for k, v in medians.items()},
        "min_max_ms": {k: [round(min(v) * 1000, 2), round(max(v) * 1000, 2)] for k, v in times.items()},
        "ratios": ratios,
        "warm_breakdown_ms": breakdown,
        "rounds": rounds,
    }


def warm_identity(python: Path, root: Path, env: dict[str, str]) -> tuple[bytes, str]:
    """What the C client is handed: the identity and socket the Python client works out."""
    done = subprocess.run([str(python), "-c", "import sys; from hookgate import client; "
                           "sys.stdout.buffer.write(client.identity() + b'\\n' + client.locate().encode())"],
                          cwd=root, env=env, capture_output=True, check=True)
    identity, _, socket = done.stdout.rpartition(b"\n")
    return identity, socket.decode()


def c_client(folder: Path) -> Path | None:
    """benchmarks/cclient compiled here (None without a C compiler: the row is left out)."""
    binary = folder / "hookgate_client"
    done = subprocess.run(["gcc", "-O2", "-o", str(binary), str(ROOT / "benchmarks" / "cclient" / "hookgate_client.c")],
                          capture_output=True)
    return binary if done.returncode == 0 else None


WARM_PROBE = r"""
import sys, time
sys.path.append(sys.argv[1])
from hookgate import client
raw = sys.stdin.buffer.read()
path, times = client.locate(), []
for _ in range(int(sys.argv[2])):
    time.sleep(0.03)  # a call at a time, as the runtime makes them
    start = time.perf_counter()
    answer = client.exchange(path, "claude", "", raw)
    times.append(time.perf_counter() - start)
    assert isinstance(answer, tuple), answer
times.sort()
print(times[len(times) // 2] * 1000)
"""


def warm_breakdown(python: Path, registered: list[str], payload: bytes, root: Path,
                   env: dict[str, str]) -> dict[str, float]:
    """Where a warm call's time goes, beside the interleaved figures: the client's imports (self
    times from -X importtime, which inflates them a little; median of 5 runs) and the round trip
    to the core (median of 20 calls from one process, the client's imports excluded)."""
    where = "import hookgate, pathlib; print(pathlib.Path(hookgate.__file__).resolve().parent.parent)"
    lib = subprocess.run([str(python), "-c", where], capture_output=True, text=True, check=True).stdout.strip()
    groups: dict[str, list[float]] = {}
    for _ in range(5):
        done = subprocess.run([registered[0], "-X", "importtime", *registered[1:], "hook", "claude"], input=payload,
                              cwd=root, env=env, capture_output=True, text=False)
        totals: dict[str, float] = {}
        for line in done.stderr.decode().splitlines():
            if line.startswith("import time:") and "|" in line and "self [us]" not in line:
                self_us, _, name = (part.strip() for part in line[len("import time:"):].split("|"))
                group = ("hookgate's client modules" if name.startswith("hookgate") else
                         "_socket" if name == "_socket" else
                         "os and what it imports" if name in ("os", "stat", "_stat", "posixpath", "genericpath",
                                                              "_collections_abc") else
                         "the interpreter's own start-up imports")
                totals[group] = totals.get(group, 0.0) + float(self_us) / 1000
        for group, total in totals.items():
            groups.setdefault(group, []).append(total)
    figures = {f"imports: {group}": round(statistics.median(values), 2) for group, values in groups.items()}
    probe = subprocess.run([str(python), "-S", "-c", WARM_PROBE, lib, "20"], input=payload, cwd=root, env=env,
                           capture_output=True)
    if probe.returncode != 0:
        raise SystemExit(f"the round-trip probe failed: {probe.stderr.decode()[-500:]}")
    figures["round trip to the core (connect, fork decides, answer)"] = round(float(probe.stdout.strip()), 2)
    return figures


def effect_project(root: Path, effect: bool) -> None:
    """5,000 project files in 250 folders and a 20,000-file addons/ tree in 1,000 folders, about
    as a Godot project with a few plugins is: scripts, scenes, resources, images and their imports."""
    (root / ".hookgate").mkdir(parents=True)
    (root / ".hookgate" / "current_role").write_text("build\n")
    if not effect:
        (root / ".hookgate" / "config.toml").write_text("[effect]\nenabled = false\n")
    kinds = [".gd", ".tscn", ".md", ".png", ".txt", ".tres", ".import", ".json"]
    for tree, files, folders in (("game", 5000, 250), ("addons", 20000, 1000)):
        for i in range(files):
            folder = root / tree / f"d{i % folders // 25}" / f"f{i % folders}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"file{i}{kinds[i % len(kinds)]}").write_bytes(b"x" * (64 + i % 512))


HOME_FILES = 1000


def populated_home(home: Path) -> None:
    """A home whose protected folders outside the project hold HOME_FILES files, as a user's with
    many skills: 40 skills of 24 files each (SKILL.md, scripts, references), 20 user agents and 20
    commands. The effect check lists them around every checked call (effect/check.py)."""
    claude = home / ".claude"
    for skill in range(40):
        folder = claude / "skills" / f"skill{skill}"
        (folder / "scripts").mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: skill{skill}\n---\nDo the thing.\n")
        for i in range(23):
            (folder / "scripts" / f"step{i}.py").write_text(f"print('skill {skill}, step {i}')\n")  # each distinct
    for kind in ("agents", "commands"):
        (claude / kind).mkdir(parents=True)
        for i in range(20):
            (claude / kind / f"{kind}{i}.md").write_text(f"# {kind} {i}\n")
    assert sum(len(files) for _, _, files in os.walk(home)) == HOME_FILES


# the effect section's projects: (effect check on, a populated home)
EFFECT_SIDES = {"effect check off": (False, False), "effect check on": (True, False),
                f"on, {HOME_FILES:,} files in the home": (True, True)}


def effect_check(python: Path, rounds: int, opencode_pairs: int) -> dict[str, object]:
    """`rounds` of the stdin pair (about 0.1 s each) and `opencode_pairs` of the OpenCode one (about
    2 ms each: enough of them that their p50 is not one pair's luck). Each project has a home of
    its own, empty or populated (populated_home), named by HOME for its hooks and its core."""
    hookgate = str(python.with_name("hookgate"))
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("HOOKGATE_") and k not in (
        "XDG_CONFIG_HOME", "XDG_STATE_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    with tempfile.TemporaryDirectory(prefix="hookgate-bench-effect-") as tmp:
        pairs: dict[str, tuple[Path, bytes, bytes, dict[str, str]]] = {}
        for name, (effect, populated) in EFFECT_SIDES.items():
            side = Path(tmp) / f"side{len(pairs)}"
            root, home = side / "project", side / "home"
            effect_project(root, effect)
            home.mkdir()
            if populated:
                populated_home(home)
            env = {**base_env, "HOME": str(home)}
            # a session of its own per project: a session is governed by the root it started in
            base = {"session_id": f"bench-{side.name}", "cwd": str(root), "tool_name": "Bash",
                    "tool_input": {"command": "ls"}, "tool_use_id": "toolu_bench"}
            pre = json.dumps({**base, "hook_event_name": "PreToolUse"}).encode()
            post = json.dumps({**base, "hook_event_name": "PostToolUse", "tool_response": "ok"}).encode()
            pairs[name] = (root, pre, post, env)
            subprocess.run([hookgate, "warm", "start"], cwd=root, env=env, check=True, capture_output=True)
        times: dict[str, list[float]] = {name: [] for name in pairs}
        try:
            for round_ in range(rounds + 3):  # 3 warm-up rounds: the first reading keeps every copy
                for name, (root, pre, post, env) in pairs.items():
                    start = time.perf_counter()
                    for payload in (pre, post):
                        done = subprocess.run([hookgate, "hook", "claude"], input=payload, cwd=root, env=env,
                                              capture_output=True)
                        if done.returncode != 0 or b"block" in done.stdout:
                            raise SystemExit(f"{name}: unexpected answer {done.stdout!r} {done.stderr!r}")
                    if round_ >= 3:
                        times[name].append(time.perf_counter() - start)
            # the copies live in the project's store, outside the project (hookgate.effect.store)
            kept = {name: kept_copies(python, root, env) for name, (root, _, _, env) in pairs.items() if name != "effect check off"}
            if not all(kept.values()) or kept[list(pairs)[2]] < kept["effect check on"] + HOME_FILES:
                raise SystemExit(f"the effect check kept too few copies ({kept}): it did not run, or did not read the "
                                 "home's protected folders, and the figures would mean nothing")
            # the same pair through the OpenCode plugin and its core, in the same projects and homes
            done = subprocess.run(["node", str(ROOT / "benchmarks" / "opencode_effect.mjs"), hookgate, str(opencode_pairs),
                                   *(f"{root}={env['HOME']}" for root, _, _, env in pairs.values())],
                                  env=base_env, capture_output=True, text=True, timeout=1800)
            if done.returncode != 0:
                raise SystemExit(f"the OpenCode effect pair failed: {done.stderr[-1000:]}")
            by_root = json.loads(done.stdout.strip().splitlines()[-1])
            opencode = {name: by_root[str(root)] for name, (root, _, _, _) in pairs.items()}
        finally:
            for root, _, _, env in pairs.values():
                subprocess.run([hookgate, "warm", "stop"], cwd=root, env=env, capture_output=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    off, on, home = EFFECT_SIDES
    return {
        "medians_ms": {k: round(v * 1000, 2) for k, v in medians.items()},
        "min_max_ms": {k: [round(min(v) * 1000, 2), round(max(v) * 1000, 2)] for k, v in times.items()},
        "ratios": {"Bash pre+post, effect check on / off": paired(times[on], times[off]),
                   "Bash pre+post, on in a populated home / off": paired(times[home], times[off]),
                   "OpenCode before+after, effect check on / off": paired(opencode[on]["times_ms"],
                                                                           opencode[off]["times_ms"]),
                   "OpenCode before+after, populated home / off": paired(opencode[home]["times_ms"],
                                                                          opencode[off]["times_ms"])},
        "opencode_pair_ms": {name: {"p50": round(o["p50_ms"], 2), "p99": round(o["p99_ms"], 2)}
                             for name, o in opencode.items()},
        "kept_copies": kept["effect check on"],
        "rounds": rounds,
        "opencode_pairs": opencode_pairs,
    }


def kept_copies(python: Path, root: Path, env: dict[str, str]) -> int:
    """How many distinct protected contents the project's effect store keeps copies of."""
    blobs = subprocess.run([str(python), "-c", "import sys; from hookgate.effect.store import store_for; "
                            "print(store_for(sys.argv[1]).blobs)", str(root)],
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    return len(os.listdir(blobs)) if os.path.isdir(blobs) else 0


def opencode_runtimes() -> dict[str, list[str] | None]:
    """Where the plugin runs for the OpenCode section, as the command that runs a script there:
    Node, and the Bun inside the pinned OpenCode (`make runtimes`), which runs plugins in OpenCode
    and runs a script as `bun` with BUN_BE_BUN=1; None for it when it is not installed."""
    sys.path.insert(0, str(ROOT / "parity-tests"))
    from harness.runtimes import pinned  # the one reader of the pinned runtimes' packages

    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    program = pinned("opencode")
    if program is None:
        return {f"Node {node}": ["node"], "the pinned OpenCode's own Bun": None}
    bun = ["env", "BUN_BE_BUN=1", program]
    versions = [subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()
                for command in ([program, "--version"], [*bun, "-e", "console.log(Bun.version)"])]
    return {f"Node {node}": ["node"], "OpenCode {}'s own Bun {}".format(*versions): bun}


def opencode_hook(python: Path, calls: int) -> dict[str, object]:
    """tool.execute.before -> core -> verdict through the real plugin, under each runtime of
    opencode_runtimes(), against one Python process per call (what GodotMaker's adapter does),
    interleaved in the same run."""
    return {"calls": calls, "runtimes": {name: command and measured(f"  the plugin under {name}",
                                                                    lambda: opencode_hook_under(command, python, calls))
                                         for name, command in opencode_runtimes().items()}}


def opencode_hook_under(runtime: list[str], python: Path, calls: int) -> dict[str, object]:
    hookgate = python.with_name("hookgate")
    with tempfile.TemporaryDirectory(prefix="hookgate-bench-oc-") as tmp:
        root = Path(tmp)
        (root / ".hookgate").mkdir()
        (root / ".hookgate" / "current_role").write_text("build\n")
        done = subprocess.run([*runtime, str(ROOT / "benchmarks" / "opencode_bench.mjs"), str(hookgate), str(root), str(calls)],
                              capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"opencode benchmark under {runtime[-1]} failed ({done.returncode}): {done.stderr[-1000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    plugin, burst, spawned = figures["plugin"], figures["plugin_burst"], figures["process_per_call"]
    asleep, asleep_burst = figures["plugin_asleep"], figures["plugin_asleep_burst"]
    awake, awake_burst = figures["plugin_awake"], figures["plugin_awake_burst"]
    echo, echo_burst = figures["echo"], figures["echo_burst"]
    return {
        "ms": {
            "plugin -> core p50": round(plugin["p50_ms"], 3), "plugin -> core p99": round(plugin["p99_ms"], 3),
            "plugin -> core p50, back to back": round(burst["p50_ms"], 3),
            "plugin -> core p99, back to back": round(burst["p99_ms"], 3),
            "waiting asleep (awakeMs 0) p50": round(asleep["p50_ms"], 3),
            "waiting asleep p99": round(asleep["p99_ms"], 3),
            "waiting asleep p50, back to back": round(asleep_burst["p50_ms"], 3),
            "waiting asleep p99, back to back": round(asleep_burst["p99_ms"], 3),
            "always awake (awakeMs 1) p50": round(awake["p50_ms"], 3),
            "always awake p99": round(awake["p99_ms"], 3),
            "always awake p50, back to back": round(awake_burst["p50_ms"], 3),
            "always awake p99, back to back": round(awake_burst["p99_ms"], 3),
            "echo floor p50": round(echo["p50_ms"], 3), "echo floor p99": round(echo["p99_ms"], 3),
            "echo floor p50, back to back": round(echo_burst["p50_ms"], 3),
            "echo floor p99, back to back": round(echo_burst["p99_ms"], 3),
            "process per call p50": round(spawned["p50_ms"], 2), "process per call p99": round(spawned["p99_ms"], 2),
        },
        "ratios": {
            "process per call / plugin, p50": round(spawned["p50_ms"] / plugin["p50_ms"], 1),
            "process per call / plugin, p99": round(spawned["p99_ms"] / plugin["p99_ms"], 1),
            "as registered / asleep, p50": round(plugin["p50_ms"] / asleep["p50_ms"], 2),
            "as registered / asleep, p50 back to back": round(burst["p50_ms"] / asleep_burst["p50_ms"], 2),
            "always awake / asleep, p50": round(awake["p50_ms"] / asleep["p50_ms"], 2),
            "always awake / asleep, p50 back to back": round(awake_burst["p50_ms"] / asleep_burst["p50_ms"], 2),
            "plugin / echo floor, p50": round(plugin["p50_ms"] / echo["p50_ms"], 1),
            "plugin / echo floor, p50 back to back": round(burst["p50_ms"] / echo_burst["p50_ms"], 1),
        },
    }


def inprocess(python: Path, name: str) -> dict[str, object]:
    done = subprocess.run([str(python), str(ROOT / "benchmarks" / "inprocess.py"), name], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def effect_lines(effect: dict) -> list[str]:
    lines = ["", f"effect check: Bash PreToolUse + PostToolUse, warm, 25,000 files ({effect['kept_copies']:,} "
             f"distinct protected contents kept), median of {effect['rounds']} interleaved rounds"]
    lines += [f"  {name:<44} {ms:8.1f} ms  [{lo:.1f}-{hi:.1f}]"
              for (name, ms), (lo, hi) in zip(effect["medians_ms"].items(), effect["min_max_ms"].values())]
    for name, ratio in effect["ratios"].items():
        lines.append(f"  {name:<44} {judged(ratio, TARGETS.get(name))}")
    for name, ms in effect["opencode_pair_ms"].items():
        verdict = mark(ms["p50"] <= OPENCODE_MAX_PAIR_P50_MS, f"<= {OPENCODE_MAX_PAIR_P50_MS:g} ms") \
            if name != "effect check off" else ""
        lines.append(f"  {'OpenCode before+after, ' + name + ', p50 / p99':<44} {ms['p50']:8.2f} / {ms['p99']:.2f} ms{verdict}"
                     f"  ({effect['opencode_pairs']} pairs, the projects taking turns)")
    return lines


def stdin_lines(hook: dict, extra_ratios: dict[str, list[float]] | None = None) -> list[str]:
    lines = [f"stdin hook latency, median of {hook['rounds']} interleaved rounds [min-max] "
             "(absolute ms are for this machine only)"]
    lines += [f"  {name:<52} {ms:8.1f} ms  [{lo:.1f}-{hi:.1f}]"
              for (name, ms), (lo, hi) in zip(hook["medians_ms"].items(), hook["min_max_ms"].values())]
    lines += ["", "where a warm call's time goes (ms)"]
    lines += [f"  {name:<60} {ms:6.2f}" for name, ms in hook["warm_breakdown_ms"].items()]
    lines += ["", "ratios, round by round: median [min-max] (target in brackets, judged on the median)"]
    for name, ratio in {**hook["ratios"], **(extra_ratios or {})}.items():
        lines.append(f"  {name:<52} {judged(ratio, TARGETS.get(name))}")
    return lines


def rate_text(rates: list[float]) -> str:
    median, low, high = spread(rates)
    return f"{median:10,.0f}/s [{low:,.0f}-{high:,.0f}]"


def engine_lines(engine: dict, completion: dict | None = None, pause: dict | None = None) -> list[str]:
    lines = ["", f"in-process decisions per second, median of interleaved rounds [min-max] (>= {MIN_DECISIONS_PER_SECOND:,}/s)"]
    rounds = engine["rounds"]
    floors = engine["floors"]  # decision -> the row of its system calls alone
    for name, rates in rounds.items():
        verdict = ""
        if name != "bare call":
            verdict = f"  ({paired(rounds['bare call'], rates)[0]:5.1f}x a bare call)" + (
                mark(statistics.median(rates) >= MIN_DECISIONS_PER_SECOND, f">= {MIN_DECISIONS_PER_SECOND:,}/s")
                if name in engine["judged"] else "  [the same system calls, no engine]" if name in floors.values()
                else "")
        lines.append(f"  {name:<44} {rate_text(rates)}{verdict}")
    for name, floor in floors.items():
        lines.append(f"  {name.removeprefix('PreToolUse ') + ' / its calls alone':<44} "
                     f"{ratio_text(paired(rounds[floor], rounds[name]), 10)}")
    for name, rates in (completion or {}).get("rounds", {}).items():
        lines.append(f"  {'Stop (completion gate), ' + name:<44} {rate_text(rates)}")
    if pause:
        cold, hot = pause["after_pause_s"], pause["at_once_s"]
        label = f"allowed Write after a {pause['pause_s'] * 1000:g} ms pause / the next"
        lines.append(f"  {label:<44} {ratio_text(paired(cold, hot), 10)}  ({statistics.median(cold) * 1e6:.0f} vs "
                     f"{statistics.median(hot) * 1e6:.0f} us, {len(cold)} pairs)")
    return lines


def session_length_cost(completion: dict) -> list[float]:
    """A Stop decision's time in the long session over its time in the empty one, round by round."""
    return paired(completion["rounds"][completion["baseline"]], completion["rounds"][completion["long"]])


def opencode_lines(opencode: dict) -> list[str]:
    lines = []
    for runtime, figures in opencode["runtimes"].items():
        if figures is None:
            lines += ["", f"OpenCode tool.execute.before -> verdict, the plugin under {runtime}: not measured, "
                          f"it is not installed (make runtimes)"]
            continue
        lines += ["", f"OpenCode tool.execute.before -> verdict, the plugin under {runtime}, {opencode['calls']} interleaved calls per side"]
        for name, ms in figures["ms"].items():
            limit = OPENCODE_MAX_P50_MS if "p50" in name else OPENCODE_MAX_P99_MS
            verdict = mark(ms <= limit, f"<= {limit:g} ms") if name.startswith("plugin -> core") else ""
            lines.append(f"  {name:<44} {ms:8.2f} ms{verdict}")
        for name, ratio in figures["ratios"].items():
            verdict = mark(ratio >= OPENCODE_MIN_SPEEDUP, f">= {OPENCODE_MIN_SPEEDUP:g}x") \
                if name == "process per call / plugin, p50" else ""
            lines.append(f"  {name:<44} {ratio:8.{2 if '/ asleep' in name else 1}f}x{verdict}")
    return lines


def report(results: dict[str, object], rounds: int) -> list[str]:
    completion = results["completion"]
    lines = stdin_lines(results["stdin_hook"], {"session-length cost (1M-line log / empty)": session_length_cost(completion)})
    lines += engine_lines(results["engine"], completion, results["pause"])
    lines += effect_lines(results["effect_check"])
    lines += opencode_lines(results["opencode_hook"])
    otel = results["otel"]
    rates = otel["rounds"]
    lines += ["", "OpenTelemetry export, decisions per second, median of interleaved rounds [min-max]"]
    lines += [f"  {name:<44} {rate_text(values)}" for name, values in rates.items()]
    # a rate's inverse is the decision's time: time with export over time without, round by round
    lines += [f"  {'decision time, dead endpoint / ' + side:<44} {ratio_text(paired(rates[side], rates['dead endpoint']))}"
              for side in ("no export", "live endpoint")]
    return lines + ["", machine_line(results["machine"])]


# the interpreter, asked of the benchmark venv's own: two builds of one Python version run the same
# code at different speeds (one that calls into a shared libpython pays for every call it makes
# there), so runs are compared only on the same one. Whether libpython is shared is what the dynamic
# linker mapped into the process (None where /proc says nothing), not sysconfig's Py_ENABLE_SHARED,
# which describes the build of the shared library: Debian's python3 is linked statically and its
# sysconfig says shared. Whether it was built with PGO or LTO is not asked, for the same reason.
_BUILD = """
import json, os, platform, sys
try:
    with open("/proc/self/maps") as maps:
        shared = "libpython" in maps.read()
except OSError:
    shared = None
print(json.dumps({"version": f"{platform.python_implementation()} {platform.python_version()}",
                  "executable": os.path.realpath(sys.executable), "shared": shared}))
"""


def machine(python: Path) -> dict[str, object]:
    """What the figures were measured on: the processor, how busy the machine was at the end of
    the run, and the interpreter."""
    try:
        models = [line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")]
    except OSError:  # not Linux
        models = []
    build = json.loads(subprocess.run([str(python), "-c", _BUILD], capture_output=True, text=True, check=True).stdout)
    return {"cpus": os.cpu_count(), "cpu": models[0] if models else None, "load_average": os.getloadavg(),
            "interpreter": build}


def machine_line(machine: dict[str, object]) -> str:
    build = machine["interpreter"]
    return (f"machine: {machine['cpus']} cpus ({machine['cpu'] or 'processor unknown'}), load average "
            f"{' '.join(f'{x:.2f}' for x in machine['load_average'])} (1, 5, 15 min) at the end of the run; "
            f"{build['version']} ({build['executable']}{_LINKED[build['shared']]})")


_LINKED = {True: ", libpython shared", False: ", libpython linked in", None: ""}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=40, help="interleaved rounds of the stdin hook commands")
    parser.add_argument("--effect-rounds", type=int,
                        help="rounds of the effect check's stdin pair (default: a quarter of --rounds, at least 5: "
                             "the same in a full run and in --only effect)")
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "latest.json")
    parser.add_argument("--only", choices=["stdin", "engine", "effect", "opencode"], help="run one section only")
    parser.add_argument("--opencode-calls", type=int, default=300, help="interleaved calls per side in the OpenCode section, and pairs per project in the effect section's OpenCode row")
    ns = parser.parse_args()
    python = bench_python()
    # hookgate keeps per-session state outside the projects (the root a session is pinned to, the
    # effect check's store); a session id of an earlier run would be pinned to that run's deleted
    # project, so each run keeps that state to itself
    state = tempfile.mkdtemp(prefix="hookgate-bench-state-")
    os.environ["XDG_STATE_HOME"] = state
    try:
        return run_sections(ns, python)
    finally:
        import shutil

        shutil.rmtree(state, ignore_errors=True)


def run_sections(ns: argparse.Namespace, python: Path) -> int:
    effect_rounds = ns.effect_rounds or max(5, ns.rounds // 4)
    otel = [str(python), str(ROOT / "benchmarks" / "otel_bench.py")]
    # the results' key -> (the section of --only it belongs to, what its progress line says, the measuring)
    measures: dict[str, tuple[str | None, str, Callable[[], object]]] = {
        "stdin_hook": ("stdin", f"stdin hook calls, {ns.rounds} interleaved rounds", lambda: stdin_hook(python, ns.rounds)),
        "engine": ("engine", "in-process decisions", lambda: inprocess(python, "engine")),
        "completion": (None, "a Stop decision with a 1,000,000-line session log", lambda: inprocess(python, "completion")),
        "pause": ("engine", "an allowed Write after a pause, 200 pairs", lambda: inprocess(python, "pause")),
        "opencode_hook": ("opencode", f"OpenCode tool.execute.before, {ns.opencode_calls} calls per side under each runtime",
                          lambda: opencode_hook(python, ns.opencode_calls)),
        "effect_check": ("effect", f"the effect check: {effect_rounds} rounds of the stdin pair, then the OpenCode pairs",
                         lambda: effect_check(python, effect_rounds, ns.opencode_calls)),
        "otel": (None, "OpenTelemetry export",
                 lambda: json.loads(subprocess.run(otel, capture_output=True, text=True, check=True).stdout)),
    }
    results: dict[str, Any] = {key: measured(what, measure) for key, (section, what, measure) in measures.items()
                               if ns.only in (None, section)}
    results["machine"] = machine(python)
    if ns.only:  # a partial run, printed only (latest.json is the full run's)
        lines = {"stdin": lambda: stdin_lines(results["stdin_hook"]),
                 "engine": lambda: engine_lines(results["engine"], None, results["pause"]),
                 "effect": lambda: effect_lines(results["effect_check"]),
                 "opencode": lambda: opencode_lines(results["opencode_hook"])}[ns.only]()
        print("\n".join(lines) + "\n" + machine_line(results["machine"]))
        return 0
    print("\n" + "\n".join(report(results, ns.rounds)))
    ns.json.parent.mkdir(parents=True, exist_ok=True)
    ns.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwritten: {ns.json.relative_to(ROOT) if ns.json.is_relative_to(ROOT) else ns.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
