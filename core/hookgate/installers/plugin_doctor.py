"""What `hookgate doctor` checks of a runtime plugin install, whatever the runtime: that the
plugin finds a hookgate on PATH, and that hookgate is not also registered by `hookgate install`
for the same runtime (every call would then be decided twice)."""

from __future__ import annotations

import os
import shutil
from typing import Any, Iterable

from . import plugin_hooks


def findings(setup: Any, runtime: str, plugin_id: str, installed_by_hookgate: Iterable[str],
             uninstall_plugin: str) -> list[Any]:
    from ..cli.doctor import Finding

    found = []
    on_path = shutil.which(plugin_hooks.PROGRAM, path=setup.env.get("PATH", os.defpath))
    if on_path is None:
        found.append(Finding("fail", f"{runtime}: the {plugin_id} plugin is enabled but there is no hookgate on PATH: "
                                     "its gating events are refused until there is one",
                             "install hookgate (pip install . in a hookgate checkout) where this PATH finds it"))
    else:
        found.append(Finding("ok", f"{runtime}: the {plugin_id} plugin runs {on_path}"))
    places = sorted(set(installed_by_hookgate))
    if places:
        found.append(Finding("fail", f"{runtime}: hookgate is registered by the {plugin_id} plugin and by `hookgate "
                                     f"install` ({', '.join(places)}): every call is decided twice, so each block "
                                     "counts twice against its limit",
                             f"keep one: hookgate uninstall {runtime} --user / --project DIR, or {uninstall_plugin}"))
    return found
