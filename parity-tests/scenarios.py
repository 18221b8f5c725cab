"""The parity scenarios: one table of short agent sessions, played by both tiers.

A session is a project set up in a known state (the active role, the completed stages, some files)
and the moves of a conversation in order: the runtime starts, the user prompts, the lead calls
tools, dispatches subagents that call tools and hand in reports, tries to stop; the context is
compacted; the user interrupts. Moves are canonical (Claude Code's tool names and inputs, paths
relative to the project); each runtime's driver (drivers/) turns them into that runtime's hook
payloads (payload tier) or into the fake model's script for the pinned binary (real tier).

Each move says what must come of it: the canonical verdict, what the model is shown, the metrics
records it produces, the files it leaves, which of the user's own hooks ran (or must not have),
and the parity-matrix rows it proves. `on` holds what one runtime (or one version of it: its
table key, "claude-2.1.290") does instead, only where the matrix says that runtime degrades or
cannot enforce one of the move's rows (the payload tier checks that the matrix says so).

Every session runs in a project that also has the user's own rules (USER_FILES): a command hook on
every hooks.json event and a Python hook on every register_hook name, each noting in EVIDENCE that
it ran; a few of them refuse or rewrite what the scenarios then attempt.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Mapping

from harness.reports import INCOMPLETE_WORKER_REPORT, REVIEWER_REPORT, VERIFIER_REPORT, WORKER_REPORT

Kind = Literal["allow", "block", "context", "modify"]
LEAD = "lead"

# -- the user's own rules, in every session's project -------------------------------------------

# one line per user hook run: {"hook": "command:<Event>" | "python:<name>", "payload": what it was given}
EVIDENCE = ".hookgate/evidence.jsonl"
HOLD_COMPACTION = ".hookgate/hold-compaction"  # the pre_compact policy refuses while this exists

# a hooks.json command hook (sh: it runs on every event of every session)
COMMAND_HOOK = """\
payload=$(cat)
log="$HOOKGATE_PROJECT_DIR/.hookgate/evidence.jsonl"
{ flock 9; printf '{"hook": "command:%s", "payload": %s}\\n' "$1" "$payload" >&9; } 9>>"$log"
case "$1:$payload" in
  PreToolUse:*'touch forbidden.txt'*) echo "command hooks forbid touching forbidden.txt" >&2; exit 2 ;;
  UserPromptSubmit:*FORBIDDEN-PROMPT*) echo "command hooks refuse this prompt" >&2; exit 2 ;;
esac
"""

POLICY = """\
import fcntl, json
from pathlib import Path

import msgspec

from hookgate import EVENT_MAP, block, modify, register_hook

ROOT = Path(__file__).resolve().parents[2]


def evidence(name):
    def note(event):
        with open(ROOT / ".hookgate" / "evidence.jsonl", "a") as log:
            fcntl.flock(log, fcntl.LOCK_EX)
            log.write(json.dumps({"hook": f"python:{name}", "payload": msgspec.to_builtins(event)}) + "\\n")
    return note


# every name register_hook accepts, those no runtime emits included: accepted, and never run
for name in EVENT_MAP:
    register_hook(f"evidence-{name}", name, None, {"priority": 10}, evidence(name))


def rewrite(event, old, new, **changes):
    renamed = {k: v.replace(old, new) for k, v in event.tool_input.items() if k in ("command", "file_path")}
    return modify({**event.tool_input, **renamed, **changes})


register_hook("keep-important", "pre_tool_use", {"tool": "Bash", "command_pattern": r"rm -rf important"},
              {"priority": 20}, lambda event: block("the policy keeps important/"))
register_hook("release-draft", "pre_tool_use", {"tool": "Bash", "command_pattern": r"wip > draft\\.txt"},
              {"priority": 20}, lambda event: rewrite(event, "wip > draft.txt", "ready > release.txt"))
register_hook("release-draft-doc", "pre_tool_use", {"tool": "Write", "path_pattern": "draft.md"},
              {"priority": 20}, lambda event: rewrite(event, "draft.md", "release.md", content="ready\\n"))
register_hook("no-perm-deny", "permission_request", {"tool": "Bash", "command_pattern": "perm-deny"},
              {"priority": 20}, lambda event: block("the policy refuses perm-deny"))
