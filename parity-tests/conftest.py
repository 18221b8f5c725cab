from __future__ import annotations

import pytest

from harness.fakemodel import FakeModel


@pytest.fixture(autouse=True)
def _own_session_pins(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test keeps its sessions' pinned roots (hookgate.store.pin) to itself: tests reuse
    session ids like "s1", and a pin left by another test would govern this one."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


@pytest.fixture
def fake_model():
    with FakeModel() as model:
        yield model
