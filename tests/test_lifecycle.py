"""The lifecycle matrix is the one source of every registration: what each runtime gets is
generated from it with zero drift, each entry's contract test exists, and each generated
registration really answers its event the way the matrix says."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from hookgate import lifecycle
from hookgate.hookcall import GATING_EVENTS
from hookgate_claude import install as claude_settings
from hookgate_codex import install as codex_registration
from hookgate_gemini import install as gemini_settings
from support import HOOKGATE, handler_argv

ROOT = Path(__file__).resolve().parents[1]
PAYLOADS = ROOT / "parity-tests" / "payloads"


def test_the_plugins_event_table_is_generated_from_the_matrix():
    table = ROOT / "adapters" / "opencode-plugin" / "src" / "lib" / "lifecycle.ts"
    assert table.read_text() == lifecycle.opencode_table(), \
        "regenerate it: python -m hookgate.lifecycle > adapters/opencode-plugin/src/lib/lifecycle.ts (then npm run build)"


def test_claude_settings_are_the_matrix():
    generated = claude_settings.registrations("hookgate")
    expected = lifecycle.for_runtime("claude")
    assert list(generated) == [r.claude for r in expected]
    for entry in expected:
        (group,) = generated[entry.claude]
        (handler,) = group["hooks"]
        assert group.get("matcher") == entry.matcher
        assert handler["timeout"] == entry.timeout_for("claude")
        assert (handler.get("onFailure") == "block") == entry.fail_closed
        assert handler_argv(handler) == ["hookgate", "hook", "claude", "--event", entry.event]  # exec form


def test_codex_hooks_are_the_matrix():
    generated = codex_registration.registrations("hookgate")
    expected = lifecycle.for_runtime("codex")
    assert list(generated) == [r.codex for r in expected]
    for entry in expected:
        (group,) = generated[entry.codex]
        (handler,) = group["hooks"]
        assert group.get("matcher") == entry.matcher
        assert handler["timeout"] == entry.timeout_for("codex")
        # Codex has no fail-closed switch: the fail-closed entries run under hookgate's exit-2 wrapper
        assert handler["command"].startswith("sh -c ") == entry.fail_closed


def test_the_last_resort_fails_closed_exactly_where_the_matrix_says():
    assert GATING_EVENTS == lifecycle.fail_closed_events()
    hook_cli = (ROOT / "core" / "hookgate" / "stdin.py").read_text()  # the last resort of `hookgate hook`
    literal = re.search(r"if event_hint in (\(.*?\)):", hook_cli)
    assert literal and set(ast.literal_eval(literal.group(1))) == lifecycle.fail_closed_events()


def test_every_entry_names_a_contract_test_that_exists():
    for entry in lifecycle.registrations():
        file, _, function = entry.contract_test.partition("::")
        tree = ast.parse((ROOT / file).read_text())
        assert function in {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}, entry.id


def test_every_opencode_entry_names_a_hook_the_plugin_implements():
    plugin = (ROOT / "adapters" / "opencode-plugin" / "index.js").read_text()
    for entry in lifecycle.for_runtime("opencode"):
        for source in re.split(r"\s*/\s*", entry.opencode or ""):
            name = source.split(" (")[0].removeprefix("event ")
            handled = f'"{name}"' in plugin or re.search(rf"^\s*{re.escape(name)}: async", plugin, re.M)
            assert handled, f"{entry.id}: the plugin does not handle {name}"


def _payload(event: str, cwd: Path, runtime: str = "") -> dict:
    """A real captured payload of this event (the runtime's own name for it), of this runtime's
    captures first, where one exists; else the event's bare fields."""
    for path in sorted(PAYLOADS.glob("*.hooks.jsonl"), key=lambda p: not p.name.startswith(f"{runtime}_")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            payload = record.get("payload")
            if isinstance(payload, dict) and payload.get("hook_event_name") == event:
                return {**payload, "cwd": str(cwd), "session_id": "contract"}
    return {"hook_event_name": event, "session_id": "contract", "cwd": str(cwd)}


def _closed_gate_events() -> set[str]:
    from hookgate.config.load import preset_config
    from hookgate.engine_builder import build_engine

    engine = build_engine(preset_config())
    return {event for gate in engine.gates if gate.fail_mode == "closed" for event in gate.events}


CLOSED_GATE_EVENTS = _closed_gate_events()
WRITERS = {"claude": claude_settings, "codex": codex_registration, "gemini": gemini_settings}
CASES = [(entry, runtime) for runtime in WRITERS for entry in lifecycle.for_runtime(runtime)]


@pytest.mark.parametrize("entry, runtime", CASES, ids=[f"{e.id}-{rt}" for e, rt in CASES])
def test_each_registration_answers_its_event(tmp_path, entry, runtime):
    """The contract: the exact command install writes for this event, run the way the runtime runs
    it (Claude Code's exec form as it is, the others' command lines through a shell), answers a
    real payload of the event, and a payload it cannot read gets the matrix's fail mode."""
    (tmp_path / ".hookgate").mkdir()
    group = WRITERS[runtime].registrations(HOOKGATE)[entry.on(runtime)][0]
    argv = handler_argv(group["hooks"][0])
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "HOOKGATE_WARM_IDLE": "10"}  # its warm core leaves soon

    def run(stdin: bytes) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(argv, input=stdin, cwd=tmp_path, env=env, capture_output=True, timeout=60)

    answered = run(json.dumps(_payload(str(entry.on(runtime)), tmp_path, runtime)).encode())
    assert answered.returncode == 0, answered.stderr.decode()
    assert answered.stdout == b"" or isinstance(json.loads(answered.stdout), dict)
    assert b"Traceback" not in answered.stderr

    # a payload it cannot read: the fail modes of the gates on that event decide (the matrix's
    # fail_closed is about hookgate itself not running, which the runtime handles: onFailure, wrapper)
    unreadable = run(b'{"hook_event_name": ')
    assert unreadable.returncode == (2 if entry.event in CLOSED_GATE_EVENTS else 0)
    assert unreadable.stderr.strip() and b"Traceback" not in unreadable.stderr
