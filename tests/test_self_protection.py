"""Self-protection ([pipeline.protect] of the preset): while a pipeline role is active no agent
changes hookgate's registrations, policy or install, by any tool. Real hook processes; each shell
form refused is first run in real bash on a copy of the project, to prove it really changes the
protected file (a refusal of a command that writes nothing would prove nothing)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hookgate.pipeline.self_protect import hookgate_runs
from support import HOOKGATE, run_hook

REGISTRATION = "hookgate's runtime registration"
POLICY = "hookgate's policy and install"
COMMAND = "changes hookgate's own registration"
EXTENSION = "What the runtime runs by itself"
GIT = "What git runs by itself"
STARTUP = "What the user's shell runs when it starts"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text('{"hooks": {}}\n')
    return home


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with hookgate installed for all three runtimes (made once, copied per test)."""
    work = tmp_path_factory.mktemp("installed") / "game"
    work.mkdir()
    for runtime in ("claude", "codex", "opencode"):
        subprocess.run([HOOKGATE, "install", runtime, "--project", str(work)], cwd=work, check=True,
                       capture_output=True, env={**os.environ, "HOME": str(work.parent)})
    return work


@pytest.fixture
def root(tmp_path: Path, installed: Path) -> Path:
    """The installed project, in role build."""
    work = tmp_path / "game"
    shutil.copytree(installed, work, symlinks=True)
    (work / ".hookgate" / "policies").mkdir(parents=True)
    (work / ".hookgate" / "config.toml").write_text('preset = "godot"\n')
    (work / ".hookgate" / "hooks.json").write_text('{"hooks": {}}\n')
    (work / ".hookgate" / "current_role").write_text("build\n")
    return work


def pre(root: Path, home: Path, tool: str, agent: str | None = None, runtime: str = "claude",
        **tool_input) -> tuple[bool, str]:
    payload = {"session_id": "s1", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": tool,
               "tool_input": tool_input}
    if agent:
        payload.update(agent_id=agent, agent_type="worker")
    done = run_hook(runtime, payload, root, "--event", "PreToolUse", env={"HOME": str(home)})
    if runtime == "codex":
        return done.returncode == 2, done.stderr.decode()
    assert done.returncode == 0, done.stderr
    specific = json.loads(done.stdout or b"{}").get("hookSpecificOutput", {})
    return specific.get("permissionDecision") == "deny", specific.get("permissionDecisionReason", "")


PROTECTED_FILES = [
    (".claude/settings.json", REGISTRATION), (".claude/settings.local.json", REGISTRATION),
    (".codex/hooks.json", REGISTRATION), (".codex/config.toml", REGISTRATION),
    (".opencode/plugin/hookgate.js", REGISTRATION), (".hookgate/config.toml", POLICY),
    (".hookgate/hooks.json", POLICY), (".hookgate/policies/allow_all.py", POLICY),
    (".hookgate/stage_schemas.json", POLICY), ("{home}/.claude/settings.json", REGISTRATION),
    ("{home}/.codex/hooks.json", REGISTRATION), ("{home}/.hookgate/hooks.json", POLICY),
    ("{state}/hookgate/pins/claude-s1", POLICY),
    ("{home}/.claude/plugins/cache/hookgate/hookgate/hooks/hooks.json", REGISTRATION),
    (".gemini/settings.json", REGISTRATION), ("{home}/.gemini/settings.json", REGISTRATION),
    ("{home}/.gemini/extensions/hookgate/hooks/hooks.json", REGISTRATION),
    # hooks in a skill's or agent's front matter, a skill's !`command` lines, a plugin's code
    (".claude/skills/tune/SKILL.md", EXTENSION), (".claude/agents/tuner.md", EXTENSION),
    (".claude/commands/tune.md", EXTENSION), (".claude/hooks/format.sh", EXTENSION), (".mcp.json", EXTENSION), ("{home}/.claude/skills/t/SKILL.md", EXTENSION),
    ("{home}/.claude.json", EXTENSION),  # Claude Code's user- and local-scope MCP servers
    (".opencode/plugin/other.js", EXTENSION), (".opencode/plugins/other.ts", EXTENSION), ("opencode.json", EXTENSION),
    # an OpenCode custom tool's code (imported at start), an OpenCode or Gemini CLI command's shell lines,
    # what Claude Code sources before every Bash command
    (".opencode/tools/bash.ts", EXTENSION), (".opencode/tool/probe.js", EXTENSION),
    ("{home}/.config/opencode/tools/x.ts", EXTENSION), (".opencode/command/ship.md", EXTENSION),
    (".gemini/commands/ship.toml", EXTENSION), ("{home}/.claude/session-env/s1/hook-0.sh", EXTENSION),
    ("{home}/.claude/shell-snapshots/snapshot-bash-1.sh", EXTENSION),
    # the programs git's config names (core.fsmonitor runs on a `git status`) and its hooks
    (".git/config", GIT), (".git/hooks/pre-commit", GIT), ("vendor/lib/.git/config", GIT), ("{home}/.gitconfig", GIT),
    # what Codex's login shell at a session's start and Claude Code's Bash commands source
    ("{home}/.bashrc", STARTUP), ("{home}/.bash_profile", STARTUP), ("{home}/.profile", STARTUP),
    ("{home}/.bashrc.d/aliases.sh", STARTUP), ("{home}/.bash_aliases", STARTUP), ("{home}/.zshrc", STARTUP), ("{home}/.zshenv", STARTUP),
]


