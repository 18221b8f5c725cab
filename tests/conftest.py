from __future__ import annotations

from pathlib import Path

import pytest

from hookgate.config.load import load_config
from hookgate.engine.context import Context
from hookgate.store.project import Project
from support import MemorySession


@pytest.fixture(autouse=True)
def _own_session_pins(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test keeps its sessions' pinned roots (hookgate.store.pin) to itself: tests reuse
    session ids like "s1", and a pin left by another test would govern this one."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


@pytest.fixture
def project(tmp_path: Path) -> Project:
    (tmp_path / ".hookgate").mkdir()
    return Project(tmp_path)


@pytest.fixture
def ctx(project: Project) -> Context:
    return Context(project=project, session=MemorySession(), config=load_config(project.config_path))
