"""`hookgate doctor`'s checks of hooks.json: everything load() skips (unknown events, bad matchers,
missing commands, bad timeouts), plus what runs but will not do what its author meant.

    from hookgate.commandhooks.lint import lint
    for problem in lint(project.hooks_path):   # global file included
        print(problem.severity, problem)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from ..engine.matcher import compile_matcher
from ..model.events import KNOWN_EVENTS
from ..model.tool_inputs import TOOL_INPUTS
from . import TIMEOUT_SLACK
from .spec import DEFAULT_TIMEOUT, Handler, Problem, hook_files, load

# tools a runtime may name besides those with an input schema; `mcp__<server>__<tool>` are MCP tools
OTHER_TOOLS = ("TodoWrite", "BashOutput", "KillShell", "ExitPlanMode", "AskUserQuestion", "SlashCommand",
               "ListMcpResourcesTool", "ReadMcpResourceTool", "LS", "Task")
KNOWN_TOOLS = frozenset(TOOL_INPUTS) | frozenset(OTHER_TOOLS)
# the values a matcher is tested against, where the set is fixed
MATCH_VALUES: dict[str, tuple[str, ...]] = {
    "SessionStart": ("startup", "resume", "clear", "compact"),
    "PreCompact": ("manual", "auto"),
    "PostCompact": ("manual", "auto"),
}
_TOOL_EVENTS = ("PreToolUse", "PostToolUse")
_EXACT_LIST = re.compile(r"[A-Za-z0-9_|]+")
_SHORT = 1.0  # seconds: starting a shell alone can take a good part of that


def lint(project_hooks: Path, budgets: Mapping[str, float] | None = None) -> list[Problem]:
    """Every problem of the global and the project hooks.json. `budgets`: event -> the seconds the
    runtime gives hookgate's hook call (default: the shortest any runtime's registration gives)."""
    files = load(hook_files(project_hooks))
    problems = list(files.problems)
    limits = hook_budgets() if budgets is None else budgets
    for handler in files.handlers:
        problems += _semantic(handler, limits)
    return problems


def hook_budgets() -> dict[str, float]:
    """event -> the seconds hookgate's hook call gets for it: the shortest any runtime's
    registration gives (from the lifecycle matrix, which every plug's installer reads too), since
    the same hooks.json runs under every runtime."""
    from ..lifecycle import registrations
    from ..runtimes import NAMES

    budgets: dict[str, float] = {}
    for registration in registrations():
        for runtime in NAMES:
            if registration.on(runtime):
                seconds = float(registration.timeout_for(runtime))
                budgets[registration.event] = min(budgets.get(registration.event, seconds), seconds)
    return budgets


def _semantic(handler: Handler, budgets: Mapping[str, float]) -> list[Problem]:
    found: list[str] = []
    event, matcher = handler.event, handler.matcher
    cls = KNOWN_EVENTS.get(event)
    if cls is None:
        found.append(f"no supported runtime emits {event}, so this hook never fires")
    elif matcher not in ("", "*") and cls.match_field is None:
        found.append(f"the matcher {matcher!r} is ignored: {event} has no value to match, every {event} runs it")
    elif _EXACT_LIST.fullmatch(matcher or "*"):
        names = [n for n in matcher.split("|") if n]
        if event in _TOOL_EVENTS:
            found += [_unknown_tool(n) for n in names if n not in KNOWN_TOOLS and not n.startswith("mcp__")]
        elif event in MATCH_VALUES:
            values = MATCH_VALUES[event]
            found += [f"{event} is never {n!r} (its values: {', '.join(values)}), so that part of the matcher never "
                      "matches" for n in names if n not in values]
    elif event in _TOOL_EVENTS and not any(compile_matcher(matcher)(tool) for tool in KNOWN_TOOLS):
        found.append(f"the matcher {matcher!r} matches none of the canonical tool names ({', '.join(sorted(KNOWN_TOOLS))}); "
                     "fine for MCP tools, otherwise a typo")
    budget = budgets.get(event)
    timeout = f"{handler.timeout:g}s" + (" (the default when none is set)" if handler.timeout == DEFAULT_TIMEOUT else "")
    if budget is not None and handler.timeout + TIMEOUT_SLACK > budget:
        found.append(f"suspicious timeout {timeout}: the runtime gives hookgate's whole {event} call "
                     f"{budget:g}s, so it would be killed first (keep hook timeouts under {budget - TIMEOUT_SLACK:g}s; "
                     "the timeout is in seconds)")
    elif handler.timeout < _SHORT:
        found.append(f"suspicious timeout {timeout}: shorter than starting a shell may take; "
                     "the timeout is in seconds")
    return [Problem(severity="warning", file=handler.file, where=handler.where, detail=m) for m in found]


def _unknown_tool(name: str) -> str:
    close = [t for t in KNOWN_TOOLS if t.lower() == name.lower().replace("_file", "")]
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return (f"the matcher names {name!r}, which is not a canonical tool name{hint}; matchers see Claude Code's "
            "tool names on every runtime (Bash, Write, Edit, Read, ...)")


def doctor_check(setup: Any) -> list[Problem]:
    """The `hookgate doctor` check: `setup.project` is the project folder."""
    from ..store.project import Project

    return lint(Project(Path(setup.project)).hooks_path)