register_hook("approve-draft", "permission_request", {"tool": "Bash", "command_pattern": "perm-draft"},
              {"priority": 20}, lambda event: rewrite(event, "perm-draft", "perm-approved"))
register_hook("no-forbidden-prompt", "pre_prompt", None, {"priority": 20},
              lambda event: block("the policy refuses this prompt") if "FORBIDDEN-PROMPT" in event.prompt else None)
register_hook("hold-compaction", "pre_compact", None, {"priority": 20},
              lambda event: block("the policy holds compaction")
              if (ROOT / ".hookgate" / "hold-compaction").exists() else None)
"""

# seed 002's hooks.json events, GoalUpdate included (accepted; no runtime emits it)
COMMAND_HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStart",
                       "SubagentStop", "PreCompact", "PostCompact", "GoalUpdate")
HOOKS_JSON = {"hooks": {
    event: [{"matcher": "*", "hooks": [{"type": "command", "command": f"sh .hookgate/evidence.sh {event}",
                                        "timeout": 30}]}]
    for event in COMMAND_HOOK_EVENTS
}}

USER_FILES: dict[str, str] = {
    ".hookgate/evidence.sh": COMMAND_HOOK,
    ".hookgate/hooks.json": json.dumps(HOOKS_JSON, indent=2),
    ".hookgate/policies/parity.py": POLICY,
}

# the registered names and hooks.json events no runtime emits: their hooks are accepted and never run
NEVER_RUN = {"command:GoalUpdate": "command_hooks.goal_update", **{
    f"python:{name}": f"python_hooks.{name}" for name in (
        "generate_start", "generate_end", "skill_load", "skill_unload", "on_success", "pre_context_perception",
        "post_context_perception", "pre_memory_recall", "post_memory_recall", "pre_planning", "post_planning",
        "pre_reasoning", "post_reasoning", "on_rate_limit", "on_confirmation", "intent_detection", "pre_run_control")
}}

# -- moves ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """A metrics record: its event and the fields that must match (the rest may be anything)."""

    event: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    def matches(self, record: Mapping[str, Any]) -> bool:
        return record.get("event") == self.event and all(record.get(k) == v for k, v in self.fields.items())

    def __str__(self) -> str:
        return f"{self.event} {dict(self.fields)}"


def rec(event: str, **fields: Any) -> Record:
    return Record(event, fields)


@dataclass(frozen=True)
class Expect:
    verdict: Kind = "allow"
    sees: str = ""  # what the model is shown: a refusal's reason or a context, as a substring
    records: tuple[Record, ...] = ()  # the metrics records the move produces, in order
    files: Mapping[str, str | None] = field(default_factory=dict)  # after the move: path -> content, None = absent
    ran: tuple[str, ...] = ()  # user hooks that ran for this move ("command:PreToolUse", "python:pre_tool_use")
    not_ran: tuple[str, ...] = ()  # user hooks that must not have run
    about: str = ""  # what those hooks saw the move as, when not its key (a rewritten command)
    proves: tuple[str, ...] = ()  # matrix rows


@dataclass(frozen=True, kw_only=True)
class Move:
    expect: Expect = Expect()
    by: str = LEAD  # the lead, or the name of a dispatched subagent
    on: Mapping[str, Expect] = field(default_factory=dict)  # runtime -> what it does instead

    def expected(self, runtime: str) -> Expect:
        """`runtime` is a name ("codex") or a table key ("codex-0.160.0"): what one version does
        instead comes before what every version of its runtime does."""
        for key in (runtime, runtime.partition("-")[0]):
            if key in self.on:
                return self.on[key]
        return self.expect

    @property
    def key(self) -> str:
        """What the user hooks see this move as: a substring of the `subject` of their evidence
        (drivers.base.subject); "" for a move they see nothing particular of."""
        return ""


# OpenCode, and Gemini CLI headless, hand a start's context to the model with the session's first
# prompt, not at the start (a refused first prompt takes it along)
_LATE_START = Expect(records=(rec("session_start", source="startup"),), proves=("session_start",))
_START_CONTEXT_WITH_PROMPT = Expect(verdict="context", sees="[hookgate v", proves=("session_start",))


@dataclass(frozen=True, kw_only=True)
class Start(Move):
    """The runtime starts the session (SessionStart)."""

    expect: Expect = Expect(verdict="context", sees="[hookgate v")
    on: Mapping[str, Expect] = field(default_factory=lambda: dict.fromkeys(("opencode", "gemini"), _LATE_START))


@dataclass(frozen=True, kw_only=True)
class Prompt(Move):
    text: str

    @property
    def key(self) -> str:
        return self.text


@dataclass(frozen=True, kw_only=True)
class Tool(Move):
    tool: str  # Write | Bash | Read
    input: Mapping[str, Any]
    asks: bool = False  # the runtime asks for permission before it runs (PermissionRequest)

    @property
    def key(self) -> str:
        return str(self.input.get("command") or self.input.get("file_path"))


@dataclass(frozen=True, kw_only=True)
class Dispatch(Move):
    """The lead dispatches a subagent, named `agent` in later moves."""

    agent: str
    role: str  # the pipeline role (Claude: the custom agent type; Codex, OpenCode: the description's prefix)
    description: str
    prompt: str


@dataclass(frozen=True, kw_only=True)
class Report(Move):
    """A subagent tries to stop, handing in `text` (SubagentStop)."""

    text: str

    @property
    def key(self) -> str:
        return self.text.splitlines()[0]


@dataclass(frozen=True, kw_only=True)
class Stop(Move):
    """The lead tries to end its turn (Stop); repeat the move for each attempt a gate holds."""

    message: str


@dataclass(frozen=True, kw_only=True)
class Compact(Move):
    """The context is compacted, by each runtime's own trigger; `held` while the policy holds it."""

    held: bool = False


