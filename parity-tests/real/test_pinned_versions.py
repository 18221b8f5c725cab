"""Each capability table's version is the binary the real tier runs for it."""

from __future__ import annotations

import subprocess

import pytest

from harness.runtimes import binary
from hookgate.parity.capabilities import runtimes

pytestmark = pytest.mark.real


@pytest.mark.parametrize("table", runtimes(), ids=lambda t: t.key)
def test_the_binary_run_for_a_table_is_its_version(table) -> None:
    done = subprocess.run([binary(table.command, table.version), "--version"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and table.version in done.stdout.split(), done.stdout + done.stderr
