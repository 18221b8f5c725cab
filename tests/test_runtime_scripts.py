"""The scripts the runtimes' commands run (hooks, MCP servers) are protected as what the runtime
runs by itself (config/runtime_scripts.py): which files a hook's command runs is found by really
running each command of a corpus, each script noting that it ran; a protected script is refused to
Write, to a shell command that writes it, and put back by the effect check."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from effect_support import Project
from hookgate.config import cache
from hookgate.config.runtime_scripts import script_patterns, settings_files
from hookgate.formats.jsonc import plain
from hookgate.rpc.reload import WatchSet
from hookgate.store.project import Project as StoreProject

SCRIPTS = ["scripts/lint.py", "tools/check.sh", "scripts/fmt.sh", "scripts/with space.sh", "tools/hookmod.py",
           "scripts/env.sh", "scripts/run.sh", "scripts/gemini_hook.py", "scripts/fmt[1].py", "scripts/notes.md",
           "~/bin/guard", "scripts/never.sh", "tools/b.sh", "tools/c.py", ".claude/worca/claude_hooks/skill_use.py",
           "~/.claude/hooks/sandbox-guard.sh"]
# hook commands as users register them; which scripts each one runs is what bash does with it
COMMANDS = [
    'python3 "$CLAUDE_PROJECT_DIR"/scripts/lint.py --fast',
    '"$CLAUDE_PROJECT_DIR/tools/check.sh"',
    "./tools/check.sh",
    "sh -c 'scripts/fmt.sh && ~/bin/guard'",
    'bash "${CLAUDE_PROJECT_DIR}/scripts/with space.sh"',
    'cd "$CLAUDE_PROJECT_DIR" && python3 scripts/lint.py',
    "python3 -m tools.hookmod",
    "source scripts/env.sh; scripts/run.sh",
    "$HOME/bin/guard",
    "env FOO=1 python3 scripts/lint.py",
    "python3 $GEMINI_PROJECT_DIR/scripts/gemini_hook.py",
    "bash -lc \"python3 '$CLAUDE_PROJECT_DIR/scripts/lint.py'\"",
    'python3 "scripts/fmt[1].py"',
    "echo ok",
    "test -f scripts/absent.sh && scripts/absent.sh || true",
    "echo scripts/notes.md",  # names a file it does not run
    "python3 scripts/lint.py scripts/notes.md",  # a file the script is given: data, not code
    "FOO=1 timeout 5 ./tools/check.sh",
    "cd tools && bash b.sh; eval 'python3 c.py'",
    "cat scripts/never.sh | grep -c x",
    "./tools/check.sh\nscripts/run.sh",  # two lines: two commands
    "env -u LANG python3 scripts/lint.py", "timeout -s KILL 5 ./tools/check.sh",  # a launcher's option with a value
    # published: agents that rewrote the guard a hook runs from a folder of its own (worca-cc #185),
    # a hook that runs its script only once the script exists (apache/magpie #786), a guard kept in
    # the home's hooks folder (ysa #13)
    '[ -f "$CLAUDE_PROJECT_DIR/.claude/worca/claude_hooks/skill_use.py" ] && '
    'python3 "$CLAUDE_PROJECT_DIR/.claude/worca/claude_hooks/skill_use.py" || true',
    "~/.claude/hooks/sandbox-guard.sh",
    # Claude Code's exec form: the program found on PATH, its arguments verbatim, the placeholders substituted
    {"command": "python3", "args": ["${CLAUDE_PROJECT_DIR}/scripts/lint.py"]},
    {"command": "./tools/check.sh", "args": ["--quick"]},
    {"command": "sh", "args": ["-c", "scripts/fmt.sh"]},
]


def _place(rel: str, root: Path, home: Path) -> Path:
    return home / rel[2:] if rel.startswith("~/") else root / rel


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    """A project and a home with the corpus's scripts, each noting in `ran/` that it ran."""
    root, home = tmp_path / "game", tmp_path / "home"
    (root / "ran").mkdir(parents=True)
    for rel in SCRIPTS:
        path = _place(rel, root, home)
        path.parent.mkdir(parents=True, exist_ok=True)
        marker = root / "ran" / rel.replace("/", "_")
        if path.suffix == ".py":
            path.write_text(f"open({str(marker)!r}, 'w').close()\n")
        else:
            path.write_text(f"#!/bin/sh\n: > '{marker}'\n")
            path.chmod(0o755)
    return root, home


