"""Where a project's pipeline state lives and in which format: hookgate's own `.hookgate/`, or
GodotMaker's `.godotmaker/` read and written in place (seed 000's files, so GodotMaker's skills,
Resume Checks and reporter keep working). The layouts are data (layouts.json, JSON so that the
hook path reads it with the decoder it has loaded anyway); which one governs a project is decided
once, from its root and config, before anything reads a state file.

In a layout, paths are relative to its folder `dir`, and `{session}` is the session's directory
name. GodotMaker keeps one session's records at a time: `metrics_current.jsonl` and `state.json`
are emptied at every SessionStart, and its counters are flat keys of `state.json` (`counters`
maps hookgate's block budgets to GodotMaker's names for the same budgets; hookgate's other
session state sits beside them under `hookgate`, which GodotMaker never reads). `field_aliases`
repeats a metrics field under the name GodotMaker's reporter reads (its hook_block names a hook)."""

from functools import lru_cache
from pathlib import Path

import msgspec

HOOKGATE = "hookgate"
GODOTMAKER = "godotmaker"
_DATA = Path(__file__).with_name("layouts.json")


class Layout(msgspec.Struct, frozen=True, kw_only=True):
    name: str = HOOKGATE
    dir: str
    role: str
    stage_log: str
    stage_schemas: str
    session_metrics: str
    session_state: str
    notices: str
    decisions: str  # every decided event of the session (hookgate explain, replay); hookgate's own
    role_owner: str  # which session set the active role (pipeline/session.py)
    lifetime_metrics: str
    reports: str
    banner: str
    banner_untagged: str = ""
    version_file: str | None = None
    flat_counters: bool = False
    counters: dict[str, str] = {}
    field_aliases: dict[str, str] = {}

    def counter_key(self, key: str) -> str:
        """The name this layout's state file gives a counter (GodotMaker's own keys for the
        budgets it shares with hookgate; any other counter keeps hookgate's name)."""
        for pattern, name in self.counters.items():
            prefix, _, suffix = pattern.partition("{scope}")
            if "{scope}" not in pattern:
                if key == pattern:
                    return name
            elif key.startswith(prefix) and key.endswith(suffix) and len(key) >= len(prefix) + len(suffix):
                return name.replace("{scope}", key[len(prefix):len(key) - len(suffix)])
        return key


@lru_cache(maxsize=None)
def layouts() -> dict[str, Layout]:
    data = msgspec.json.decode(_DATA.read_bytes())
    return {name: msgspec.convert({"name": name, **table}, Layout) for name, table in data.items()}


def layout(name: str) -> Layout:
    return layouts()[name]


def choose(root: Path, compat: str | None) -> Layout:
    """GodotMaker mode when the config says `compat = "godotmaker"`, or when the project has a
    `.godotmaker/` and no `.hookgate/` (then hookgate creates no `.hookgate/` of its own)."""
    if compat is not None:
        return layout(compat)
    godotmaker = layout(GODOTMAKER)
    if (root / godotmaker.dir).is_dir() and not (root / layout(HOOKGATE).dir).is_dir():
        return godotmaker
    return layout(HOOKGATE)
