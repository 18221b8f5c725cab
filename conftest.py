"""What every test of both suites (tests/, parity-tests/) shares: hookgate's state outside the
project (session pins, effect stores) kept in temporary folders, never in the user's home."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def _own_state_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """For the module- and session-wide fixtures too, which run before any test's own: a project a
    fixture sets up would otherwise leave its effect store in the home of whoever runs the suite."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state-shared")))
        yield


@pytest.fixture(autouse=True)
def _own_session_pins(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test keeps its sessions' pinned roots (hookgate.store.pin) to itself: tests reuse
    session ids like "s1", and a pin left by another test would govern this one."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