@pytest.mark.parametrize("path, kind", PROTECTED_FILES)
def test_write_and_edit_of_hookgates_own_files_are_refused(root: Path, home: Path, path: str, kind: str) -> None:
    target = path.format(home=home, state=os.environ["XDG_STATE_HOME"])
    for tool, fields in (("Write", {"content": "{}"}), ("Edit", {"old_string": "a", "new_string": "b"})):
        refused, reason = pre(root, home, tool, file_path=target, **fields)
        assert refused and reason.startswith(kind), (tool, reason)
    # a worker too, and through Codex's patch
    assert pre(root, home, "Write", agent="w1", file_path=target, content="{}")[0]
    if not target.startswith("/"):
        patch = f"*** Begin Patch\n*** Add File: {target}\n+x\n*** End Patch\n"
        assert pre(root, home, "apply_patch", runtime="codex", command=patch)[0]


SHELL_FORMS = [
    ("sed -i 's/hookgate/true/g' .claude/settings.json", ".claude/settings.json", REGISTRATION),
    ("rm .opencode/plugin/hookgate.js", ".opencode/plugin/hookgate.js", REGISTRATION),
    ("rm -rf .opencode", ".opencode/plugin/hookgate.js", REGISTRATION),
    ("echo '{}' > .codex/hooks.json", ".codex/hooks.json", REGISTRATION),
    ("python3 -c \"open('.hookgate/config.toml', 'w').write('preset = \\\"none\\\"')\"", ".hookgate/config.toml", POLICY),
    ("mv .claude/settings.json /tmp/settings.json.bak", ".claude/settings.json", REGISTRATION),
    ("cd .hookgate && printf 'x' > hooks.json", ".hookgate/hooks.json", POLICY),
    ("mkdir -p .claude/skills/tune && cat > .claude/skills/tune/SKILL.md <<'EOF'\n---\nname: tune\nhooks:\n  PostToolUse: []\n---\nEOF",
     ".claude/skills/tune/SKILL.md", EXTENSION),
    ("printf 'export const P = async () => ({})' > .opencode/plugin/other.js", ".opencode/plugin/other.js", EXTENSION),
    (f"{HOOKGATE} uninstall claude --project .", ".claude/settings.json", COMMAND),
    ("hookgate uninstall claude --project .", ".claude/settings.json", COMMAND),
    ("env -u LANG hookgate uninstall claude --project .", ".claude/settings.json", COMMAND),
    (f"bash -c '{HOOKGATE} uninstall codex --project .'", ".codex/hooks.json", COMMAND),
    (f"PATH={Path(HOOKGATE).parent}:$PATH; hookgate uninstall opencode --project .", ".opencode/plugin/hookgate.js", COMMAND),
    (f"{Path(HOOKGATE).with_name('python')} -m hookgate uninstall claude --project .", ".claude/settings.json", COMMAND),
    ("git init -q && git config core.fsmonitor 'rm -f PLAN.md'", ".git/config", GIT),
    ("git init -q && git -C .codex config alias.st '!rm -f PLAN.md'", ".git/config", GIT),
    ("git init -q && cp /dev/null .git/hooks/post-checkout", ".git/hooks/post-checkout", GIT),
]


