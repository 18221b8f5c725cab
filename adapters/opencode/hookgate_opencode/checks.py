"""`hookgate doctor`'s check of OpenCode: hookgate's plugin file in the project's and the user's
OpenCode config, against what install writes today."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

from hookgate.checks import Finding, Installs, Setup, reinstall

from . import install

CHECKS = (("opencode", "check_opencode"),)


def installs(setup: Setup) -> Installs:
    """OpenCode loads every plugin file it finds, so two of them decide every call twice."""
    return Installs(install.config_path(setup.project), install.config_path(None),
                    lambda path: [("plugin", str(path))] if install.installed(path) else [], identical_once=False)


def check_opencode(setup: Setup) -> list[Finding]:
    """`hookgate doctor`: hookgate's plugin file in the project's and the user's OpenCode config,
    checked against what install writes today (the plugin it imports, the hookgate it starts)."""
    findings = []
    for where, path in (("project", install.config_path(setup.project)), ("user", install.config_path(None))):
        if not path.exists():
            continue
        fix = reinstall("opencode", where, setup.project)
        if not install.installed(path):
            findings.append(Finding("fail", f"{path} was not written by hookgate, so hookgate is not loaded there",
                                    f"move it away, then: {fix}"))
            continue
        text = path.read_text(errors="replace")
        entry = re.search(r'^import \{ HookgatePlugin \} from "(file://[^"]+)"', text, re.M)
        command = re.search(r"command: (\[.*\]) \}\)", text)
        plugin = Path(unquote(urlparse(entry.group(1)).path)) if entry else None
        argv = json.loads(command.group(1)) if command else []
        if plugin is None or not plugin.is_file():
            findings.append(Finding("fail", f"{path} imports a plugin that is not there ({plugin}); OpenCode then "
                                            "fails to load it and runs without hookgate", fix))
        elif not argv or not os.access(argv[0], os.X_OK):
            findings.append(Finding("fail", f"{path} starts {argv[0] if argv else 'nothing'}, which does not exist; "
                                            "every gate then takes its fail mode", fix))
        else:
            findings.append(Finding("ok", f"{path}: the plugin and {argv[0]}"))
    return findings or [Finding("info", "not installed for OpenCode", reinstall("opencode", "project", setup.project))]
