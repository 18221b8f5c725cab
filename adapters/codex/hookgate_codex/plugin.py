"""hookgate as a Codex plugin: the plugin folder and the marketplace that lists it.

    python -m hookgate_codex.plugin      # regenerate the files below from the lifecycle matrix

  .agents/plugins/marketplace.json              the marketplace (`codex plugin marketplace add <checkout>`)
  adapters/codex/plugin/.codex-plugin/plugin.json   the plugin (`codex plugin add hookgate@hookgate`)
  adapters/codex/plugin/hooks/hooks.json        its hooks: the registrations of `hookgate install codex`
                                                (install.py), calling the hookgate on PATH

Codex runs a plugin's hooks only once the user reviewed them (`/hooks` in the interactive CLI, or
`hookgate install codex --plugin`, which records the hashes the review would: see plugin_trust.py).
tests/test_plugin_channels.py fails when a file drifts from what this module renders.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hookgate import __version__, lifecycle
from hookgate.installers import plugin_hooks

from . import install as registration

MARKETPLACE = "hookgate"
NAME = "hookgate"
PLUGIN_DIR = "adapters/codex/plugin"
DESCRIPTION = "hookgate's policy gates on every Codex hook (needs the hookgate command on PATH)"


def hook_command(event: str) -> str:
    start = plugin_hooks.session_start_answer() if event == "SessionStart" else None
    return plugin_hooks.command("codex", event, gating=event in lifecycle.fail_closed_events(), start_answer=start,
                                refuse_crashes=True)


def hooks() -> dict[str, Any]:
    return plugin_hooks.hooks_document(registration.registrations(plugin_hooks.PROGRAM), hook_command)


def files() -> dict[str, str]:
    """Repository path -> the text it should hold."""
    manifest = {
        "name": NAME, "version": __version__, "description": DESCRIPTION,
        "author": {"name": "hookgate"}, "license": "MIT", "keywords": ["hooks", "policy", "guard"],
        "hooks": "./hooks/hooks.json",
        "interface": {"displayName": "hookgate", "shortDescription": DESCRIPTION, "category": "Coding"},
    }
    marketplace = {
        "name": MARKETPLACE, "interface": {"displayName": "hookgate"},
        "plugins": [{"name": NAME, "source": {"source": "local", "path": f"./{PLUGIN_DIR}"},
                     "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"}, "category": "Coding"}],
    }
    return {
        ".agents/plugins/marketplace.json": plugin_hooks.json_text(marketplace),
        f"{PLUGIN_DIR}/.codex-plugin/plugin.json": plugin_hooks.json_text(manifest),
        f"{PLUGIN_DIR}/hooks/hooks.json": plugin_hooks.json_text(hooks()),
    }


def write(root: Path) -> None:
    plugin_hooks.write_files(root, files())


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd())
