"""The real tier's shared machinery: the scripted model, a session's moves as its scripts, what
the runs of a session left behind, and the checks of a move against it."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator


from harness.fakemodel import API, MARKER, FakeModel, Say, Step
from harness.runtimes import Run, metrics
from scenarios import (LEAD, NEVER_RUN, SESSIONS, Compact, Dispatch, Interrupt, Move, Prompt, Record, Report, Session,
                       Stop, Tool, proving)

from .base import check_never_run, evidence, read_file

# -- the scripted model ---------------------------------------------------------------------------------


class ScenarioModel(FakeModel):
    """The scripted fake model, plus two things a real model does that a fixed script cannot:
    a subagent whose report was refused hands in its next one (the script's step only advances
    with tool calls, and a refused stop adds none), and a conversation a runtime compacted goes on
    to its end instead of starting the script over (`after_compaction`: text only that runtime's
    compacted history holds)."""

    def __init__(self) -> None:
        super().__init__()
        self.revisions: dict[str, list[tuple[str, Step]]] = {}
        self.after_compaction: str | None = None

    def revise(self, scenario: str, when: str, then: Step) -> None:
        self.revisions.setdefault(scenario, []).append((when, then))

    def reply_for(self, api: str, path: str, body: dict[str, Any]) -> Step:
        reply = super().reply_for(api, path, body)
        if not body.get("tools"):
            return reply
        texts = API[api].user_texts(body)
        if self.after_compaction and any(self.after_compaction in t for t in texts):
            return self._replace(body, Say("Compacted; nothing left to do."))
        scenario = next((m.group(1) for t in texts for m in [MARKER.search(t)] if m), None)
        for when, then in reversed(self.revisions.get(scenario or "", [])):
            if any(when in t for t in texts):
                return self._replace(body, then)
        return reply

    def _replace(self, body: dict[str, Any], step: Step) -> Step:
        with self._lock:  # subagents run side by side: find this request's own record
            next(r for r in reversed(self.requests) if r.body is body).reply = step
        return step


def marker(session: Session, agent: str) -> str:
    return f"{session.name}.{agent}"


@dataclass
class Scripts:
    """A session's moves as the model's scripts: the lead's steps (its stop message last) and each
    subagent's, with the revisions that follow each refused report."""

    lead: list[Step] = field(default_factory=list)
    children: dict[str, list[Step]] = field(default_factory=dict)
    revisions: list[tuple[str, str, Step]] = field(default_factory=list)  # (scenario, refusal seen, next report)


def scripts(session: Session, runtime: str, moves: list[Move], call: Callable[[Move], list[Step]]) -> Scripts:
    """`call(move)` is the runtime's model calls for a tool call, a dispatch or an interrupted command."""
    out = Scripts()
    reports: dict[str, list[Report]] = {}
    for move in moves:
        if isinstance(move, Report):
            reports.setdefault(move.by, []).append(move)
        elif isinstance(move, (Tool, Dispatch, Interrupt)):
            steps = call(move)
            if move.by == LEAD:
                out.lead += steps
            else:
                out.children.setdefault(move.by, []).extend(steps)
    stops = [m for m in moves if isinstance(m, Stop)]
    out.lead.append(Say(stops[0].message if stops else "Done."))
    for agent, handed in reports.items():
        out.children.setdefault(agent, []).append(Say(handed[0].text))
        for refused, following in zip(handed, handed[1:]):
            out.revisions.append((marker(session, agent), refused.expected(runtime).sees, Say(following.text)))
    return out


def load(model: ScenarioModel, session: Session, plan: Scripts, lead: str = LEAD) -> str:
    """Script the model; returns the marker for the lead's prompt (`lead-<n>` for a later run's)."""
    for agent, steps in plan.children.items():
        model.script(marker(session, agent), *steps)
    for scenario, when, then in plan.revisions:
        model.revise(scenario, when, then)
    return model.script(marker(session, lead), *plan.lead)


def running(work: Path, command: str, alive: Callable[[], bool], timeout: float = 120) -> None:
    """Wait until the runtime asked its hooks about `command` (it is about to run, or the runtime
    ended), then give the command a moment to start."""
    deadline = time.monotonic() + timeout
    while not any(e["event"] == "PreToolUse" and command in e["subject"] for e in evidence(work)):
        if not alive() or time.monotonic() > deadline:
            return
        time.sleep(0.2)
    time.sleep(2)


def interrupted(process: subprocess.Popen[str], work: Path, command: str, timeout: float = 120) -> Run:
    """Interrupt the runtime while `command` runs, as a user's Ctrl-C does, and collect the run."""
    running(work, command, lambda: process.poll() is None, timeout)
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=timeout)
    return Run(process.returncode, out, err)


# -- what a run left behind, and the checks -----------------------------------------------------------

