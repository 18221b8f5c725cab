"""hookgate: one hook policy engine for Claude Code, Codex and OpenCode.

Kept empty of imports on purpose: `hookgate hook ...` runs on every tool call of every agent,
and everything imported here would be paid for each time. The public API below is imported on
first use (`from hookgate import register_hook`), never by `import hookgate` itself.
"""

__version__ = "0.1.0"

# name -> the module that defines it
_PUBLIC = {
    name: "hookgate.python_hooks"
    for name in ("register_hook", "hook_count", "unregister_hook", "block", "retry", "skip", "modify",
                 "hook_denied", "HookMatcher", "HookOptions", "HookError", "EVENT_MAP")
}


def __getattr__(name: str) -> object:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'hookgate' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
