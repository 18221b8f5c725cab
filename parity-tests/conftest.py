from __future__ import annotations

import pytest

from harness.fakemodel import FakeModel


@pytest.fixture
def fake_model():
    with FakeModel() as model:
        yield model
