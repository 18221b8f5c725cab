"""`hookgate install codex --plugin`: the review Codex asks for before it runs the hookgate
plugin's hooks, recorded the way Codex's own `/hooks` review records it.

Codex installs a plugin (`codex plugin add hookgate@hookgate`) but runs none of its hooks until
they are reviewed: `codex exec` skips them without a word, the interactive CLI says "Hooks need
review". The review writes, per handler, into the user config.toml

    [hooks.state."hookgate@hookgate:hooks/hooks.json:pre_tool_use:0:0"]
    trusted_hash = "sha256:..."

with the same per-handler hash as any other hook (trust.py). This records exactly the hashes of
the hooks this hookgate ships in its plugin (plugin.py), never of whatever sits in Codex's plugin
cache: a plugin of another version, or an edited one, stays unreviewed. Every line is marked
(tomlfile.py), so uninstall takes back exactly these.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Mapping

from hookgate import __version__

from . import plugin, trust
from .tomlfile import TomlFile

PLUGIN_ID = f"{plugin.NAME}@{plugin.MARKETPLACE}"
HOOKS_FILE = "hooks/hooks.json"


def config_path(project: Path | None, env: Mapping[str, str] = os.environ) -> Path:
    """Hook trust lives in the user config only, whatever the install's scope."""
    return trust.user_config(env)


def trusted_hashes() -> dict[str, str]:
    """hooks.state key -> trusted_hash, for every handler of the shipped plugin."""
    hooks = plugin.hooks()["hooks"]
    return {f"{PLUGIN_ID}:{HOOKS_FILE}:{trust.EVENT_LABELS[event]}:{g}:{h}": trust.hook_hash(event, group, handler)
            for event, g, h, group, handler in trust.command_handlers(hooks)}


def install(path: Path, command: str) -> bool:
    config = TomlFile(path)
    hashes = trusted_hashes()
    config.unmark(lambda key: _ours(key) and key[2] not in hashes)  # handlers an older plugin had
    for key, digest in hashes.items():
        config.set(("hooks", "state", key), "trusted_hash", digest)
    config.text()
    return config.save()


def uninstall(path: Path) -> bool:
    if not path.exists():
        return False
    config = TomlFile(path)
    config.unmark(_ours)
    config.text()
    return config.save()


def notes(path: Path) -> list[str]:
    return [f"codex: recorded the review of the {len(trusted_hashes())} hooks of the {PLUGIN_ID} plugin "
            f"(version {__version__}) in {path}; Codex runs them once the plugin is installed: "
            f"codex plugin marketplace add <hookgate checkout> && codex plugin add {PLUGIN_ID}"]


def _ours(key: tuple[str, ...]) -> bool:
    return len(key) == 3 and key[:2] == ("hooks", "state") and key[2].startswith(f"{PLUGIN_ID}:")


def doctor_check(setup: Any) -> list[Any]:
    """`hookgate doctor`: the plugin, when the user config enables it, and its review."""
    from hookgate.checks import Finding
    from hookgate.installers import plugin_doctor

    from . import install as registration

    path = trust.user_config(setup.env)
    try:
        config = tomllib.loads(path.read_text()) if path.exists() else {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return []  # check_feature reports the file
    entry = (config.get("plugins") or {}).get(PLUGIN_ID)
    if not (isinstance(entry, dict) and entry.get("enabled", True)):
        return [Finding("info", f"codex: the {PLUGIN_ID} plugin is not installed")]
    state = (config.get("hooks") or {}).get("state") or {}
    unreviewed = sorted(key.split(":")[2] for key, digest in trusted_hashes().items()
                        if not isinstance(state.get(key), dict) or state[key].get("trusted_hash") != digest)
    found = []
    if unreviewed:
        found.append(Finding("fail", f"codex: {len(unreviewed)} hooks of the {PLUGIN_ID} plugin are not reviewed "
                                     f"({', '.join(unreviewed)}): Codex skips them without a word",
                             "hookgate install codex --plugin (or review them with /hooks in codex)"))
    installs = []
    for where in (Path(setup.project), None):
        hooks = registration.config_path(where, setup.env)
        try:
            if registration.installed_events(hooks):
                installs.append(str(hooks))
        except ValueError:
            continue
    return found + plugin_doctor.findings(setup, "codex", PLUGIN_ID, installs, f"codex plugin remove {PLUGIN_ID}")
