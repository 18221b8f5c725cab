"""The ledger names an allowed write by the project-relative forms the effect check's scan uses:
as named and as resolved, against the root as named and as resolved (effect/ledger.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hookgate.effect.ledger import relative_forms


def by_relpath(path: str, root: str, cwd: str) -> tuple[str, ...]:
    """The same forms by os.path.relpath and realpath, the plain way."""
    joined = os.path.join(cwd, path)
    bases = list(dict.fromkeys((os.path.normpath(root), os.path.realpath(root))))
    forms = []
    for absolute in (os.path.normpath(joined), os.path.realpath(joined)):
        for base in bases:
            rel = os.path.relpath(absolute, base)
            if rel != ".." and not rel.startswith("../"):
                forms.append(rel.lower())
    return tuple(dict.fromkeys(forms))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A project reached through a symlink, with a linked folder inside and one pointing out."""
    real = tmp_path / "real-game"
    (real / "src").mkdir(parents=True)
    (real / "docs").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "game").symlink_to(real)
    (real / "linked").symlink_to(real / "src")
    (real / "away").symlink_to(tmp_path / "outside")
    (real / "src" / "Player.GD").write_text("x")
    return tmp_path


@pytest.mark.parametrize("path", ["src/Player.GD", "src/new.gd", "linked/new.gd", "away/x.gd", "../outside/x.gd",
                                  "docs/../src/a.gd", "..foo", "...", "./src", ".", "missing/deeper/a.gd",
                                  "/etc/passwd", "src//a.gd"])
@pytest.mark.parametrize("root_name", ["game", "real-game"])
def test_the_forms_are_relpaths_of_the_path_as_named_and_resolved(tree: Path, path: str, root_name: str) -> None:
    root = str(tree / root_name)
    for cwd in (root, os.path.join(root, "src")):
        assert relative_forms(path, root, cwd) == by_relpath(path, root, cwd), (path, cwd)


def test_a_name_that_begins_with_two_dots_is_inside_the_project(tree: Path) -> None:
    """`..foo` is a file of the project, not a way out of it: the ledger names it."""
    assert relative_forms("..foo", str(tree / "real-game")) == ("..foo",)
