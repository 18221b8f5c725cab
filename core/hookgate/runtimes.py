"""The runtimes hookgate plugs into: one line each, everything else iterates this.

A runtime is one plug, a package of its own (adapters/<runtime>/hookgate_<runtime>/) with the
same faces in every plug:

    dialect   its stdin payloads in, its answers out (stdin runtimes only: Claude Code, Codex, Gemini CLI)
    install   config_path / install / uninstall (and optional notes) of its registration
    checks    `hookgate doctor`'s checks of it (CHECKS), and where it registers hookgate (installs)
    limits    the runtime's own numbers the engine must respect (handed to it, never imported by it)
    demo      `hookgate demo`'s acts said as the runtime says them: play(acts, root, hookgate)

plus a column in the lifecycle matrix (lifecycle.toml: its name for each hook) and a capability
table per version (parity/runtimes/<runtime>-<version>.toml). The core never imports a plug: the faces are named here by
string and imported on first use, as pip's `commands_dict` does, so this module costs nothing on
the hook path (no imports at all: the warm client's path loads it too).
"""

TYPE_CHECKING = False  # typing's own flag, without importing typing on the hook path
if TYPE_CHECKING:
    from types import ModuleType


class Plug:
    """One runtime's line: its name (the canonical events' `runtime`), the name users know it by,
    its package, and whether it calls hookgate as a stdin command (and so has a dialect)."""

    __slots__ = ("name", "title", "package", "stdin", "plugin_install")

    def __init__(self, name: str, title: str, package: str, *, stdin: bool,
                 plugin_install: str | None = None) -> None:
        self.name = name
        self.title = title
        self.package = package
        self.stdin = stdin
        # the face `hookgate install --plugin` uses: what the runtime's plugin channel still needs
        # from hookgate (Codex: the review of the plugin's hooks); None: nothing
        self.plugin_install = plugin_install

    def module(self, face: str) -> "ModuleType":
        """The plug's `face` module (dialect, install, checks, limits, demo), imported on first use."""
        from importlib import import_module

        return import_module(f"{self.package}.{face}")

    def __repr__(self) -> str:
        return f"Plug({self.name!r}, {self.package!r})"


PLUGS = (
    Plug("claude", "Claude Code", "hookgate_claude", stdin=True),
    Plug("codex", "Codex", "hookgate_codex", stdin=True, plugin_install="plugin_trust"),
    Plug("gemini", "Gemini CLI", "hookgate_gemini", stdin=True),
    Plug("opencode", "OpenCode", "hookgate_opencode", stdin=False),
)
NAMES = tuple(plug.name for plug in PLUGS)
STDIN = tuple(plug.name for plug in PLUGS if plug.stdin)
PACKAGES = tuple(plug.package for plug in PLUGS)


def plug(name: str) -> Plug:
    for entry in PLUGS:
        if entry.name == name:
            return entry
    raise KeyError(f"unknown runtime {name!r}; known: {', '.join(NAMES)}")


def stop_block_caps() -> dict[str, int]:
    """runtime title -> how many consecutive Stop blocks it takes before it ends the turn by itself, for
    the runtimes that have such a cap (a stop gate's own bound must release first). The plugs'
    numbers are constants of their code: read once per process."""
    global _caps
    if _caps is None:
        found = {}
        for entry in PLUGS:
            cap = getattr(entry.module("limits"), "STOP_BLOCK_CAP", None)
            if isinstance(cap, int):
                found[entry.title] = cap
        _caps = found
    return dict(_caps)


_caps: dict[str, int] | None = None
