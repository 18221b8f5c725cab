"""The proof map the package ships (hookgate/parity/proofs.json) is what the test suite says, and
every test it names is one pytest collects."""

from __future__ import annotations

import subprocess
import sys

from hookgate.parity.proofs import PROOFS, claims
from proofmap import ROOT, rendered


def test_the_shipped_proof_map_is_current() -> None:
    assert PROOFS.read_text() == rendered(), \
        "proofs.json drifted: regenerate it with `python parity-tests/proofmap.py` (then PARITY.md)"


def test_every_test_the_map_names_is_collected() -> None:
    named = {claim.test for claim in claims()}
    files = sorted({test.partition("::")[0] for test in named})
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    collected = {line.strip() for line in done.stdout.splitlines() if "::" in line}
    assert collected, done.stdout + done.stderr
    missing = [test for test in named
               if test not in collected and not any(c.startswith(test + "[") for c in collected)]
    assert missing == []
