"""The registered hook command starts Python without `site` (core/bin/hookgate): it puts the
site-packages it was installed into on sys.path, which holds hookgate and, in the usual install,
msgspec. That is all a decision of hookgate's own gates needs; what may need more asks for the
sys.path a plain start has first: a project's Python policies, which may import anything
(hookgate.python_hooks.load), and a decision whose msgspec lives elsewhere (hookgate.client).
A decision made in that process also imports msgspec without what no decision uses of it, and
pathlib without what it needs for URIs alone."""

import sys

TYPE_CHECKING = False  # typing's own flag, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Callable


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
    """Import msgspec with less than a plain import loads: what no decision uses is stood in for
    while it loads (STOOD_IN). Raises ImportError when msgspec is not on the path.

    - typing_extensions: msgspec's first import looks for it, to know the typing forms newer than
      the interpreter's, and it imports inspect, ast and dis: measured here, a fifth of
      `python -S -c "import msgspec"` (39.5 ms against 51.1, median of 100 interleaved runs). It is
      installed for another package (watchfiles' anyio), not for hookgate, whose types are all
      `typing`'s; hidden, msgspec loads as where it is not installed.
    - msgspec.inspect and msgspec._json_schema (with textwrap): msgspec's package imports its type
      introspection and JSON Schema helpers with it; they load on first use instead.
    - platform: uuid, which msgspec's core imports for the UUID type, asks it the system's name once.

    A stand-in is out of sys.modules once msgspec is loaded: anything imported later is the real
    module, and anything asked of a stand-in afterwards is the real module's. A project's policy may
    hand msgspec typing_extensions' forms or use the helpers, so loading one gives msgspec back its
    real parts first (msgspec_as_imported). A msgspec that cannot load so is imported the plain way."""
    if "msgspec" not in sys.modules:
        stand_ins = {name: make() for name, make in STOOD_IN.items() if name not in sys.modules}
        sys.modules.update(stand_ins)  # type: ignore[arg-type]  # None: its import raises ImportError
        try:
            import msgspec  # noqa: F401

            _stood_in.update(stand_ins)
        except ImportError:  # not on the path, or a msgspec that cannot do without one of them
            pass
        finally:
            for name, stand_in in stand_ins.items():
                if sys.modules.get(name, False) is stand_in:
                    del sys.modules[name]
    import msgspec  # noqa: F401,F811 (loaded above, or the plain way; ImportError where there is none)


def msgspec_as_imported() -> None:
    """msgspec as a plain import would have left it, before a project's policy runs: its helper
    module, which alone reads typing_extensions, is run again with typing_extensions visible (its
    functions already handed out see the new names: they share the module's namespace), and its
    package and json module take the real helpers in place of the stand-ins."""
    if not _stood_in:
        return
    stood_in = set(_stood_in)
    _stood_in.clear()
    import importlib

    import msgspec

    if "typing_extensions" in stood_in:
        try:
            import typing_extensions  # noqa: F401
        except ImportError:  # not installed: msgspec is as it would be anyway
            pass
        else:
            import msgspec._utils

            importlib.reload(msgspec._utils)
    if {"msgspec.inspect", "msgspec._json_schema"} & stood_in:
        msgspec.inspect = importlib.import_module("msgspec.inspect")  # the package held the stand-in
        importlib.reload(msgspec.json)  # its schema functions, the real ones


def _stand_in(name: str, **own: object) -> object:
    """A module standing in for `name` while msgspec loads: `own` are its attributes; any other
    name asked of it is the real module's, imported then (PEP 562's module __getattr__)."""
    stand_in = type(sys)(name)

    def real_attribute(attribute: str) -> object:
        if attribute.startswith("__"):  # what the import system asks of any module (__path__, ...)
            raise AttributeError(attribute)
        return getattr(_real(name), attribute)

    setattr(stand_in, "__getattr__", real_attribute)
    stand_in.__dict__.update(own, __stand_in__=True)
    return stand_in


def _called_from(name: str, function: str) -> object:
    """`function` of module `name`, imported when it is first called (a name taken with `from ...
    import`, which a stand-in must hold itself)."""
    def call(*args: object, **kwargs: object) -> object:
        return getattr(_real(name), function)(*args, **kwargs)

    call.__name__ = call.__qualname__ = function
    return call


def _real(name: str) -> object:
    """The real module `name`, imported if need be (its stand-in, if still listed, taken out first)."""
    if getattr(sys.modules.get(name), "__stand_in__", False):
        del sys.modules[name]
    return __import__(name, fromlist=["_"])


def _system() -> str:
    import posix  # built in: loaded with the interpreter

    return posix.uname().sysname  # what platform.system() answers wherever uuid asks it


STOOD_IN: "dict[str, Callable[[], object]]" = {
    "typing_extensions": lambda: None,
    "msgspec.inspect": lambda: _stand_in("msgspec.inspect"),
    # msgspec.json takes these two by name
    "msgspec._json_schema": lambda: _stand_in("msgspec._json_schema",
                                               schema=_called_from("msgspec._json_schema", "schema"),
                                               schema_components=_called_from("msgspec._json_schema",
                                                                              "schema_components")),
    "platform": lambda: _stand_in("platform", system=_system),
}
# what this process's msgspec was imported without (import_msgspec_lightly), until given back
_stood_in: set[str] = set()
