"""hookgate's registrations for Codex: `hooks.json` (user: `$CODEX_HOME/hooks.json`, project:
`<dir>/.codex/hooks.json`), `[features] hooks = true` in the config.toml beside it, and the trust
Codex needs before it runs them, recorded in the user config.toml.

Install merges into what is there and is idempotent; uninstall removes exactly what install added
(hookgate's handlers, its marked config lines, its trust entries) and keeps the trust of the
user's own hooks valid when their positions in hooks.json shift (Codex keys trust by position).

Recording trust: Codex skips every hook nobody trusted, silently. Whoever runs `hookgate install`
is reviewing hookgate's own handlers, so install records their trust, the way Codex's `/hooks`
review would; it never trusts anything else, and never trusts a project (that is Codex's call,
see `notes`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from contextlib import suppress
from pathlib import Path
from typing import Any, Callable, Mapping

from hookgate import lifecycle
from hookgate.formats import hooksjson
from hookgate.installers import fail_closed

from . import trust
from .tomlfile import TomlFile

# event, matcher (None where Codex ignores it), timeout in seconds (Codex clamps SessionEnd and
# Interrupt to 3 s); generated from the lifecycle matrix (core/hookgate/lifecycle.toml)
REGISTRATIONS: tuple[tuple[str, str | None, int], ...] = tuple(
    (r.event, r.matcher, r.timeout_for("codex")) for r in lifecycle.for_runtime("codex")
)

_OURS = re.compile(r"hook codex --event [A-Za-z]+")


def config_path(project: Path | None, env: Mapping[str, str] = os.environ) -> Path:
    if project is not None:
        return project / ".codex" / "hooks.json"
    return trust.codex_home(env) / "hooks.json"


def hook_command(command: str, event: str) -> str:
    """The handler command. Codex counts a handler that crashes, cannot start or exits
    with anything but 0 or 2 as "failed" and lets the action go ahead, so the gating events' command
    is exit-2 wrapped (installers/fail_closed.py)."""
    return fail_closed.hook_command(command, "codex", event)


def registrations(command: str) -> dict[str, list[dict[str, Any]]]:
    hooks: dict[str, list[dict[str, Any]]] = {}
    for event, matcher, timeout in REGISTRATIONS:
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [{"type": "command", "command": hook_command(command, event), "timeout": timeout}]
        hooks[event] = [group]
    return hooks


def install(path: Path, command: str, env: Mapping[str, str] = os.environ) -> bool:
    document = hooksjson.read(path)
    hooks = document.setdefault("hooks", {})
    theirs_before = _their_keys(path, hooks)
    hooksjson.remove_handlers(hooks, is_ours)
    for event, groups in registrations(command).items():
        hooks.setdefault(event, []).extend(groups)
    configs = _configs(path, env)
    configs.feature.set(("features",), "hooks", True)
    if (configs.feature.table(("features",)) or {}).get("codex_hooks") is False:  # the deprecated alias
        configs.feature.set(("features",), "codex_hooks", True)
    ours = {trust.hook_key(path, e, g, h): trust.hook_hash(e, group, handler)
            for e, g, h, group, handler in trust.command_handlers(hooks) if is_ours(handler)}
    configs.user.unmark(lambda key: _trust_of(path, key) and key[2] not in ours)
    _move_trust(configs.user, theirs_before, _their_keys(path, hooks))
    for key, digest in ours.items():
        configs.user.set(("hooks", "state", key), "trusted_hash", digest)
    return _save(path, document, configs)


def uninstall(path: Path, env: Mapping[str, str] = os.environ) -> bool:
    document = hooksjson.read(path)
    hooks = document.get("hooks", {})
    theirs_before = _their_keys(path, hooks)
    hooksjson.remove_handlers(hooks, is_ours)
    if not hooks:
        document.pop("hooks", None)
    configs = _configs(path, env)
    configs.feature.unmark(lambda key: key == ("features",))
    configs.user.unmark(lambda key: _trust_of(path, key))
    _move_trust(configs.user, theirs_before, _their_keys(path, hooks))
    changed = _save(path, document, configs)
    if project_of(path, env) is not None:
        # the project's .codex/ that install made, empty now: hooks.json went first, while the
        # config.toml beside it was still there (the Codex home stays, even empty: Codex refuses
        # a CODEX_HOME that does not exist)
        with suppress(OSError):
            path.parent.rmdir()
    return changed


def remove_handlers(path: Path, picked: Callable[[Any], bool], env: Mapping[str, str] = os.environ) -> bool:
    """Take another guard's handlers out of hooks.json (`hookgate migrate`), carrying the trust
    of the handlers that stay to their new positions (Codex keys trust by position)."""
    if not path.exists():
        return False
    document = hooksjson.read(path)
    hooks = document.get("hooks", {})
    kept_before = [key for key, handler in _keys(path, hooks) if not picked(handler)]
    if not hooksjson.remove_handlers(hooks, picked):
        return False
    if not hooks:
        document.pop("hooks", None)
    configs = _configs(path, env)
    _move_trust(configs.user, kept_before, [key for key, _ in _keys(path, hooks)])
    return _save(path, document, configs, picked)


def _keys(path: Path, hooks: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(trust.hook_key(path, e, g, h), handler) for e, g, h, _, handler in trust.command_handlers(hooks)]


def _save(path: Path, document: dict[str, Any], configs: "_Configs",
          edited: Callable[[Any], bool] | None = None) -> bool:
    """`edited`: the handlers the document added or took out (hookgate's own, or on migrate
    another guard's), the only text of hooks.json that changes."""
    configs.feature.text(), configs.user.text()  # refuse before writing anything
    changed = hooksjson.write(path, document, edited or is_ours)
    return configs.save() or changed


def installed_events(path: Path) -> set[str]:
    """The events whose hookgate handler is present (for doctor)."""
    return {event for event, _ in installed_commands(path)}


def installed_commands(path: Path) -> list[tuple[str, str]]:
    """(event, command) of every hookgate handler in the file (for doctor)."""
    hooks = hooksjson.read(path).get("hooks", {}) if path.exists() else {}
    return [(event, str(handler.get("command"))) for event, _, _, _, handler in trust.command_handlers(hooks)
            if is_ours(handler)]


def notes(path: Path, env: Mapping[str, str] = os.environ) -> list[str]:
    """What the user must still do for Codex to run the hooks at `path` (after install)."""
    user = TomlFile(trust.user_config(env))
    lines = [f"codex: recorded trust for hookgate's {len(installed_events(path))} hooks in {user.path} "
             "(Codex skips hooks nobody trusted)"]
    project = project_of(path, env)
    if project is not None and trust.project_trust(user.data, project) != "trusted":
        lines.append(f"codex: Codex loads {path.parent} only once you trust the project: "
                     f"{trust_project_command(project)}")
    return lines


def project_of(path: Path, env: Mapping[str, str] = os.environ) -> Path | None:
    """The project whose `.codex/hooks.json` this is; None for the user's own hooks.json."""
    return None if path.parent == trust.codex_home(env) else path.parent.parent


def trust_project_command(project: Path) -> str:
    folder = shlex.quote(str(project))
    return (f"run `codex -C {folder}` once and choose \"Trust and continue\" "
            f"(or, without the dialog: codex exec --trust --skip-git-repo-check -C {folder} 'ok')")


# -- hooks.json ----------------------------------------------------------------------------------

def is_ours(handler: Any) -> bool:
    command = str(handler.get("command", "")) if isinstance(handler, dict) else ""
    return "hookgate" in command and bool(_OURS.search(command))


def _their_keys(path: Path, hooks: dict[str, Any]) -> list[str]:
    return [trust.hook_key(path, e, g, h) for e, g, h, _, handler in trust.command_handlers(hooks)
            if not is_ours(handler)]


# -- config.toml ---------------------------------------------------------------------------------

class _Configs:
    """The config.toml beside hooks.json (the feature flag) and the user's (trust); one file
    when hooks.json is the user's own."""

    def __init__(self, feature: TomlFile, user: TomlFile) -> None:
        self.feature, self.user = feature, user

    def save(self) -> bool:
        changed = self.feature.save()
        return (self.user is not self.feature and self.user.save()) or changed


def _configs(path: Path, env: Mapping[str, str]) -> _Configs:
    feature = TomlFile(path.parent / "config.toml")
    user_path = trust.user_config(env)
    return _Configs(feature, feature if user_path == feature.path else TomlFile(user_path))


def _trust_of(path: Path, key: tuple[str, ...]) -> bool:
    return len(key) == 3 and key[:2] == ("hooks", "state") and key[2].startswith(f"{path}:")


def _move_trust(config: TomlFile, before: list[str], after: list[str]) -> None:
    """Carry the user's own hooks' trust to their new positions (Codex keys trust by position)."""
    for old, new in zip(before, after):
        if old != new:
            config.rename_table(("hooks", "state", old), ("hooks", "state", new))