@dataclass(frozen=True, kw_only=True)
class Interrupt(Move):
    """The lead runs `command` and the user interrupts it while it runs."""

    command: str


@dataclass(frozen=True, kw_only=True)
class End(Move):
    """The session ends (SessionEnd)."""


def opening(text: str, start: Start | None = None, ran: tuple[str, ...] = ()) -> tuple[Start, Prompt]:
    """A session's start and first prompt, which on OpenCode carries the start's context."""
    with_context = replace(_START_CONTEXT_WITH_PROMPT, ran=ran)
    return start or Start(), Prompt(text=text, expect=Expect(ran=ran), on=dict.fromkeys(("opencode", "gemini"), with_context))


@dataclass(frozen=True)
class Session:
    name: str
    moves: tuple[Move, ...]
    role: str | None = None
    stages: tuple[str, ...] = ()  # roles completed before it starts (`hookgate stage complete`)
    files: Mapping[str, str] = field(default_factory=dict)
    asks: bool = False  # the runtime asks before a tool that needs permission (no bypass mode)

    @property
    def agents(self) -> dict[str, Dispatch]:
        return {m.agent: m for m in self.moves if isinstance(m, Dispatch)}


# -- the sessions --------------------------------------------------------------------------------

PNG = "\x89PNG\r\n"
PLAN = "| Task | Status |\n|---|---|\n| M1 | verified |\n| M2 | pending |\n"
BUILD_DONE = '{"role": "build", "ts": "2026-01-01T00:00:00Z"}\n'
# what the build role needs before it may dispatch (with the gdd stage completed)
READY = {"project.godot": "", "GDD.md": "# Game\n", "PLAN.md": PLAN, "STRUCTURE.md": "# Structure\n"}

_STARTED = Start(expect=Expect(
    verdict="context", sees="[hookgate v", records=(rec("session_start", source="startup"),),
    ran=("command:SessionStart", "python:session_start"),
    proves=("session_start", "command_hooks.session_start", "python_hooks.session_start")),
    on=dict.fromkeys(("opencode", "gemini"), Expect(
        records=(rec("session_start", source="startup"),), ran=("command:SessionStart", "python:session_start"),
        proves=("session_start", "command_hooks.session_start", "python_hooks.session_start"))))

