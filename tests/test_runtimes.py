"""The runtime registry: every plug has the same faces, a lifecycle column and a capability table,
and everything that lists runtimes lists the registry's."""

from __future__ import annotations

import importlib.util

import pytest

from hookgate import lifecycle
from hookgate.parity.capabilities import tables as capability_tables
from hookgate.runtimes import NAMES, PLUGS, STDIN, plug


@pytest.mark.parametrize("entry", PLUGS, ids=lambda p: p.name)
def test_every_plug_has_the_same_faces(entry):
    install = entry.module("install")
    assert all(callable(getattr(install, name)) for name in ("config_path", "install", "uninstall"))
    checks = entry.module("checks")
    assert checks.CHECKS and all(callable(getattr(checks, function)) for _, function in checks.CHECKS)
    assert callable(checks.installs)
    entry.module("limits")
    assert callable(entry.module("demo").play)
    has_dialect = importlib.util.find_spec(f"{entry.package}.dialect") is not None
    assert has_dialect == entry.stdin
    if entry.stdin:
        dialect = entry.module("dialect")
        assert dialect.runtime == entry.name and callable(dialect.decode) and callable(dialect.render)


def test_every_runtime_has_a_lifecycle_column_and_a_capability_table():
    assert {name for name in NAMES if lifecycle.for_runtime(name)} == set(NAMES)
    assert list(dict.fromkeys(table.runtime for table in capability_tables())) == list(NAMES)


def test_the_stop_cap_the_engine_is_handed_is_the_one_every_table_records():
    """The engine gets the cap from the plug (no TOML read on the hook path); each version's table
    records what was measured. A version whose cap differs must change the plug's number too."""
    from hookgate.runtimes import stop_block_caps

    caps = stop_block_caps()
    for table in capability_tables():
        recorded = table.limits.get("stop_block_cap")
        assert recorded == caps.get(plug(table.runtime).title), table.key


def test_a_lifecycle_column_of_no_runtime_is_refused():
    with pytest.raises(ValueError, match="unknown field `kiro`"):
        lifecycle._registration({"id": "x", "event": "Stop", "timeout": 1, "contract_test": "t", "kiro": "stop"})


def test_the_commands_take_the_registrys_runtimes(tmp_path):
    from hookgate.client import USAGE

    assert USAGE.startswith(f"usage: hookgate hook {'|'.join(STDIN)} ")
    assert STDIN == ("claude", "codex", "gemini") and NAMES == ("claude", "codex", "gemini", "opencode")
    with pytest.raises(KeyError, match="unknown runtime 'kiro'"):
        plug("kiro")


def test_an_event_of_an_unknown_runtime_is_refused():
    from hookgate.errors import PayloadError
    from hookgate.model.codec import event_from_builtins

    assert event_from_builtins({"hook_event_name": "Stop", "runtime": "opencode"}).runtime == "opencode"
    with pytest.raises(PayloadError, match="unknown runtime 'kiro'"):
        event_from_builtins({"hook_event_name": "Stop", "runtime": "kiro"})