@pytest.mark.parametrize("command, changed, kind", SHELL_FORMS)
def test_shell_forms_that_change_hookgates_own_files_are_refused(root: Path, home: Path, tmp_path: Path,
                                                                  command: str, changed: str, kind: str) -> None:
    # ground truth: in real bash, on a copy, the command changes the protected file
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, symlinks=True)
    before = (copy / changed).read_bytes() if (copy / changed).exists() else None  # None: the command makes it
    env = {**os.environ, "HOME": str(home), "HOOKGATE_PROJECT_DIR": str(copy),
           "PATH": f"{Path(HOOKGATE).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"}  # the agent's shell finds hookgate
    subprocess.run(["bash", "-c", command], cwd=copy, env=env, capture_output=True, timeout=60)
    after = (copy / changed).read_bytes() if (copy / changed).exists() else None
    assert after != before, command

    for runtime in ("claude", "codex"):
        refused, reason = pre(root, home, "Bash", runtime=runtime, command=command)
        assert refused and kind in reason, (runtime, reason)
    assert ((root / changed).read_bytes() if (root / changed).exists() else None) == before


def test_setting_a_program_in_the_users_git_config_is_refused(root: Path, home: Path, tmp_path: Path) -> None:
    command = "git config --global core.fsmonitor 'rm -f PLAN.md'"
    copy = tmp_path / "home-copy"
    shutil.copytree(home, copy)
    subprocess.run(["bash", "-c", command], cwd=root, env={**os.environ, "HOME": str(copy)}, check=True)
    assert "fsmonitor" in (copy / ".gitconfig").read_text()  # ground truth: it is the user's config git writes
    for runtime in ("claude", "codex"):
        refused, reason = pre(root, home, "Bash", runtime=runtime, command=command)
        assert refused and GIT in reason and ".gitconfig" in reason, (runtime, reason)
    assert not (home / ".gitconfig").exists()


@pytest.mark.parametrize("command, passes", [
    ("git config user.email a@b.c", True), ("git config --global user.name t", True),
    ("git config remote.origin.url https://example.com/g.git", True), ("git config --unset user.name", True),
    ("git config set --append remote.Origin.fetch '+refs/heads/*:refs/remotes/origin/*'", True),
    ("git config core.fsmonitor 'rm -f PLAN.md'", False), ("git config alias.st '!rm -f PLAN.md'", False),
    ("git config --file .git/config include.path /tmp/evil.cfg", False), ("git config -e", False),
    ("git config --rename-section user alias", False), ("git config \"$(echo user.email)\" a@b.c", False),
])
def test_git_config_that_sets_a_key_naming_no_program_passes(root: Path, home: Path, tmp_path: Path,
                                                              command: str, passes: bool) -> None:
    """The preset's git_inert_keys: git config that sets or unsets only them passes the shell gate;
    any other key, an editor, a section renamed, a key known only at run time is refused."""
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    refused, reason = pre(root, home, "Bash", command=command)
    assert refused != passes, reason
    if not passes:
        assert GIT in reason or "cannot tell" in reason, reason


GIT_IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@t"}