@dataclass
class RealPlay:
    """What the runs of one session left behind. A session may take several runs of the runtime
    (compaction); the user hooks' evidence is kept per run, so a move is judged by its own run."""

    session: Session
    runtime: str
    work: Path
    model: ScenarioModel
    runs: list[tuple[list[int], Run, list[dict[str, Any]]]] = field(default_factory=list)  # moves, run, evidence
    records: list[dict[str, Any]] = field(default_factory=list)
    compactions: dict[int, int] = field(default_factory=dict)  # run -> compactions done, where the driver counts

    def ran(self, moves: list[int], run: Run, compactions: int | None = None) -> None:
        """Note a finished run of the runtime, which played `moves` (indices into the session);
        `compactions`: how many the runtime did, if not told by a SessionStart(compact)."""
        before = sum(len(lines) for _, _, lines in self.runs)
        if compactions is not None:
            self.compactions[len(self.runs)] = compactions
        self.runs.append((moves, run, evidence(self.work)[before:]))
        self.records = metrics(self.work)

    @property
    def evidence(self) -> list[dict[str, Any]]:
        return [line for _, _, lines in self.runs for line in lines]

    def run_of(self, index: int) -> int:
        return next(n for n, (moves, _, _) in enumerate(self.runs) if index in moves)

    def evidence_of(self, index: int) -> list[dict[str, Any]]:
        return self.runs[self.run_of(index)][2]

    def compacted(self, index: int) -> int:
        """How many compactions the run of move `index` did: what the driver counted, else the
        SessionStart(compact) that follows one."""
        run = self.run_of(index)
        if run in self.compactions:
            return self.compactions[run]
        return sum(e["hook"] == "python:session_start" and e["subject"] == "compact" for e in self.runs[run][2])

    def seen(self, agent: str) -> list[Any]:
        """The requests of `agent`'s conversations (the lead's of every run)."""
        name = marker(self.session, agent)
        return [r for r in self.model.seen() if r.scenario == name or (r.scenario or "").startswith(name + "-")]

    def texts(self, agent: str) -> list[str]:
        """Every text the runtime sent the model in `agent`'s conversations."""
        return [t for r in self.seen(agent) for t in _strings(r.body)]

    def unmatched(self) -> dict[int, list[Record]]:
        """Per move, its expected records that no record of the run matches; each record of the run
        matches one expected record at most, and a move's records must come in its order."""
        used: set[int] = set()
        missing: dict[int, list[Record]] = {}
        for index, move in enumerate(self.session.moves):
            at = 0
            for expected in move.expected(self.runtime).records:
                found = next((i for i in range(at, len(self.records))
                              if i not in used and expected.matches(self.records[i])), None)
                if found is None:
                    missing.setdefault(index, []).append(expected)
                    continue
                used.add(found)
                at = found + 1
        return missing


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def check_real(play: RealPlay, index: int) -> None:
    """What a real run shows of one move: what the model was shown, the files, the records, and
    which of the user's hooks ran."""
    session, move = play.session, play.session.moves[index]
    expect = move.expected(play.runtime)
    where = f"{play.runtime} {session.name} move {index} ({type(move).__name__} {move.key})"
    if isinstance(move, Prompt) and expect.verdict == "block":
        assert not play.seen(LEAD), f"{where}: the refused prompt reached the model"
    elif expect.sees:
        assert any(expect.sees in t for t in play.texts(move.by)), f"{where}: the model never saw {expect.sees!r}"
    for path, content in expect.files.items():
        if _last_mention(session, index, path):
            assert read_file(play.work / path) == content, f"{where}: {path}"
    missing = play.unmatched().get(index)
    assert not missing, f"{where}: no record {', '.join(map(str, missing))} among {play.records}"
    about, lines = expect.about or move.key, play.evidence_of(index)
    for hook in expect.ran:
        assert any(e["hook"] == hook and about in e["subject"] for e in lines), \
            f"{where}: {hook} did not run (about {about!r})"
    for hook in expect.not_ran:
        assert not any(e["hook"] == hook for e in lines), f"{where}: {hook} ran"
    if isinstance(move, Compact):
        done = play.compacted(index)
        assert done == (0 if expect.verdict == "block" else 1), f"{where}: {done} compaction(s)"


def _last_mention(session: Session, index: int, path: str) -> bool:
    """The final state of a file shows a move only when no later move expects it otherwise."""
    return not any(path in m.expect.files or any(path in e.files for e in m.on.values())
                   for m in session.moves[index + 1:])


class RealTier:
    """One runtime version's scenario sessions: each played once on its pinned binary, when a test
    first needs it, and kept for the other tests of that version."""

    def __init__(self, driver: Any, version: str, root: Path) -> None:
        self.driver, self.version, self.root = driver, version, root
        self.key = f"{driver.runtime}-{version}"  # the capability table's
        self.plays: dict[str, RealPlay] = {}
        self.seconds: dict[str, float] = {}

    def play(self, name: str) -> RealPlay:
        if name not in self.plays:
            started = time.monotonic()
            self.plays[name] = self.driver.play(SESSIONS[name], self.root / name, self.version)
            self.seconds[name] = time.monotonic() - started
        return self.plays[name]

    def show(self, row: str) -> None:
        """Check every move that proves `row` on this version (a row no runtime emits: that its
        hooks never ran in any session)."""
        never = [hook for hook, never_row in NEVER_RUN.items() if never_row == row]
        if never:
            check_never_run((e for name in SESSIONS for e in self.play(name).evidence), never)
            return
        moves = proving(row, self.key)
        assert moves, f"no scenario move proves {row} on {self.key}"
        for session, index, _ in moves:
            check_real(self.play(session.name), index)


class RealTiers:
    """Every runtime version's RealTier, made when first asked for; the wall time of each one's
    runs is printed at the end."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tiers: dict[str, RealTier] = {}

    def get(self, driver: Any, version: str) -> RealTier:
        key = f"{driver.runtime}-{version}"
        if key not in self.tiers:
            self.tiers[key] = RealTier(driver, version, self.root / key)
        return self.tiers[key]

    def timings(self) -> list[str]:
        return [f"{key} real tier: {sum(t.seconds.values()):.1f} s of runs ("
                + ", ".join(f"{name} {s:.1f} s" for name, s in t.seconds.items()) + ")"
                for key, t in self.tiers.items() if t.seconds]
