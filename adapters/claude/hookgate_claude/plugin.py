"""hookgate as a Claude Code plugin: the plugin folder and the marketplace that lists it.

    python -m hookgate_claude.plugin      # regenerate the files below from the lifecycle matrix

  .claude-plugin/marketplace.json                 the marketplace (`claude plugin marketplace add <checkout>`)
  adapters/claude/plugin/.claude-plugin/plugin.json   the plugin (`claude plugin install hookgate@hookgate`)
  adapters/claude/plugin/hooks/hooks.json         its hooks: the same registrations as `hookgate install
                                                  claude` (install.py), calling the hookgate on PATH
                                                  through `sh` in exec form (sh -c is the argument list)

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

MARKETPLACE = "hookgate"
NAME = "hookgate"
PLUGIN_DIR = "adapters/claude/plugin"
DESCRIPTION = "hookgate's policy gates on every Claude Code hook (needs the hookgate command on PATH)"


def hook_command(event: str) -> str:
    start = plugin_hooks.session_start_answer() if event == "SessionStart" else None
    return plugin_hooks.command("claude", event, gating=event in lifecycle.fail_closed_events(), start_answer=start)


def hooks() -> dict[str, Any]:
    return {"description": DESCRIPTION,
            **plugin_hooks.hooks_document(settings.registrations(plugin_hooks.PROGRAM), hook_command,
                                          settings.exec_form)}


def files() -> dict[str, str]:
    """Repository path -> the text it should hold."""
    manifest = {
        "name": NAME, "version": __version__, "description": DESCRIPTION,
        "author": {"name": "hookgate"}, "license": "MIT", "keywords": ["hooks", "policy", "guard"],
    }
    marketplace = {
        "name": MARKETPLACE, "owner": {"name": "hookgate"},
        "description": "hookgate, one hook policy engine for coding agents",
        "plugins": [{"name": NAME, "source": f"./{PLUGIN_DIR}", "description": DESCRIPTION, "version": __version__}],
    }
    return {
        ".claude-plugin/marketplace.json": plugin_hooks.json_text(marketplace),
        f"{PLUGIN_DIR}/.claude-plugin/plugin.json": plugin_hooks.json_text(manifest),
        f"{PLUGIN_DIR}/hooks/hooks.json": plugin_hooks.json_text(hooks()),
    }


def write(root: Path) -> None:
    plugin_hooks.write_files(root, files())


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd())


def doctor_check(setup: Any) -> list[Any]:
    """`hookgate doctor`: the plugin, when a settings file enables it."""
    from hookgate.checks import Finding
    from hookgate.installers import plugin_doctor

    plugin_id = f"{NAME}@{MARKETPLACE}"
    project = Path(setup.project) / ".claude"
    files = [settings.config_path(None), project / "settings.json", project / "settings.local.json"]
    enabled = None
    for path in files:  # later files win, as in Claude Code
        try:
            value = json.loads(path.read_text()).get("enabledPlugins", {}).get(plugin_id) if path.is_file() else None
        except (ValueError, AttributeError):
            continue
        enabled = value if isinstance(value, bool) else enabled
    if not enabled:
        return [Finding("info", f"claude: the {plugin_id} plugin is not enabled")]
    installs = [str(path) for path in (settings.config_path(Path(setup.project)), settings.config_path(None))
                if _installed(path)]
    return plugin_doctor.findings(setup, "claude", plugin_id, installs, f"claude plugin uninstall {plugin_id}")


def _installed(path: Path) -> bool:
    try:
        return bool(settings.installed_commands(path))
    except ValueError:
        return False