def _ran(command: str | dict[str, Any], root: Path, home: Path) -> set[str]:
    for marker in (root / "ran").iterdir():
        marker.unlink()
    env = {**os.environ, "HOME": str(home), "CLAUDE_PROJECT_DIR": str(root), "GEMINI_PROJECT_DIR": str(root)}
    if isinstance(command, str):
        argv = ["bash", "-c", command]
    else:
        argv = [command["command"], *(arg.replace("${CLAUDE_PROJECT_DIR}", str(root)) for arg in command["args"])]
    subprocess.run(argv, cwd=root, env=env, capture_output=True, timeout=30)
    return {rel for rel in SCRIPTS if (root / "ran" / rel.replace("/", "_")).exists()}


def _protected(command: str | dict[str, Any], root: Path, home: Path) -> set[str]:
    settings = root / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    handler = {"type": "command", **({"command": command} if isinstance(command, str) else command)}
    settings.write_text(json.dumps({"hooks": {"PostToolUse": [{"hooks": [handler]}]}}))
    patterns = script_patterns([settings], root, {"HOME": str(home)})
    return {rel for rel in SCRIPTS if _pattern_of(rel) in patterns}


def _pattern_of(rel: str) -> str:
    escaped = rel.replace("[", "[[]")
    return escaped if rel.startswith("~/") else "/" + escaped


def test_the_scripts_a_hook_command_runs_are_the_ones_protected(corpus: tuple[Path, Path],
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    root, home = corpus
    misses: dict[str, set[str]] = {}
    extra: dict[str, set[str]] = {}
    runs = 0
    for command in COMMANDS:
        ran, protected = _ran(command, root, home), _protected(command, root, home)
        runs += bool(ran)
        if ran - protected:
            misses[str(command)] = ran - protected
        if protected - ran:
            extra[str(command)] = protected - ran
    with capsys.disabled():
        print(f"\nruntime scripts corpus: {len(COMMANDS)} commands, {runs} running a script of it; "
              f"misses {len(misses)}, scripts protected that did not run {len(extra)}")
    assert runs == 24  # the ground truth itself: bash ran a corpus script for each command that names one
    assert misses == {}
    assert extra == {}
    # and one it names that is missing yet: it would run once an agent made it
    assert "/scripts/absent.sh" in _patterns_of("test -f scripts/absent.sh && scripts/absent.sh || true", root, home)


def _patterns_of(command: str, root: Path, home: Path) -> list[str]:
    _protected(command, root, home)
    return script_patterns([root / ".claude" / "settings.json"], root, {"HOME": str(home)})


def test_what_a_command_runs_lands_where_its_shell_would_put_it(tmp_path: Path) -> None:
    root, home = tmp_path / "game", tmp_path / "home"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "real.sh").write_text("")
    (root / "hook.sh").symlink_to("lib/real.sh")
    patterns = _patterns_of('npx prettier --check --config=conf/p.json README.md; "$CLAUDE_PROJECT_DIR/hook.sh" a.md; '
                            "$UNSET/x.sh; ../outside.sh; /etc/passwd", root, home)
    # the link and its target; not a program looked up in PATH or the files it is given, a word an
    # unknown variable makes, or what lands outside the project and the home
    assert sorted(patterns) == ["/hook.sh", "/lib/real.sh"]


