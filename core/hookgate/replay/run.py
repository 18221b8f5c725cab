"""`hookgate replay`: the recorded events of sessions decided again, in order, under the current
policy or another one, and the calls whose verdict changed.

A replay never touches the project. It decides in a scratch copy of it (sources and policy files;
not .git, dependency folders or hookgate's own session logs), whose `.hookgate/` policy files are
the other policy's when one is given. The state of each session is rebuilt as it went: a fresh
session store the replayed decisions fill themselves (counters, subagent roles, notices), and before
each call what hookgate read of the project's pipeline state at the time: the active role, and the
completed stages as they stood (stage.jsonl only grows, so its first N entries). Other project files
are read as they are now: a gate that reads one that changed since (a plan, a report) can decide
otherwise for that reason alone.

Command hooks and Python policies run as they would, in the scratch copy; what they write lands
there. A verdict changed when what it does to the call changed (allow, a context, a rewrite, a
refusal; an allow and a context both let it run as asked), or what monitor mode would have blocked. A call whose stored event lost something (a secret redacted, a long value cut) is still
decided, and marked `inexact`. A replay runs no tool, so a refusal of the effect check after a call
(it judged what the call did on disk) is carried over as it was and counted inexact.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..config.load import open_project
from ..errors import ConfigError, PayloadError
from ..explain import Call, calls
from ..hookcall import decide, load_policy
from ..model.codec import event_from_builtins
from ..store import locked
from ..store.project import HOOKGATE_DIR, Project

# never copied into the scratch project: history, dependencies, hookgate's own logs and reports
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache"})
POLICY_FILES = ("config.toml", "hooks.json", "policies")  # in .hookgate/, whatever the layout

# gates whose verdict is about what the tool did: a replay, which runs no tool, keeps theirs
CARRIED_GATES = frozenset({"effect_restore"})


@dataclass
class Change:
    session_id: str
    tool_use_id: str | None
    event: str
    tool: str | None
    agent_id: str | None
    subject: str
    old: dict[str, Any]
    new: dict[str, Any]
    inexact: bool

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Result:
    policy: str
    sessions: list[str] = field(default_factory=list)
    decided: int = 0
    inexact: int = 0
    changed: list[Change] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "sessions": self.sessions, "decided": self.decided,
                "inexact": self.inexact, "unchanged": self.decided - len(self.changed),
                "changed": [c.as_dict() for c in self.changed]}


def replay(sessions: Iterable[tuple[str, list[dict[str, Any]]]], project_root: Path, *,
           config: Path | None = None, policy_project: Path | None = None) -> Result:
    """Decide the recorded calls of `sessions` ((id, records) each) again, in a scratch copy of
    `project_root` whose policy is `config` (a config.toml), `policy_project`'s, or its own."""
    described = (f"config {config}" if config else f"the policy of {policy_project}" if policy_project
                 else f"the policy of {project_root}")
    result = Result(policy=described)
    project = _open(project_root)
    stage_lines = [line for line in locked.read(project.stage_path).splitlines(True) if line.strip()]
    with tempfile.TemporaryDirectory(prefix="hookgate-replay-") as tmp:
        for session_id, records in sessions:
            scratch = Path(tmp) / f"project-{len(result.sessions)}"
            _copy_project(project, scratch)
            _take_policy(project, scratch, config, policy_project)
            result.sessions.append(session_id)
            for group in _grouped(calls(records)):
                _replay_call(group, scratch, project, stage_lines, result)
    return result


def _open(root: Path) -> Project:
    try:
        return open_project(root)[0]
    except ConfigError:
        return Project.open(root)


def _replay_call(group: list[Call], scratch: Path, project: Project, stage_lines: list[bytes], result: Result) -> None:
    first = group[0].decision
    root = project.root
    env = {**os.environ, "HOOKGATE_PROJECT_DIR": str(scratch), "HOOKGATE_WARM": "off"}
    _restore_pipeline_state(project, scratch, first.get("role"), stage_lines[: int(first.get("stages") or 0)])
    events, inexact = [], False
    for call in group:
        stored = dict(call.decision.get("call") or {})
        redacted, cut = stored.pop("redacted", None), stored.pop("cut", None)
        inexact = inexact or bool(redacted) or _lost(cut)
        if isinstance(stored.get("tool_response"), dict) and "sha256" in stored["tool_response"]:
            del stored["tool_response"]  # only its digest was kept
        moved = _moved(stored, [call.decision.get("root") or str(root), str(root)], str(scratch))
        try:
            events.append(event_from_builtins(moved))
        except PayloadError:
            return  # a record this hookgate cannot read back: nothing to compare
    policy = load_policy(str(scratch), env)
    _, decisions, _ = decide(policy, events)
    for call, decision in zip(group, decisions):
        result.decided += 1
        result.inexact += inexact
        old = _verdict(call.decision.get("decision"), call.decision.get("blocked_by", []),
                       call.decision.get("would_block", []), call.decision.get("reason"))
        new = _verdict(decision.verdict.kind, list(decision.blocked_by), list(decision.monitored),
                       getattr(decision.verdict, "reason", None))
        blocked_by = set(call.decision.get("blocked_by") or [])
        if blocked_by and blocked_by <= CARRIED_GATES:  # it judged what the tool did, which a replay does not run
            result.inexact += not inexact
            continue
        if (_effect(old["verdict"]), old["would_block"]) != (_effect(new["verdict"]), new["would_block"]):
            stored = call.decision.get("call") or {}
            result.changed.append(Change(
                session_id=call.decision.get("session_id") or stored.get("session_id", ""),
                tool_use_id=call.decision.get("tool_use_id"), event=call.decision.get("hook_event") or "",
                tool=call.decision.get("tool"), agent_id=stored.get("agent_id"), subject=_subject(stored),
                old=old, new=new, inexact=inexact))


