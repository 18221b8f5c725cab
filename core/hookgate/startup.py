"""The registered hook command starts Python without `site` (core/bin/hookgate): it puts the
site-packages it was installed into on sys.path, which holds hookgate and, in the usual install,
msgspec. That is all a decision of hookgate's own gates needs; what may need more asks for the
sys.path a plain start has first: a project's Python policies, which may import anything
(hookgate.python_hooks.load), and a decision whose msgspec lives elsewhere (hookgate.client).
A decision made in that process also imports msgspec without typing_extensions, and pathlib
without what it needs for URIs alone."""

import sys

# whether this process's msgspec was imported with typing_extensions hidden (import_msgspec_lightly)
_msgspec_lacks_typing_extensions = False


def complete_sys_path() -> None:
    """Run what a plain start would have run (venv, .pth files, user site), once."""
    if sys.flags.no_site and "site" not in sys.modules:
        import site

        site.main()


def import_pathlib_lightly() -> None:
    """Import pathlib without urllib.parse, for an in-process decision.

    Before Python 3.14, pathlib imports urllib.parse (and through it ipaddress) when it loads,
    for Path.as_uri alone (bpo-33440 proposed deferring it; 3.14 does): measured here, 3.6 ms of
    a bare `python -S` after msgspec and 1-2 ms of a whole cold call, for a method no gate calls.
    pathlib is imported with a stand-in that holds the one name it takes, which imports the real
    module the first time it is called. The stand-in is gone from sys.modules once pathlib is
    loaded, so anything that imports urllib.parse later gets the real module; a pathlib that wants
    more of it than that name is imported the plain way."""
    if "pathlib" in sys.modules or "urllib.parse" in sys.modules:
        return

    def quote_from_bytes(*args: object, **kwargs: object) -> str:
        from urllib.parse import quote_from_bytes as real

        return real(*args, **kwargs)  # type: ignore[arg-type]

    stand_in = type(sys)("urllib.parse")
    stand_in.quote_from_bytes = quote_from_bytes  # type: ignore[attr-defined]
    sys.modules["urllib.parse"] = stand_in
    try:
        import pathlib  # noqa: F401
    except ImportError:
        pass
    finally:
        if sys.modules.get("urllib.parse") is stand_in:
            del sys.modules["urllib.parse"]
    import pathlib  # noqa: F401,F811 (loaded above, or the plain way if the stand-in was not enough)


def import_msgspec_lightly() -> None:
    """Import msgspec as it imports where typing_extensions is not installed. Raises ImportError
    when msgspec is not on the path.

    msgspec's first import looks for typing_extensions, to know the typing forms newer than the
    interpreter's, and typing_extensions imports inspect, ast and dis: measured here, a fifth of
    `python -S -c "import msgspec"` (39.5 ms against 51.1, median of 100 interleaved runs), paid
    by every cold call. It is installed for another package (watchfiles' anyio), not for hookgate,
    whose types are all `typing`'s. It is hidden while msgspec loads and can be imported as usual
    afterwards; a project's policy may hand msgspec typing_extensions' forms, so loading one gives
    them back to msgspec first (msgspec_as_imported)."""
    global _msgspec_lacks_typing_extensions
    if "msgspec" not in sys.modules and "typing_extensions" not in sys.modules:
        sys.modules["typing_extensions"] = None  # type: ignore[assignment]  # import raises ImportError
        try:
            import msgspec  # noqa: F401

            _msgspec_lacks_typing_extensions = True
        except ImportError:  # not on the path, or a msgspec that cannot do without typing_extensions
            pass
        finally:
            if sys.modules.get("typing_extensions", False) is None:
                del sys.modules["typing_extensions"]
    import msgspec  # noqa: F401,F811 (loaded above, or the plain way; ImportError where there is none)


def msgspec_as_imported() -> None:
    """msgspec as a plain import would have left it, before a project's policy runs: its helper
    module, which alone reads typing_extensions, is run again with typing_extensions visible (its
    functions already handed out see the new names: they share the module's namespace)."""
    global _msgspec_lacks_typing_extensions
    if not _msgspec_lacks_typing_extensions:
        return
    _msgspec_lacks_typing_extensions = False
    try:
        import typing_extensions  # noqa: F401
    except ImportError:  # not installed: msgspec is as it would be anyway
        return
    import importlib

    import msgspec._utils

    importlib.reload(msgspec._utils)