LEAD_SESSION = Session(
    name="lead", role="build",
    files={**READY, "e2e/test_play.gd": "original\n", "assets/hero.png": PNG, "important/keep.txt": "keep\n",
           "scenes/main.tscn": "[gd_scene]\n"},
    moves=(
        *opening("build the game", _STARTED, ran=("command:UserPromptSubmit", "python:pre_prompt")),
        Dispatch(agent="early-worker", role="worker", description="worker: M1", prompt="implement M1", expect=Expect(
            verdict="block", sees="Role 'gdd' has not completed yet",
            records=(rec("hook_block", gate="check_stage_prerequisites"),), proves=("check_stage_prerequisites",))),
        Tool(tool="Write", input={"file_path": "src/player.gd", "content": "extends Node\n"}, expect=Expect(
            verdict="block", sees="Build role cannot write game code directly (player.gd). Dispatch a Worker subagent.",
            records=(rec("file_write", file="player.gd", is_subagent=False),
                     rec("hook_block", gate="check_file_permissions")),
            files={"src/player.gd": None}, proves=("check_file_permissions",))),
        Tool(tool="Bash", input={"command": "echo 'extends Node' > src/enemy.gd"}, expect=Expect(
            verdict="block", sees="Build role cannot write game code directly (enemy.gd)",
            records=(rec("file_write", file="enemy.gd", via="Bash"), rec("hook_block", gate="check_shell_writes")),
            files={"src/enemy.gd": None}, proves=("check_shell_writes",))),
        Tool(tool="Bash", input={"command": "hookgate uninstall claude --project ."}, expect=Expect(
            verdict="block", sees="`hookgate uninstall claude --project .` changes hookgate's own registration",
            records=(rec("hook_block", gate="check_hookgate_commands"),), proves=("check_hookgate_commands",))),
        # a target the syntax gate cannot read: the command runs, and its effect is put back
        Tool(tool="Bash", input={"command": "python3 -c \"import pathlib; pathlib.Path('scenes', 'main.' + 'tscn').write_text('[hacked]')\""}, expect=Expect(
            records=(rec("write_reverted", path="scenes/main.tscn", change="changed"),
                     rec("hook_block", gate="effect_restore")),
            files={"scenes/main.tscn": "[gd_scene]\n"}, proves=("effect_restore",)),
            on={"opencode": Expect(  # the after-hook's refusal is a note appended to the tool output
                verdict="context", sees="hookgate put back files this call may not change",
                records=(rec("write_reverted", path="scenes/main.tscn", change="changed"),
                         rec("hook_block", gate="effect_restore")),
                files={"scenes/main.tscn": "[gd_scene]\n"}, proves=("effect_restore",))}),
        Tool(tool="Read", input={"file_path": "assets/hero.png"}, expect=Expect(
            verdict="block", sees="Dispatch an analyst subagent to analyze 'hero.png' instead.",
            records=(rec("hook_block", gate="check_asset_access"),), proves=("check_asset_access",))),
        Tool(tool="Bash", input={"command": "touch forbidden.txt"}, expect=Expect(
            verdict="block", sees="command hooks forbid touching forbidden.txt",
            records=(rec("hook_block", gate="command_hooks.pre_tool_use"),), files={"forbidden.txt": None},
            ran=("command:PreToolUse",), proves=("command_hooks.pre_tool_use",))),
        Tool(tool="Bash", input={"command": "rm -rf important"}, expect=Expect(
            verdict="block", sees="the policy keeps important/",
            records=(rec("hook_denied", hook="keep-important", retryable=False),
                     rec("hook_block", gate="python_hooks.pre_tool_use")),
            files={"important/keep.txt": "keep\n"}, ran=("python:pre_tool_use",),
            proves=("python_hooks.pre_tool_use",))),
        # the rewritten command is what runs, and what every later gate and hook sees
        Tool(tool="Bash", input={"command": "echo wip > draft.txt"}, expect=Expect(
            verdict="modify", records=(rec("file_write", file="release.txt", via="Bash"),),
            files={"draft.txt": None, "release.txt": "ready\n"},
            ran=("command:PostToolUse", "python:post_tool_use"), about="ready > release.txt",
            proves=("python_hooks.pre_tool_use.modified", "command_hooks.post_tool_use",
                    "python_hooks.post_tool_use"))),
        Tool(tool="Write", input={"file_path": "draft.md", "content": "wip\n"}, expect=Expect(
            verdict="modify", records=(rec("file_write", file="release.md"),),
            files={"draft.md": None, "release.md": "ready\n"}, proves=("python_hooks.pre_tool_use.modified",)),
            on={"codex": Expect(  # a rewrite of one file of a patch cannot be handed back to Codex
                verdict="block", sees="Codex cannot carry a rewrite of one file of a patch",
                files={"draft.md": None, "release.md": None}, proves=("python_hooks.pre_tool_use.modified",))}),
        Tool(tool="Bash", input={"command": "ls missing-dir"}, expect=Expect(
            ran=("python:on_error", "python:post_tool_use"), proves=("python_hooks.on_error",)),
            on=dict.fromkeys(("codex", "opencode", "gemini"), Expect(  # a failed command is a PostToolUse there
                ran=("python:post_tool_use",), not_ran=("python:on_error",), proves=("python_hooks.on_error",)))),
        Tool(tool="Write", input={"file_path": ".hookgate/stage.jsonl", "content": BUILD_DONE}, expect=Expect(
            verdict="block", sees="PLAN.md has tasks not yet verified: 1 pending",
            records=(rec("gate_check", gate="role_build", result="fail"), rec("hook_block", gate="stage_reminder")),
            proves=("stage_reminder",))),
        Tool(tool="Bash", input={"command": "sed -i 's/| pending |/| verified |/' PLAN.md"}, expect=Expect(
            records=(rec("file_write", file="PLAN.md", via="Bash"),))),
        Tool(tool="Write", input={"file_path": ".hookgate/stage.jsonl", "content": BUILD_DONE}, expect=Expect(
            verdict="context", sees="[Role 'build' complete] Next: /gm-verify",
            records=(rec("gate_check", gate="role_build", result="complete"), rec("stage_complete", role="build")),
            files={".hookgate/stage.jsonl": BUILD_DONE}, proves=("stage_reminder",)),
            on={"gemini": Expect(  # a BeforeTool context reaches the user (systemMessage), not the model
                verdict="context", records=(rec("gate_check", gate="role_build", result="complete"),
                                            rec("stage_complete", role="build")),
                files={".hookgate/stage.jsonl": BUILD_DONE}, proves=("stage_reminder",))}),
        Stop(message="Build recorded.", expect=Expect(
            ran=("command:Stop", "python:post_response"), proves=("command_hooks.stop", "python_hooks.post_response"))),
        End(expect=Expect(ran=("python:session_end",), proves=("python_hooks.session_end",))),
    ),
)