def _effect(kind: Any) -> Any:
    """What a verdict does to the call. A context is an allow that also tells the model something;
    which call of concurrent ones (a lead and its subagents) delivers a held notice depends on
    how they interleaved, which a log of their decisions cannot replay."""
    return "allow" if kind == "context" else kind


def _verdict(kind: Any, gates: list[str], would_block: list[str], reason: Any) -> dict[str, Any]:
    return {"verdict": kind, "gates": gates, "would_block": sorted(would_block), "reason": reason}


def _lost(cut: Any) -> bool:
    """Whether a cut changed what the gates judge (a tool's output is never an input of theirs)."""
    return bool(cut) and any(not str(where).startswith("tool_response") for where in cut)


def _grouped(found: list[Call]) -> Iterator[list[Call]]:
    """The events of one call together (a Codex patch: one per file, decided as one call)."""
    group: list[Call] = []
    for call in found:
        group.append(call)
        if call.decision.get("part", 0) + 1 >= call.decision.get("parts", 1):
            yield group
            group = []
    if group:
        yield group


def _moved(value: Any, roots: list[str], scratch: str) -> Any:
    """The recorded event with the project's paths pointing into the scratch copy."""
    if isinstance(value, str):
        for root in dict.fromkeys(r for form in roots for r in (form, os.path.realpath(form))):
            if root and root in value:
                value = value.replace(root, scratch)
        return value
    if isinstance(value, dict):
        return {k: _moved(v, roots, scratch) for k, v in value.items()}
    if isinstance(value, list):
        return [_moved(v, roots, scratch) for v in value]
    return value


def _subject(stored: dict[str, Any]) -> str:
    tool_input = stored.get("tool_input") or {}
    for key in ("command", "file_path", "description", "prompt"):
        value = tool_input.get(key)
        if isinstance(value, str):
            return value[:200]
    for key in ("prompt", "last_assistant_message", "source", "reason"):
        if isinstance(stored.get(key), str):
            return stored[key].splitlines()[0][:200] if stored[key] else ""
    return ""


def _state_files(project: Project) -> set[Path]:
    """What the project's layout keeps of its sessions and pipeline state (never copied: the
    replay rebuilds it)."""
    layout = project.layout
    templates = (layout.session_metrics, layout.session_state, layout.notices, layout.decisions,
                 layout.lifetime_metrics, layout.reports)
    tops = {project.state_dir / Path(t).parts[0] for t in templates}
    return tops | {project.role_path, project.stage_path}


def _copy_project(project: Project, scratch: Path) -> None:
    skip = _state_files(project)

    def ignore(directory: str, names: list[str]) -> set[str]:
        return {n for n in names if n in SKIP_DIRS or Path(directory) / n in skip}

    shutil.copytree(project.root, scratch, symlinks=True, ignore=ignore)
    (scratch / HOOKGATE_DIR).mkdir(exist_ok=True)
    (scratch / project.dir.relative_to(project.root)).mkdir(parents=True, exist_ok=True)


def _take_policy(project: Project, scratch: Path, config: Path | None, policy_project: Path | None) -> None:
    """The other policy in place of the project's own policy files."""
    state = scratch / HOOKGATE_DIR
    if config is not None:
        shutil.copyfile(config, state / "config.toml")
        return
    if policy_project is None:
        return
    other = _open(policy_project)
    moves = [(policy_project / HOOKGATE_DIR / name, state / name) for name in POLICY_FILES]
    moves.append((other.schemas_path, scratch / project.schemas_path.relative_to(project.root)))
    for source, target in moves:
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        elif source.is_file():
            shutil.copyfile(source, target)


def _restore_pipeline_state(project: Project, scratch: Path, role: Any, stages: list[bytes]) -> None:
    role_file = scratch / project.role_path.relative_to(project.root)
    if isinstance(role, str) and role:
        role_file.write_text(role + "\n")
    else:
        role_file.unlink(missing_ok=True)
    stage_file = scratch / project.stage_path.relative_to(project.root)
    stage_file.write_bytes(b"".join(line if line.endswith(b"\n") else line + b"\n" for line in stages))


def text(result: Result) -> str:
    lines = [f"replayed {result.decided} decided event(s) of {len(result.sessions)} session(s) under {result.policy}",
             f"{len(result.changed)} changed, {result.decided - len(result.changed)} unchanged"
             + (f" ({result.inexact} inexact: stored without a secret or a long value)" if result.inexact else "")]
    for change in result.changed:
        old, new = change.old, change.new
        which = change.tool_use_id or change.event
        def label(v: dict[str, Any]) -> str:
            return str(v["verdict"]) + (f" (would block: {', '.join(v['would_block'])})" if v["would_block"] else "")

        gates = ", ".join(new["gates"] or old["gates"] or new["would_block"] or old["would_block"]) or "-"
        reason = new["reason"] or old["reason"] or ""
        lines.append(f"  {change.session_id} {which} {change.event} {change.tool or ''} {change.subject!r}".rstrip())
        lines.append(f"      {label(old)} -> {label(new)}  gate: {gates}" + (f"  reason: {reason.splitlines()[0]}" if reason else "")
                     + ("  [inexact]" if change.inexact else ""))
    return "\n".join(lines) + "\n"
