from __future__ import annotations

from pathlib import Path

import pytest

from hookgate.config.load import load_config
from hookgate.engine.context import Context
from hookgate.store.project import Project
from support import MemorySession


@pytest.fixture
def project(tmp_path: Path) -> Project:
    (tmp_path / ".hookgate").mkdir()
    return Project(tmp_path)


@pytest.fixture
def ctx(project: Project) -> Context:
    return Context(project=project, session=MemorySession(), config=load_config(project.config_path))
