"""hookgate.paths.resolved is os.path.realpath from the kernel: the same answer on real trees of
folders, symlinks (relative, absolute, dangling, looping, chained) and missing parts, and nothing
remembered, so a symlink swapped between two calls is followed by the second."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from hookgate.paths import readings, resolved

NAMES = ["a", "b", "c", "..", ".", "new"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src" / "deep").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "src" / "player.gd").write_text("x")
    (root / "docs" / "to_src").symlink_to("../src")  # relative, to a folder
    (root / "docs" / "abs_src").symlink_to(root / "src")  # absolute
    (root / "docs" / "file_link").symlink_to(root / "src" / "player.gd")
    (root / "docs" / "dangling").symlink_to(root / "nowhere" / "x.gd")
    (root / "docs" / "loop").symlink_to("loop")
    (root / "docs" / "chain").symlink_to("to_src")  # a link to a link
    (root / "outside").symlink_to(tmp_path)
    return root


CASES = [
    "src/player.gd", "src/new.gd", "docs/to_src/player.gd", "docs/to_src/new.gd", "docs/abs_src/deep/x",
    "docs/file_link", "docs/dangling", "docs/loop", "docs/loop/x", "docs/chain/player.gd",
    "docs/to_src/../docs/x", "docs/to_src/..", "docs/to_src/.", "missing/dir/x.gd", "outside/proj/src/x",
    "src/player.gd/x", "docs/to_src/deep/../../README", "src//deep///x", "", "missing/../src/x",
    "docs/dangling/x.gd", "docs/dangling/more/x.gd", "docs/to_src/missing/deeper/x", "src/player.gd/more/x",
    "docs/loop/more/x", "missing/./x", "missing/x/",
]


@pytest.mark.parametrize("rel", CASES)
def test_resolved_is_realpath(tree: Path, rel: str) -> None:
    path = os.path.join(str(tree), rel)
    assert resolved(path) == os.path.realpath(path)


def test_a_symlink_swapped_between_two_calls_is_followed_by_the_second(tree: Path) -> None:
    target = str(tree / "docs" / "swap" / "player.gd")
    (tree / "docs" / "swap").mkdir()
    assert resolved(target) == target
    assert readings(target, str(tree), [str(tree)]) == ("docs/swap/player.gd",)
    (tree / "docs" / "swap").rmdir()
    (tree / "docs" / "swap").symlink_to(tree / "src")  # the folder becomes a way into src/
    assert resolved(target) == str(tree / "src" / "player.gd")
    assert readings(target, str(tree), [str(tree)]) == ("docs/swap/player.gd", "src/player.gd")
    (tree / "docs" / "swap").unlink()
    (tree / "docs" / "swap").symlink_to(tree / "docs")  # swapped again, to another place
    assert readings(target, str(tree), [str(tree)]) == ("docs/swap/player.gd", "docs/player.gd")
    last = tree / "docs" / "name.gd"
    assert resolved(str(last)) == str(last)
    last.symlink_to(tree / "src" / "player.gd")  # the last component becomes a link
    assert resolved(str(last)) == str(tree / "src" / "player.gd")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.sampled_from(NAMES), min_size=1, max_size=6), links=st.lists(
    st.tuples(st.sampled_from(["a", "b", "c", "a/b", "b/c"]), st.sampled_from(["..", ".", "a", "b/c", "/", "x/y", "c"])),
    max_size=4))
def test_resolved_agrees_with_realpath_on_random_trees(tmp_path_factory: pytest.TempPathFactory,
                                                      parts: list[str], links: list[tuple[str, str]]) -> None:
    root = tmp_path_factory.mktemp("t")
    (root / "x").mkdir()
    for where, to in links:
        place = root / where
        if not os.path.realpath(place.parent).startswith(str(root)):
            continue  # a link made earlier leads out of the tree: nothing is made outside it
        try:
            place.parent.mkdir(parents=True, exist_ok=True)
            place.symlink_to(to)
        except OSError:  # taken already: the tree is what it is
            pass
    path = os.path.join(str(root), *parts)
    assert resolved(path) == os.path.realpath(path)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd") or not hasattr(os, "O_PATH"), reason="Linux only")
def test_the_kernel_answers_where_it_can(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparisons above would pass if resolved() were realpath itself: here it may not call it."""
    expected = {rel: os.path.realpath(os.path.join(str(tree), rel))
                for rel in ("src/player.gd", "src/new.gd", "docs/to_src/new.gd", "docs/chain/player.gd",
                            "missing/dir/x.gd", "docs/to_src/missing/deeper/x")}

    def refuse(path: str) -> str:
        raise AssertionError(f"realpath called for {path}")

    monkeypatch.setattr(os.path, "realpath", refuse)
    for rel, real in expected.items():
        assert resolved(os.path.join(str(tree), rel)) == real