# Gemini CLI has no hook at a subagent's start or end: its report (complete_task) is taken as it is
_UNSEEN_DISPATCH = Expect(not_ran=("command:SubagentStart", "python:subagent_start"), proves=("log_subagent",))
_UNSEEN_REPORT = Expect(not_ran=("command:SubagentStop", "python:subagent_stop"),
                        proves=("check_worker_report", "log_subagent_stop", "command_hooks.subagent_stop"))

ROUND_SESSION = Session(
    name="round", role="build", stages=("gdd",), files=READY,
    moves=(
        *opening("run the M1 round"),
        Dispatch(agent="worker", role="worker", description="worker: M1", prompt="implement M1", expect=Expect(
            records=(rec("subagent_start", role="worker", description="worker: M1"),),
            ran=("command:SubagentStart",),
            proves=("log_subagent", "note_dispatch", "command_hooks.subagent_start")),
            on={"gemini": Expect(  # no hook sees a subagent start
                not_ran=("command:SubagentStart", "python:subagent_start"),
                proves=("log_subagent", "note_dispatch", "command_hooks.subagent_start"))}),
        Tool(by="worker", tool="Write", input={"file_path": "MEMORY.md", "content": "remember\n"}, expect=Expect(
            verdict="block", sees="Subagents cannot write project memory (MEMORY.md)",
            records=(rec("file_write", file="MEMORY.md", is_subagent=True),
                     rec("hook_block", gate="check_file_permissions")),
            files={"MEMORY.md": None}, proves=("check_file_permissions",)),
            on={"gemini": Expect(  # a subagent's call arrives as the lead's, which may write it
                records=(rec("file_write", file="MEMORY.md", is_subagent=False),), proves=("check_file_permissions",))}),
        Tool(by="worker", tool="Bash", input={"command": "echo remember >> MEMORY.md"}, expect=Expect(
            verdict="block", sees="Subagents cannot write project memory (MEMORY.md)",
            records=(rec("file_write", file="MEMORY.md", via="Bash", is_subagent=True),
                     rec("hook_block", gate="check_shell_writes")),
            proves=("check_shell_writes",)),
            on={"gemini": Expect(
                records=(rec("file_write", file="MEMORY.md", via="Bash", is_subagent=False),),
                files={"MEMORY.md": "remember\nremember\n"}, proves=("check_shell_writes",))}),
        Report(by="worker", text=INCOMPLETE_WORKER_REPORT, expect=Expect(
            verdict="block", sees="Worker report missing required sections: Tests, Build",
            records=(rec("hook_block", gate="check_worker_report"),
                     rec("subagent_stop", role="worker", outcome_kind="rejected_attempt")),
            ran=("command:SubagentStop",),
            proves=("check_worker_report", "log_subagent_stop", "command_hooks.subagent_stop")),
            on={"gemini": _UNSEEN_REPORT}),
        Report(by="worker", text=WORKER_REPORT, expect=Expect(
            records=(rec("subagent_stop", role="worker", outcome_kind="terminal"), rec("worker_done", role="worker")),
            proves=("check_worker_report", "log_subagent_stop")),
            on={"gemini": _UNSEEN_REPORT}),
        Dispatch(agent="verifier", role="verifier", description="verify: M1", prompt="verify M1", expect=Expect(
            records=(rec("subagent_start", role="verifier", description="verify: M1"),)),
            on={"gemini": _UNSEEN_DISPATCH}),
        Report(by="verifier", text=VERIFIER_REPORT, expect=Expect(
            records=(rec("subagent_stop", role="verifier", outcome_kind="terminal"), rec("verifier_pass"))),
            on={"gemini": _UNSEEN_REPORT}),
        Dispatch(agent="reviewer", role="reviewer", description="review: M1", prompt="review M1", expect=Expect(
            records=(rec("subagent_start", role="reviewer", description="review: M1"),)),
            on={"gemini": _UNSEEN_DISPATCH}),
        Report(by="reviewer", text=REVIEWER_REPORT, expect=Expect(
            records=(rec("subagent_stop", role="reviewer", outcome_kind="terminal"),)),
            on={"gemini": _UNSEEN_REPORT}),
        Stop(message="Round complete."),  # worker, verifier and reviewer all ran: the lead may stop
        End(),
    ),
)

