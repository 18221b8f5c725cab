"""hookgate as a Gemini CLI extension: the extension folder `gemini extensions install` copies.

    python -m hookgate_gemini.extension      # regenerate the files below from the lifecycle matrix

  adapters/gemini/extension/gemini-extension.json   the manifest (`gemini extensions install
                                                    adapters/gemini/extension --consent`)
  adapters/gemini/extension/hooks/hooks.json        its hooks: the same registrations as `hookgate
                                                    install gemini` (install.py), calling the
                                                    hookgate on PATH

Gemini CLI lets a call through when its hook exits 1, so the gating events' commands turn any exit
of hookgate but 0 and 2 into a refusal, as the installed registration's wrapper does.
tests/test_plugin_channels.py fails when a file drifts from what this module renders.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hookgate import __version__, lifecycle
from hookgate.installers import plugin_hooks

from . import install as settings
from .dialect import EVENTS

NAME = "hookgate"
EXTENSION_DIR = "adapters/gemini/extension"
DESCRIPTION = "hookgate's policy gates on every Gemini CLI hook (needs the hookgate command on PATH)"


def hook_command(event: str) -> str:
    """The command of the canonical `event`'s hook (or of Gemini's own name for it)."""
    event = EVENTS.get(event, event)
    start = plugin_hooks.session_start_answer() if event == "SessionStart" else None
    return plugin_hooks.command("gemini", event, gating=event in lifecycle.fail_closed_events(), start_answer=start,
                                refuse_crashes=True)


def hooks() -> dict[str, Any]:
    return plugin_hooks.hooks_document(settings.registrations(plugin_hooks.PROGRAM), hook_command)


def files() -> dict[str, str]:
    """Repository path -> the text it should hold."""
    manifest = {"name": NAME, "version": __version__, "description": DESCRIPTION}
    return {
        f"{EXTENSION_DIR}/gemini-extension.json": plugin_hooks.json_text(manifest),
        f"{EXTENSION_DIR}/hooks/hooks.json": plugin_hooks.json_text(hooks()),
    }


def write(root: Path) -> None:
    plugin_hooks.write_files(root, files())


def installed_path(env: Any) -> Path:
    """Where `gemini extensions install` puts its copy of the extension."""
    return settings.gemini_home(env) / "extensions" / NAME


def doctor_check(setup: Any) -> list[Any]:
    """`hookgate doctor`: the extension, when Gemini CLI has it installed."""
    from hookgate.checks import Finding
    from hookgate.installers import plugin_doctor

    manifest = installed_path(setup.env) / "gemini-extension.json"
    try:
        installed = json.loads(manifest.read_text()).get("name") == NAME if manifest.is_file() else False
    except (ValueError, AttributeError):
        installed = False
    if not installed:
        return [Finding("info", f"gemini: the {NAME} extension is not installed")]
    places = [str(path) for path in (settings.config_path(Path(setup.project), setup.env),
                                     settings.config_path(None, setup.env)) if _installed(path)]
    return plugin_doctor.findings(setup, "gemini", f"{NAME} extension", places, f"gemini extensions uninstall {NAME}")


def _installed(path: Path) -> bool:
    try:
        return bool(settings.installed_commands(path))
    except ValueError:
        return False


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd())
