from __future__ import annotations

import os

import pytest

from harness.fakemodel import FakeModel

# every project a test makes gets a warm core at its first hook call (hookgate.warm): let them go soon
os.environ.setdefault("HOOKGATE_WARM_IDLE", "10")


@pytest.fixture
def fake_model():
    with FakeModel() as model:
        yield model
