"""The scenario tier: every session of scenarios.py played on each pinned binary of each runtime
(the newest, and an older one where npm serves it) against the scripted fake model, through that
runtime's driver (drivers/<runtime>.py). One test per runtime, parametrized by version and matrix
row: each shows one cell of the parity matrix, by what the runs left behind (what reached the
model, the files, the metrics records, which of the user's own hooks ran or never did). Its
parameters are the cells the shipped proof map names (proofmap.py)."""

from __future__ import annotations

from typing import Iterator

import pytest
from pytest import mark

from drivers import claude, codex, gemini, opencode
from drivers.real import RealTiers
from proofmap import scenario_cells

pytestmark = mark.real


@pytest.fixture(scope="module")
def tiers(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[RealTiers]:
    played = RealTiers(tmp_path_factory.mktemp("scenarios"))
    yield played
    plugins = request.config.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
    if reporter and capture and played.timings():
        with capture.global_and_fixture_disabled():
            reporter.write_line("\n" + "\n".join(played.timings()))


def cells(runtime: str) -> pytest.MarkDecorator:
    params = scenario_cells(runtime)
    return mark.parametrize(("version", "row"), params, ids=[f"{version}-{row}" for version, row in params])


@cells("claude")
def test_claude(tiers: RealTiers, version: str, row: str) -> None:
    tiers.get(claude, version).show(row)


@cells("codex")
def test_codex(tiers: RealTiers, version: str, row: str) -> None:
    tiers.get(codex, version).show(row)


@cells("opencode")
def test_opencode(tiers: RealTiers, version: str, row: str) -> None:
    tiers.get(opencode, version).show(row)


@cells("gemini")
def test_gemini(tiers: RealTiers, version: str, row: str) -> None:
    tiers.get(gemini, version).show(row)
