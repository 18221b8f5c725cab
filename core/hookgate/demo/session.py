"""The demo's scripted session: what the agents of a GodotMaker-style build do, in order, as data.

Each act is canonical (Claude Code's tool names and inputs); runtimes.py says it in each runtime's
own words. `expect` is what the godot preset must answer, so the demo checks itself as it runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

WORKER = ("agent-worker-1", "worker")


@dataclass(frozen=True)
class Act:
    title: str
    tool: str
    input: dict[str, Any]
    expect: str  # "allow" or "block"
    agent: tuple[str, str] | None = None  # (agent id, agent type) of a subagent; None: the lead
    stdin_only: bool = False  # a malformed payload: only the stdin runtimes can receive one


ROLE = "build"
FILES = {"PLAN.md": "| task | status |\n| player | pending |\n", "assets/hero.png": "PNG"}

ACTS: tuple[Act, ...] = (
    Act("the lead writes a note", "Write", {"file_path": "notes.txt", "content": "todo\n"}, "allow"),
    Act("the lead writes game code itself", "Write", {"file_path": "src/player.gd", "content": "extends Node\n"}, "block"),
    Act("... through the shell instead", "Bash", {"command": "echo 'extends Node' > src/enemy.gd"}, "block"),
    Act("the lead reads a raw image under assets/", "Read", {"file_path": "assets/hero.png"}, "block"),
    Act("the lead dispatches a worker before the design exists", "Agent",
        {"description": "worker: implement the player", "prompt": "implement src/player.gd", "subagent_type": "worker"}, "block"),
    Act("the lead claims the build stage is complete", "Edit",
        {"file_path": ".hookgate/stage.jsonl", "old_string": "", "new_string": '{"role": "build", "ts": "now"}\n'}, "block"),
    Act("a worker subagent writes game code", "Write", {"file_path": "src/player.gd", "content": "extends Node\n"}, "allow", WORKER),
    Act("the worker writes project memory", "Write", {"file_path": "MEMORY.md", "content": "notes\n"}, "block", WORKER),
    Act("... by a path that names another place", "Write", {"file_path": "src/../memory/notes.md", "content": "x\n"}, "block", WORKER),
    Act("the worker edits the plan", "Edit", {"file_path": "PLAN.md", "old_string": "pending", "new_string": "verified"}, "block", WORKER),
    Act("a payload the runtime cut short", "Write", {}, "block", stdin_only=True),
)


@dataclass
class Outcome:
    verdict: str  # "allow", "block" or "n/a"
    reason: str = ""
    raw: dict[str, Any] = field(default_factory=dict)