def with_submodule(root: Path, tmp_path: Path) -> Path:
    """`root` a repository with a submodule at addons/lib, whose repository git keeps in
    .git/modules/addons/lib (addons/lib/.git is a file naming it)."""
    env = {**os.environ, **GIT_IDENTITY}
    lib = tmp_path / "lib"
    lib.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "lib"]):
        subprocess.run(["git", *args], cwd=lib, check=True, env=env)
    for args in (["init", "-q"], ["-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "addons/lib"],
                 ["commit", "-qm", "sub"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)
    return root / ".git" / "modules" / "addons" / "lib"


SUBMODULE_FORMS = [
    ("git -C addons/lib config core.fsmonitor {program}", "config"),
    ("cd addons/lib && git config core.fsmonitor {program}", "config"),
    ("git config -f .git/modules/addons/lib/config core.fsmonitor {program}", "config"),
    ("cp {program} .git/modules/addons/lib/hooks/post-checkout", "hooks/post-checkout"),
]


@pytest.mark.parametrize("command, changed", SUBMODULE_FORMS)
def test_planting_a_program_in_a_submodules_repository_is_refused(root: Path, home: Path, tmp_path: Path,
                                                                  command: str, changed: str) -> None:
    modules = with_submodule(root, tmp_path)
    marker, program = tmp_path / "planted-ran", tmp_path / "plant.sh"
    program.write_text(f"#!/bin/sh\necho ran >> {marker}\nexit 1\n")
    program.chmod(0o755)
    command = command.format(program=program)
    # ground truth, on a copy: the command changes the submodule's repository, and when it names
    # core.fsmonitor, the project's next `git status` runs it
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, symlinks=True)
    copied = copy / ".git" / "modules" / "addons" / "lib" / changed
    before = copied.read_bytes() if copied.exists() else None
    subprocess.run(["bash", "-c", command], cwd=copy, check=True, env={**os.environ, "HOME": str(home)})
    assert (copied.read_bytes() if copied.exists() else None) != before
    if changed == "config":
        (copy / "addons" / "lib" / "new.txt").write_text("x")
        subprocess.run(["git", "status", "--short"], cwd=copy, check=True, capture_output=True,
                       env={**os.environ, "HOME": str(home)})
        assert marker.exists()
    for runtime in ("claude", "codex"):
        refused, reason = pre(root, home, "Bash", runtime=runtime, command=command)
        assert refused and GIT in reason, (runtime, reason)
    assert ((modules / changed).read_bytes() if (modules / changed).exists() else None) == before


STARTUP_FORMS = [
    "echo 'rm -f PLAN.md' >> ~/.bashrc", "printf 'rm -f PLAN.md\\n' | tee -a ~/.bash_profile",
    "sed -i '1i rm -f PLAN.md' ~/.profile", "cp /dev/null ~/.zshrc", "cd ~ && echo 'rm -f PLAN.md' >> .bashrc",
    "mkdir -p ~/.bashrc.d && echo 'rm -f PLAN.md' > ~/.bashrc.d/x.sh",
]


@pytest.mark.parametrize("command", STARTUP_FORMS)
def test_planting_a_line_in_the_users_shell_startup_is_refused(root: Path, home: Path, tmp_path: Path,
                                                               command: str) -> None:
    for name in (".bashrc", ".bash_profile", ".profile", ".zshrc"):
        (home / name).write_text("alias ll='ls -l'\n")
    copy = tmp_path / "home-copy"
    shutil.copytree(home, copy)
    subprocess.run(["bash", "-c", command], cwd=root, env={**os.environ, "HOME": str(copy)}, check=True)
    changed = [p for p in copy.rglob("*") if p.is_file() and (not (home / p.relative_to(copy)).exists()
                                                              or (home / p.relative_to(copy)).read_bytes() != p.read_bytes())]
    assert changed, command  # ground truth: the command changes a startup file of the user's shell
    targets = [home / p.relative_to(copy) for p in changed]
    before = {p: p.read_bytes() if p.exists() else None for p in targets}
    for runtime in ("claude", "codex"):
        refused, reason = pre(root, home, "Bash", runtime=runtime, command=command)
        assert refused and STARTUP in reason, (runtime, reason)
    assert {p: p.read_bytes() if p.exists() else None for p in targets} == before


def test_the_file_bash_env_names_is_protected_where_it_is_set(root: Path, home: Path, tmp_path: Path) -> None:
    sourced = tmp_path / "env.sh"
    payload = {"session_id": "s1", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Write",
               "tool_input": {"file_path": str(sourced), "content": "rm -f PLAN.md\n"}}
    for env, refused in (({"BASH_ENV": str(sourced)}, True), ({"ENV": str(sourced)}, True), ({}, False)):
        done = run_hook("claude", payload, root, "--event", "PreToolUse", env={"HOME": str(home), **env})
        reason = json.loads(done.stdout or b"{}").get("hookSpecificOutput", {}).get("permissionDecisionReason", "")
        assert (STARTUP in reason) is refused, (env, reason)


HARMLESS = [
    "cat ~/.bashrc", "grep -n alias ~/.bashrc", "cp ~/.bashrc /tmp/bashrc.bak",
    "git config --get user.name", "git config -l", "git status --short", "git config --file build/x.cfg a.b c",
    "cat .claude/settings.json", "grep -n hookgate .codex/hooks.json", "echo hookgate uninstall",
    "grep -rn 'hookgate uninstall' README.md", "hookgate role show", "hookgate doctor",
    "git commit -m 'document hookgate install'", "ls .hookgate/policies", "cp .hookgate/config.toml /tmp/cfg.bak",
]


@pytest.mark.parametrize("command", HARMLESS)
def test_reading_hookgates_files_and_naming_its_commands_pass(root: Path, home: Path, command: str) -> None:
    assert pre(root, home, "Bash", command=command) == (False, "")


def test_off_when_no_role_is_active_and_when_the_config_turns_it_off(root: Path, home: Path) -> None:
    (root / ".hookgate" / "current_role").unlink()
    assert pre(root, home, "Write", file_path=".claude/settings.json", content="{}") == (False, "")
    assert pre(root, home, "Bash", command="hookgate uninstall claude --project .") == (False, "")
    (root / ".hookgate" / "current_role").write_text("build\n")
    (root / ".hookgate" / "config.toml").write_text('preset = "godot"\n[pipeline.protect]\nenabled = false\n')
    assert pre(root, home, "Write", file_path=".claude/settings.json", content="{}") == (False, "")
    assert pre(root, home, "Bash", command="hookgate uninstall claude --project .") == (False, "")


def test_protect_rules_come_before_a_roles_allow(root: Path, home: Path) -> None:
    """gdd may write .hookgate/ (its `@state` allow): not hookgate's own policy files."""
    (root / ".hookgate" / "current_role").write_text("gdd\n")
    assert pre(root, home, "Write", file_path=".hookgate/config.toml", content="")[0]
    assert pre(root, home, "Write", file_path=".hookgate/notes.json", content="") == (False, "")


@pytest.mark.parametrize("command, runs", [
    ("hookgate uninstall claude", [["uninstall", "claude"]]),
    ("sudo env X=1 timeout 5 hookgate install codex --user", [["install", "codex", "--user"]]),
    # a launcher's option with its value: `root`, `LANG` and `KILL` are no commands
    ("sudo -u root hookgate uninstall claude", [["uninstall", "claude"]]),
    ("env -u LANG hookgate uninstall codex --user", [["uninstall", "codex", "--user"]]),
    ("timeout -s KILL 5 hookgate uninstall claude", [["uninstall", "claude"]]),
    ("\"$(command -v hookgate)\" uninstall claude", [["uninstall", "claude"]]),
    ("`which hookgate` uninstall claude", [["uninstall", "claude"]]),
    ("echo ok; python3 -m hookgate uninstall opencode", [["uninstall", "opencode"]]),
    ("sh -lc \"cd /x && hookgate uninstall claude\"", [["uninstall", "claude"]]),
    ("echo $(hookgate uninstall claude)", [["uninstall", "claude"]]),
    ("eval 'hookgate uninstall claude'", [["uninstall", "claude"]]),
    ("echo hookgate uninstall", []),
    ("grep 'hookgate uninstall' notes.md", []),
    ("man hookgate", []),
])
def test_runs_of_hookgate_are_found_in_a_command(command: str, runs: list[list[str]]) -> None:
    assert list(hookgate_runs(command)) == runs