# without a subagent's start and end, the stop gate has no round to hold the lead to (Gemini CLI)
_UNHELD = Expect(not_ran=("python:subagent_stop",), proves=("check_completion",))
_HELD = Stop(message="All finished.", expect=Expect(
    verdict="block", sees="Cannot finish build yet", records=(rec("hook_block", gate="check_completion"),),
    proves=("check_completion",)), on={"gemini": _UNHELD})

HOLD_SESSION = Session(
    name="hold", role="build", stages=("gdd",), files=READY,
    moves=(
        *opening("build M1"),
        Dispatch(agent="worker", role="worker", description="worker: M1", prompt="implement M1", expect=Expect(
            records=(rec("subagent_start", role="worker"),)), on={"gemini": _UNSEEN_DISPATCH}),
        Report(by="worker", text=WORKER_REPORT, expect=Expect(records=(rec("worker_done", role="worker"),)),
               on={"gemini": _UNSEEN_REPORT}),
        # no verifier, no reviewer: each stop is held, until the bound lets one through unverified
        *[_HELD] * 5,
        Stop(message="All finished.", expect=Expect(
            records=(rec("hook_force_allow", gate="check_completion", outcome_kind="unverified", count=5),),
            proves=("check_completion",)), on={"gemini": _UNHELD}),
        End(),
    ),
)

PROMPT_SESSION = Session(
    name="prompt",
    moves=(
        Start(),
        Prompt(text="FORBIDDEN-PROMPT: print the deploy keys", expect=Expect(
            verdict="block", sees="command hooks refuse this prompt",
            records=(rec("hook_denied", hook="no-forbidden-prompt"), rec("hook_block", gate="python_hooks.pre_prompt"),
                     rec("hook_block", gate="command_hooks.user_prompt_submit")),
            ran=("command:UserPromptSubmit", "python:pre_prompt"),
            proves=("command_hooks.user_prompt_submit", "python_hooks.pre_prompt"))),
        End(),
    ),
)

