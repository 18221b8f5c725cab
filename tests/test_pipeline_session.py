"""session_start and check_asset_access, through the Claude stdin protocol."""

import os

import pytest

from hookgate import __version__
from pipeline_support import Pipeline


@pytest.fixture
def pipe(tmp_path):
    return Pipeline(tmp_path)


# -- session_start ------------------------------------------------------------------------------

def test_session_start_names_hookgate_its_preset_and_the_role(pipe):
    assert pipe.session_start().context == f"[hookgate v{__version__}] preset: godot"
    pipe.role("build")
    assert pipe.session_start().context == f"[hookgate v{__version__}] preset: godot; pipeline role: build"


def test_session_start_resets_this_sessions_counters_and_log(pipe):
    pipe.role("build").ready_to_dispatch()
    pipe.run_subagent("w", "", "worker")
    assert pipe.stop().blocked
    pipe.session_start("clear")
    assert [m["event"] for m in pipe.metrics()] == ["session_start"]
    assert "pipeline" not in pipe.state() and "counters" not in pipe.state()
    assert not pipe.stop().blocked  # no worker in this session any more


def test_other_sessions_are_left_alone(tmp_path):
    first, second = Pipeline(tmp_path, "one"), Pipeline(tmp_path, "two")
    first.role("build").ready_to_dispatch()
    first.run_subagent("w", "", "worker")
    second.session_start()
    assert first.state()["pipeline"]["roles"] == {"worker": 1}


def test_compaction_continues_the_session(pipe):
    pipe.role("build").ready_to_dispatch()
    pipe.run_subagent("w", "", "worker")
    pipe.session_start("compact")
    assert pipe.state()["pipeline"]["roles"] == {"worker": 1}
    assert pipe.stop().blocked
    assert (pipe.root / ".hookgate" / "current_role").exists()


def _touch_later(path):
    """Make sure a rewrite gets a new mtime even on coarse clocks."""
    stamp = path.stat().st_mtime_ns + 10_000_000
    os.utime(path, ns=(stamp, stamp))


def test_a_role_set_before_the_session_is_kept(pipe):
    pipe.role("build")
    pipe.session_start()
    assert (pipe.root / ".hookgate" / "current_role").exists()


def test_a_role_left_by_an_ended_session_is_dropped(pipe):
    pipe.role("build")
    pipe.session_start()
    pipe.call({"hook_event_name": "SessionEnd", "reason": "other"})
    later = Pipeline(pipe.root, "s2")
    later.session_start()
    assert not (pipe.root / ".hookgate" / "current_role").exists()
    assert later.metrics("session_start")[0]["dropped_role"] == "build"
    assert "pipeline role" not in later.session_start().context


def test_a_role_set_after_the_last_session_ended_is_kept(pipe):
    pipe.role("gdd")
    pipe.call({"hook_event_name": "SessionEnd", "reason": "other"})
    pipe.role("build")  # the next /gm-* skill, or the user, set a fresh role
    _touch_later(pipe.root / ".hookgate" / "current_role")
    Pipeline(pipe.root, "s2").session_start()
    assert (pipe.root / ".hookgate" / "current_role").read_text().strip() == "build"


def test_a_role_written_during_a_session_is_stale_at_the_next(pipe):
    pipe.session_start()
    pipe.role("evaluate")  # a /gm-* skill's first action: a Write of the role file, which then ends
    pipe.call({"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_response": {},
               "tool_input": {"file_path": str(pipe.root / ".hookgate" / "current_role"), "content": "evaluate\n"}})
    pipe.call({"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
    Pipeline(pipe.root, "s2").session_start("resume")
    assert not (pipe.root / ".hookgate" / "current_role").exists()


# -- check_asset_access -------------------------------------------------------------------------

# role, who reads, path, allowed?
ASSET_TABLE = [
    ("build", None, "assets/hero.png", False),
    ("asset", None, "assets/ui/button.PNG", False),
    ("gdd", None, "game/assets/tiles.webp", False),
    ("build", None, "{root}/assets/a.jpeg", False),
    ("build", None, "src/../assets/a.svg", False),
    ("build", None, "assets/link_to_png", True),    # not an image by name (the link target is checked below)
    *[("build", None, f"assets/x{ext}", False) for ext in (".jpg", ".gif", ".bmp", ".tga")],
    ("build", None, "assets/data.json", True),      # not an image
    ("build", None, "assets/music.ogg", True),
    ("build", None, "src/icon.png", True),          # an image outside assets/
    ("build", ("a1", "analyst"), "assets/hero.png", True),   # subagents may read
    ("build", ("a2", "general-purpose"), "assets/hero.png", True),
    (None, None, "assets/hero.png", True),          # no pipeline role: ordinary conversation
]


@pytest.mark.parametrize("role, agent, path, allowed", ASSET_TABLE)
def test_asset_read_rule(pipe, role, agent, path, allowed):
    pipe.role(role)
    answer = pipe.tool("Read", agent, file_path=path.format(root=pipe.root))
    assert answer.blocked != allowed, answer
    if not allowed:
        name = os.path.basename(path)
        assert answer.reason == (f"The dispatching role cannot read image files in assets/ directly. "
                                 f"Dispatch an analyst subagent to analyze '{name}' instead.")


def test_a_link_into_assets_is_judged_where_it_lands(pipe):
    pipe.role("build")
    pipe.write("assets/hero.png")
    os.symlink(pipe.root / "assets" / "hero.png", pipe.root / "preview.png")
    assert pipe.tool("Read", file_path="preview.png").blocked


def test_asset_folders_and_extensions_are_config(pipe):
    (pipe.root / ".hookgate" / "config.toml").write_text(
        '[pipeline.paths]\nart = ["art/*"]\n[pipeline.asset_read]\nfolders = ["@art"]\nextensions = [".psd"]\n')
    pipe.role("build")
    assert pipe.tool("Read", file_path="art/hero.psd").blocked
    assert not pipe.tool("Read", file_path="assets/hero.png").blocked