def test_an_mcp_servers_and_the_other_settings_commands_are_read(tmp_path: Path) -> None:
    root, home = tmp_path / "game", tmp_path / "home"
    root.mkdir()
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "node", "args": ["tools/db.js"]}}}))
    (root / "opencode.json").write_text(json.dumps({"mcp": {"x": {"type": "local", "command": ["bun", "tools/x.ts"]}},
                                                    "command": {"test": {"template": "run the tests"}}}))
    (root / "config.toml").write_text('notify = ["python3", "tools/notify.py"]\n'
                                      '[mcp_servers.y]\ncommand = "./tools/y"\nargs = ["--port", "1"]\n')
    (root / "settings.json").write_text(json.dumps({"statusLine": {"type": "command", "command": "~/bin/status.sh"},
                                                    "apiKeyHelper": "sh tools/key.sh"}))
    files = [root / name for name in (".mcp.json", "opencode.json", "config.toml", "settings.json")]
    assert sorted(script_patterns(files, root, {"HOME": str(home)})) == [
        "/tools/db.js", "/tools/key.sh", "/tools/notify.py", "/tools/x.ts", "/tools/y", "~/bin/status.sh"]


def test_opencode_jsonc_is_read_with_its_comments_and_trailing_commas(tmp_path: Path) -> None:
    root, home = tmp_path / "game", tmp_path / "home"
    root.mkdir()
    (root / "opencode.jsonc").write_text("""{
  // the project's own MCP servers
  "$schema": "https://opencode.ai/config.json", /* a URL's // stays */
  "mcp": {
    "x": {"type": "local", "command": ["node", "tools/x.js", "--url=http://127.0.0.1/a,b"],},
    "y": {"type": "remote", "url": "http://127.0.0.1/mcp"}, // no command
  },
}
""")
    # what OpenCode reads there: the same object as JSON's reader of the text without its comments
    assert plain((root / "opencode.jsonc").read_bytes()).count(b"//") == 3
    assert script_patterns([root / "opencode.jsonc"], root, {"HOME": str(home)}) == ["/tools/x.js"]


@pytest.mark.parametrize("text, value", [
    (b'{"a": 1, // c\n}', {"a": 1}), (b'[1, 2, /* c */ ]', [1, 2]), (b'{"a": "x, }"}', {"a": "x, }"}),
    (b'{"a": "\\"//"}', {"a": '"//'}), (b'{"a": [1,\n\t],\n}', {"a": [1]}),
])
def test_jsonc_is_made_plain_json(text: bytes, value: object) -> None:
    import msgspec

    assert msgspec.json.decode(plain(text)) == value


def test_settings_files_are_found_where_their_patterns_anchor(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "h"), "CODEX_HOME": str(tmp_path / "c"), "CLAUDE_CONFIG_DIR": "relative"}
    found = settings_files([".claude/settings.json", "~/.claude/settings.json", "$CODEX_HOME/hooks.json",
                                "$CLAUDE_CONFIG_DIR/settings.json", "$GEMINI_CLI_HOME/.gemini/settings.json"],
                               tmp_path / "p", env)
    assert found == (tmp_path / "p/.claude/settings.json", tmp_path / "h/.claude/settings.json",
                     tmp_path / "c/hooks.json")  # an unset variable, or a relative one, names nothing


def test_a_settings_file_that_cannot_be_read_names_no_script(tmp_path: Path) -> None:
    (tmp_path / "lint.py").write_text("")
    bad = tmp_path / "settings.json"
    for text in ("{not json", '["a list"]', '{"hooks": []}', '{"hooks": {"PostToolUse": "x"}}', '{"command": 3}',
                 '// a comment\n{"command": "./lint.py"}'):
        bad.write_text(text)
        assert script_patterns([bad, tmp_path / "missing.json"], tmp_path, {"HOME": "/nonexistent"}) == []
    bad.unlink()
    os.mkfifo(bad)  # opened without waiting for a writer that never comes
    assert script_patterns([bad], tmp_path, {"HOME": "/nonexistent"}) == []


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A project whose Claude settings register a hook running scripts/lint.py, in role build;
    config files are cached at once (no racy window), so a change is seen through the cache's key."""
    monkeypatch.setattr(cache, "RACY_SECONDS", 0.0)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = Project(tmp_path / "game")
    project.config('preset = "godot"\n')
    project.write("scripts/lint.py", "print('lint')\n")
    project.write("scripts/other.py", "print('other')\n")
    _register(project.root, 'python3 "$CLAUDE_PROJECT_DIR"/scripts/lint.py')
    return project.role("build")


