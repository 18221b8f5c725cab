"""hookgate's registration in OpenCode: one plugin file, `.opencode/plugin/hookgate.js` (or, with
--user, the same file under `~/.config/opencode/`). OpenCode loads every `.js` file there, so the
user's own config (opencode.json or opencode.jsonc, comments and all) is never rewritten, and
other plugins in the folder are left alone.

The file imports the opencode-hookgate plugin from where this hookgate is installed and passes it
the absolute command of this hookgate, so the plugin starts the right core outside any activated
venv. Install refuses to overwrite a hookgate.js it did not write; uninstall removes only its own.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

MARKER = "// Registered by `hookgate install opencode`"
PLUGIN_FILE = "hookgate.js"


def config_path(project: Path | None) -> Path:
    if project is not None:
        base = project / ".opencode"
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "opencode"
    # OpenCode reads plugin/ and plugins/ alike: join the one the user already has
    folder = "plugins" if (base / "plugins").is_dir() and not (base / "plugin").is_dir() else "plugin"
    return base / folder / PLUGIN_FILE


def plugin_dir() -> Path:
    """Where the opencode-hookgate package is: this checkout's, else the one installed with hookgate."""
    candidates = (
        Path(__file__).resolve().parents[2] / "opencode-plugin",
        Path(sys.prefix) / "share" / "hookgate" / "opencode-plugin",
    )
    for candidate in candidates:
        if (candidate / "index.js").is_file():
            return candidate
    raise ValueError("the opencode-hookgate plugin files were not found next to this hookgate "
                     f"(looked in {', '.join(map(str, candidates))}); reinstall hookgate")


def render(command: str) -> str:
    argv = [*shlex.split(command), "serve", "--stdio"]
    entry = (plugin_dir() / "index.js").as_uri()
    return (
        f"{MARKER}; `hookgate uninstall opencode` removes it.\n"
        f"import {{ HookgatePlugin }} from {json.dumps(entry)}\n\n"
        "// OpenCode calls every export of this file as a plugin\n"
        f"export const Hookgate = (input) => HookgatePlugin(input, {{ command: {json.dumps(argv)} }})\n"
    )


def install(path: Path, command: str) -> bool:
    text = render(command)
    if path.exists():
        current = _read_ours(path)
        if current == text:
            return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.hookgate.tmp")
    tmp.write_text(text)
    tmp.replace(path)
    return True


def uninstall(path: Path) -> bool:
    if not path.exists():
        return False
    _read_ours(path)
    path.unlink()
    for folder in (path.parent, path.parent.parent):  # the folders install made, if nothing else is in them
        try:
            folder.rmdir()
        except OSError:
            break
    return True


def installed(path: Path) -> bool:
    """Whether hookgate's registration is there (for doctor)."""
    return path.is_file() and path.read_text(errors="replace").startswith(MARKER)


def _read_ours(path: Path) -> str:
    text = path.read_text(errors="replace")
    if not text.startswith(MARKER):
        raise ValueError(f"{path} exists and was not written by hookgate; move it away (nothing was changed)")
    return text