COMPACT_SESSION = Session(
    name="compact",
    moves=(
        *opening("tidy up"),
        Tool(tool="Bash", input={"command": "echo tidy"}),
        Compact(held=True, expect=Expect(
            verdict="block", records=(rec("hook_block", gate="python_hooks.pre_compact"),),
            ran=("command:PreCompact", "python:pre_compact"), not_ran=("command:PostCompact", "python:post_compact"),
            proves=("python_hooks.pre_compact", "command_hooks.pre_compact")),
            on={"gemini": Expect(  # PreCompress is advisory: the refusal is recorded and the compression goes on
                records=(rec("hook_block", gate="python_hooks.pre_compact"),),
                ran=("command:PreCompact", "python:pre_compact"), not_ran=("command:PostCompact", "python:post_compact"),
                proves=("python_hooks.pre_compact", "command_hooks.pre_compact"))}),
        Compact(expect=Expect(
            ran=("command:PreCompact", "python:pre_compact", "command:PostCompact", "python:post_compact"),
            proves=("command_hooks.post_compact", "python_hooks.post_compact")),
            on={"gemini": Expect(  # no hook after a compression
                ran=("command:PreCompact", "python:pre_compact"), not_ran=("command:PostCompact", "python:post_compact"),
                proves=("command_hooks.post_compact", "python_hooks.post_compact"))}),
    ),
)

# Gemini CLI headless, without auto-approval, offers no tool that needs approval: no hook is asked
_NO_APPROVAL_HOOK = Expect(sees='Tool "run_shell_command" not found',
                           files={"perm-draft.txt": None, "perm-approved.txt": None, "perm-deny.txt": None},
                           not_ran=("python:permission_request", "python:pre_tool_use"),
                           proves=("python_hooks.permission_request", "python_hooks.permission_request.modified"))

PERMISSION_SESSION = Session(
    name="permission", asks=True,
    moves=(
        *opening("write the permission files"),
        Tool(tool="Bash", input={"command": "echo x > perm-draft.txt"}, asks=True, expect=Expect(
            verdict="modify", files={"perm-draft.txt": None, "perm-approved.txt": "x\n"},
            ran=("python:permission_request",), proves=("python_hooks.permission_request.modified",)),
            on={"codex": Expect(  # no rewrite on a Codex PermissionRequest: its own approval decides, and declines
                files={"perm-draft.txt": None, "perm-approved.txt": None}, ran=("python:permission_request",),
                proves=("python_hooks.permission_request.modified",)),
                "opencode": Expect(  # nor on OpenCode's: the user approves the call as the model made it
                files={"perm-draft.txt": "x\n", "perm-approved.txt": None}, ran=("python:permission_request",),
                proves=("python_hooks.permission_request.modified",)),
                "gemini": _NO_APPROVAL_HOOK}),
        Tool(tool="Bash", input={"command": "echo x > perm-deny.txt"}, asks=True, expect=Expect(
            verdict="block", sees="the policy refuses perm-deny",
            records=(rec("hook_denied", hook="no-perm-deny"),
                     rec("hook_block", gate="python_hooks.permission_request")),
            files={"perm-deny.txt": None}, ran=("python:permission_request",),
            proves=("python_hooks.permission_request",)),
            on={"opencode": Expect(  # rejected, and OpenCode ends the turn without telling the model why
                verdict="block", records=(rec("hook_denied", hook="no-perm-deny"),
                                          rec("hook_block", gate="python_hooks.permission_request")),
                files={"perm-deny.txt": None}, ran=("python:permission_request",),
                proves=("python_hooks.permission_request",)),
                "gemini": _NO_APPROVAL_HOOK}),
        Stop(message="done"),
        End(),
    ),
)

INTERRUPT_SESSION = Session(
    name="interrupt",
    moves=(
        *opening("wait for the build"),
        Interrupt(command="python3 -c 'import time; time.sleep(60)'", expect=Expect(
            ran=("python:post_run_control",), proves=("python_hooks.post_run_control",)),
            on=dict.fromkeys(("claude", "opencode", "gemini"), Expect(  # no hook sees an interrupt there
                not_ran=("python:post_run_control",), proves=("python_hooks.post_run_control",)))),
        End(),
    ),
)

SESSIONS: dict[str, Session] = {s.name: s for s in (
    LEAD_SESSION, ROUND_SESSION, HOLD_SESSION, PROMPT_SESSION, COMPACT_SESSION, PERMISSION_SESSION, INTERRUPT_SESSION,
)}


def proving(row: str, runtime: str) -> list[tuple[Session, int, Move]]:
    """Every move that proves `row` on `runtime` (its index in its session, too)."""
    return [(s, i, m) for s in SESSIONS.values() for i, m in enumerate(s.moves) if row in m.expected(runtime).proves]


def proved_rows(runtime: str) -> set[str]:
    shown = {row for s in SESSIONS.values() for m in s.moves for row in m.expected(runtime).proves}
    return shown | set(NEVER_RUN.values())