def _register(root: Path, *commands: str) -> None:
    hooks = [{"type": "command", "command": command} for command in commands]
    path = root / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"hooks": {"PostToolUse": [{"matcher": "Write", "hooks": hooks}]}}))


def _write(project: Project, rel: str) -> tuple[bool, str]:
    payload = project.tool_payload("PreToolUse", "Write", {"file_path": str(project.root / rel), "content": "x"}, "w1")
    blocked, reason, _ = project.hook(payload)
    return blocked, reason


def test_a_registered_hooks_script_is_refused_to_write_and_its_neighbour_is_not(project: Project) -> None:
    blocked, reason = _write(project, "scripts/lint.py")
    assert blocked and reason.startswith("What the runtime runs by itself (lint.py"), reason
    assert _write(project, "scripts/other.py") == (False, "")
    project.role(None)  # no role: nothing is protected
    assert _write(project, "scripts/lint.py") == (False, "")


def test_registering_and_unregistering_a_hook_is_seen_at_the_next_call(project: Project) -> None:
    assert _write(project, "scripts/other.py") == (False, "")
    _register(project.root, 'python3 "$CLAUDE_PROJECT_DIR"/scripts/lint.py', "python3 scripts/other.py")
    assert _write(project, "scripts/other.py")[0]
    _register(project.root)
    assert _write(project, "scripts/lint.py") == (False, "")


def test_a_shell_write_of_the_script_is_refused(project: Project, tmp_path: Path) -> None:
    command = "sed -i 's/lint/pwned/' scripts/lint.py"
    copy = tmp_path / "copy"  # ground truth: in real bash, the command changes the script
    shutil.copytree(project.root, copy)
    subprocess.run(["bash", "-c", command], cwd=copy, check=True)
    assert (copy / "scripts/lint.py").read_text() != (project.root / "scripts/lint.py").read_text()
    outcome = project.bash(command)
    assert outcome.pre_blocked and "lint.py" in outcome.pre_reason
    assert (project.root / "scripts/lint.py").read_text() == "print('lint')\n"


def test_a_write_the_shell_gate_cannot_read_is_put_back_by_the_effect_check(project: Project) -> None:
    command = "python3 -c \"import sys; open('scripts/' + sys.argv[1], 'w').write('pwned')\" lint.py"
    outcome = project.bash(command)
    assert not outcome.pre_blocked and outcome.exit_code == 0  # ran: its target is in no word
    assert outcome.post_blocked and "lint.py" in outcome.post_reason
    assert (project.root / "scripts/lint.py").read_text() == "print('lint')\n"


def test_the_reload_watch_sees_a_registration_change(tmp_path: Path) -> None:
    settings = tmp_path / "game" / ".claude" / "settings.json"
    targets = WatchSet(StoreProject(tmp_path / "game"), tmp_path / "home", lambda: [settings])
    assert targets.matters(settings) and settings.parent in targets.dirs


def test_hookgates_own_registrations_name_no_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its own handlers run hookgate, whose install is protected as such; their words (`hook`,
    `claude`, the fail-closed wrapper's message) are no files of the project."""
    from hookgate_claude import install as claude
    from hookgate_codex import install as codex
    from hookgate_gemini import install as gemini

    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    (tmp_path / "codex-home").mkdir()
    root, home = tmp_path / "game", tmp_path / "home"
    files = [root / ".claude" / "settings.json", root / ".codex" / "hooks.json", root / ".gemini" / "settings.json"]
    for module, path in zip((claude, codex, gemini), files):
        assert module.install(path, str(home / ".local" / "bin" / "hookgate"))
    assert script_patterns(files, root, {"HOME": str(home)}) == []
