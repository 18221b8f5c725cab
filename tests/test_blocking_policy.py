"""Blocking is a privilege (seed 001): only the places listed here may produce a refusal.

The scan looks for every blocking primitive on the decision path: a refusing verdict being built
(Block, Retry, Ask, or the registry's block()/retry()), and each runtime's refusal in its own
protocol (a deny, a `decision: block`, exit code 2, a thrown Error in the OpenCode plugin). The
files that hold one must be exactly the whitelist, each with its reason; a new place that blocks
fails this test until it is reviewed and listed. The engine then enforces at run time what the
scan cannot see: a gate not declared `may_block` has its refusal refused (tests/test_engine.py,
and the behavioural test below on the shipped policy).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from hookgate.config.load import load_config
from hookgate.engine.gate import Gate
from hookgate.engine.loop import Engine
from hookgate.model.events import Stop
from hookgate.model.verdicts import Block
from hookgate.pipeline import declared
from hookgate.engine_builder import build_engine
from hookgate.store.project import Project

ROOT = Path(__file__).resolve().parents[1]

# file -> why it may produce a refusal
ESSENTIAL_BLOCKERS = {
    "core/hookgate/model/verdicts.py": "defines the refusing verdicts; combine() keeps one gate's block a block",
    "core/hookgate/engine/loop.py": "a fail-closed gate's failure, and an unreadable payload when a gate of that event fails closed",
    "core/hookgate/hookcall.py": "last resort when no policy loads at all: the gating events fail closed",
    "core/hookgate/client.py": "`hookgate hook` exits 2 on a usage error (the last resort it runs is in stdin.py)",
    "adapters/claude/hookgate_claude/dialect.py": "renders the engine's refusal in Claude Code's protocol; decides nothing",
    "adapters/codex/hookgate_codex/dialect.py": "renders the engine's refusal in Codex's protocol (exit 2 + reason); decides nothing",
    "adapters/gemini/hookgate_gemini/dialect.py": "renders the engine's refusal in Gemini CLI's protocol (exit 2 + reason); decides nothing",
    "core/hookgate/installers/fail_closed.py": "Codex and Gemini CLI have no fail-closed switch: the wrapper makes a crashed hookgate exit 2 on gating events",
    "core/hookgate/installers/plugin_hooks.py": "the runtime plugins' commands: no hookgate on PATH (or, under Codex, a crashed one) exits 2 on gating events",
    "core/hookgate/pipeline/permissions.py": "check_file_permissions: the role and subagent write rules",
    "core/hookgate/pipeline/shell_writes.py": "check_shell_writes: a shell write meets the rules of a Write",
    "core/hookgate/pipeline/self_protect.py": "check_hookgate_commands: no agent runs hookgate install/uninstall while a role is active",
    "core/hookgate/pipeline/stages.py": "stage_reminder and check_stage_prerequisites",
    "core/hookgate/pipeline/assets.py": "check_asset_access: the lead delegates image reads",
    "core/hookgate/pipeline/subagent_stop.py": "check_worker_report: a pipeline subagent's report must pass",
    "core/hookgate/pipeline/completion.py": "check_completion: build/fixgap may not stop unverified",
    "core/hookgate/effect/check.py": "effect_restore: the after-event of a call whose protected files were put back tells the model why",
    "core/hookgate/rpc/server.py": "a rewrite of one file of an OpenCode patch, which the plugin cannot carry, is refused (as on Codex)",
    "core/hookgate/commandhooks/gate.py": "a project's command hook refusing on an event seed 002 lets block",
    "core/hookgate/python_hooks/__init__.py": "a policy file that does not load: its rules are unknown, so gating events are refused",
    "core/hookgate/python_hooks/chain.py": "a registered hook's block/retry on a gating event, or its failure there",
    "adapters/opencode-plugin/index.js": "carries the core's refusal out the way OpenCode allows (throw)",
    "adapters/opencode-plugin/lib/failmode.js": "the core down or too slow: a gate's closed fail mode refuses, as the core would",
}

BLOCKING_PRIMITIVES = re.compile(
    r"\b(Block|Retry|Ask)\(reason"            # building a refusing verdict
    r"|\b(block|retry)\(\s*[\"'f]"             # the registry's helpers, called with a reason
    r"|permissionDecision\W{1,6}(deny|ask)"    # Claude/Codex PreToolUse refusal
    r"|[\"']decision[\"']\W{1,6}block"         # top-level decision: block
    r"|behavior\W{1,6}deny"                    # PermissionRequest refusal
    r"|exit_code=2|\bexit 2\b|\breturn 2\b"    # exit code 2 refuses on every stdin runtime
    r"|throw new Error"                        # the OpenCode plugin refuses by throwing
    r"|kind:\s*[\"']block"                      # ... a refusing verdict built in the plugin
)
SCANNED = ("core/hookgate", "adapters")
# read answers or describe them, never produce one: the demo, the parity report, test support
NOT_ON_DECISION_PATH = ("core/hookgate/demo/", "core/hookgate/parity/", "adapters/opencode-plugin/test")


def files_with_blocking_primitives() -> set[str]:
    found = set()
    for folder in SCANNED:
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in (".py", ".js", ".mjs") or "node_modules" in path.parts or "test" in path.name:
                continue
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith("core/hookgate/cli/"):
                continue  # commands' own exit codes, not hook answers
            if relative.startswith(NOT_ON_DECISION_PATH):
                continue
            if BLOCKING_PRIMITIVES.search(_code_only(path)):
                found.add(relative)
    return found


def _code_only(path: Path) -> str:
    """The file without comments and docstrings, which may talk about blocking freely."""
    lines = path.read_text().splitlines()
    if path.suffix == ".py":
        for node in ast.walk(ast.parse("\n".join(lines))):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                    and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                for n in range(body[0].lineno - 1, body[0].end_lineno or body[0].lineno):
                    lines[n] = ""
        return "\n".join(line.split("#", 1)[0] for line in lines)
    return "\n".join(line.split("//", 1)[0] for line in lines)


def test_only_the_whitelisted_places_can_block():
    found = files_with_blocking_primitives()
    assert found - set(ESSENTIAL_BLOCKERS) == set(), "blocks outside the whitelist: review and list them"
    assert set(ESSENTIAL_BLOCKERS) - found == set(), "whitelisted but no longer blocking: drop them"


def test_every_whitelisted_gate_module_declares_a_blocker():
    for path in ESSENTIAL_BLOCKERS:
        if not path.startswith("core/hookgate/pipeline/"):
            continue
        module = path.removeprefix("core/").removesuffix(".py").replace("/", ".")
        gates = [g for g in declared.GATES if g.check.ref.partition(":")[0] == module]
        assert any(g.may_block for g in gates), f"{path} blocks but no may_block gate of pipeline/declared.py checks there"


def test_no_shipped_non_blocker_can_block(tmp_path):
    """Behavioural: every gate of the shipped policy that is not a declared blocker, made to return
    a block, is refused by the engine and the attempt is recorded."""
    from support import MemorySession
    from hookgate.engine.context import Context

    project = Project(tmp_path)
    config = load_config(project.config_path)
    non_blockers = [g for g in build_engine(config, project).gates if not g.may_block]
    assert non_blockers, "the shipped policy has observing gates"
    for gate in non_blockers:
        rogue = Gate(id=gate.id, events=gate.events, check=lambda e, c: Block(reason="rogue"), matcher="")
        ctx = Context(project=project, session=MemorySession(), config=config)
        decision = Engine([rogue]).evaluate(_event_for(gate), ctx)
        assert not decision.verdict.refuses, gate.id
        assert {"event": "gate_violation", "gate": gate.id, "kind": "block"} in ctx.records


def _event_for(gate: Gate):
    from hookgate.model.events import KNOWN_EVENTS

    cls = KNOWN_EVENTS[gate.events[0]]
    fields = {"tool_name": "Bash"} if "tool_name" in cls.__struct_fields__ else {}
    return cls(session_id="s", **fields) if cls is not Stop else Stop(session_id="s")
