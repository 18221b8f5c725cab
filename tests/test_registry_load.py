"""Loading Python policies: `.hookgate/policies/*.py` and modules named in the config, afresh on
every load (the RPC core's hot reload rebuilds the policy through hookcall.load_policy)."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import msgspec
import pytest

from hookgate import python_hooks as registry
from hookgate.errors import ConfigError
from hookgate.hookcall import load_policy
from hookgate.model.events import PreToolUse, UserPromptSubmit
from hookgate.model.verdicts import Block
from test_registry import clean_process_registry  # noqa: F401  (autouse)


def policy(project, name: str, body: str) -> Path:
    path = project.dir / "policies" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body))
    return path


def config(project, text: str) -> None:
    project.config_path.write_text(textwrap.dedent(text))


def bash(command: str) -> PreToolUse:
    return PreToolUse(session_id="s1", tool_name="Bash", tool_input={"command": command})


def verdict(project, event, env=None):
    from hookgate.hookcall import decide

    # the user message only names `hookgate explain` (tested in test_explain.py)
    return msgspec.structs.replace(decide(load_policy(str(project.root), env or {}), [event])[0], message=None)


BLOCKER = """\
    from hookgate import register_hook, block, hook_count

    register_hook("{id}", "pre_tool_use", {{"command_pattern": "{pattern}"}}, None, lambda e: block("{reason}"))
"""


def test_policy_files_load_in_name_order_and_see_earlier_hooks(project):
    policy(project, "b.py", """\
        from hookgate import hook_count, register_hook, unregister_hook
        assert hook_count() == 2, hook_count()
        unregister_hook("a-two")
        register_hook("b", "pre_tool_use", None, None, lambda e: None)
    """)
    policy(project, "a.py", BLOCKER.format(id="a-one", pattern="x", reason="x") + """\
    register_hook("a-two", "pre_tool_use", None, None, lambda e: None)
    """)
    policy(project, ".#a.py", "raise SystemExit('an editor lock file is not a policy')")
    policy(project, "notes.txt", "not python")
    loaded, errors = registry.loaded(load_policy(str(project.root), {}).config, project)
    assert errors == []
    assert [(h.id, Path(h.origin).name) for h in loaded.hooks()] == [("a-one", "a.py"), ("b", "b.py")]
    assert registry.hook_count() == 0  # loading never touches the process's own registry


def test_modules_named_in_the_config_load_before_the_files(project, tmp_path, monkeypatch):
    package = tmp_path / "site" / "team_rules"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "release.py").write_text(textwrap.dedent(BLOCKER.format(id="no-publish", pattern="npm publish",
                                                                        reason="CI publishes")))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    config(project, """\
        [policies]
        modules = ["team_rules.release"]
    """)
    policy(project, "local.py", """\
        from hookgate import hook_count
        assert hook_count() == 1
    """)
    assert verdict(project, bash("npm publish")) == Block(reason="CI publishes")
    assert verdict(project, bash("npm test")).kind == "allow"


def test_an_unknown_policies_key_is_a_config_error(project):
    from hookgate.config.load import load_config

    config(project, "[policies]\nmodule = ['x']\n")
    with pytest.raises(ConfigError, match="unknown field `module`"):
        load_config(project.config_path)


@pytest.mark.parametrize("body, error", [
    ("def broken(:\n", "SyntaxError: invalid syntax (line 1)"),
    ("import no_such_module_anywhere\n", "ModuleNotFoundError: No module named 'no_such_module_anywhere'"),
    ("from hookgate import register_hook\nregister_hook('x', 'pre_tol_use', None, None, print)\n",
     "HookError: hook 'x': unknown event 'pre_tol_use'; known: pre_tool_use, post_tool_use"),
    ("import sys\nsys.exit(3)\n", "SystemExit: 3"),
])
def test_a_policy_that_does_not_load_fails_closed_on_gating_events(project, body, error):
    path = policy(project, "broken.py", body)
    policy(project, "fine.py", BLOCKER.format(id="fine", pattern="rm", reason="no rm"))
    refused = verdict(project, bash("ls"))
    assert isinstance(refused, Block)
    assert refused.reason.startswith("hookgate: a Python policy failed to load, so every gating event is blocked "
                                     f"until it is fixed: {path}: {error}")
    assert isinstance(verdict(project, UserPromptSubmit(session_id="s1", prompt="hi")), Block)
    gates = {g.id: g for g in load_policy(str(project.root), {}).engine.gates}
    assert gates[registry.LOAD_ERROR_GATE].events == ("PermissionRequest", "PreCompact", "UserPromptSubmit", "PreToolUse")
    assert "python_hooks.pre_tool_use" in gates  # the other file still loaded


def test_a_policy_that_fails_half_way_contributes_no_hook(project):
    policy(project, "half.py", BLOCKER.format(id="first", pattern="x", reason="x") + "    raise RuntimeError('then broke')\n")
    loaded, errors = registry.loaded(load_policy(str(project.root), {}).config, project)
    assert len(loaded) == 0 and errors == [f"{project.dir / 'policies' / 'half.py'}: RuntimeError: then broke"]
    assert "hookgate_policies.half" not in sys.modules


def test_a_changed_policy_file_takes_effect_on_the_next_load(project):
    path = policy(project, "rules.py", BLOCKER.format(id="r", pattern="deploy", reason="reason one"))
    assert verdict(project, bash("deploy")) == Block(reason="reason one")
    stat = path.stat()
    path.write_text(textwrap.dedent(BLOCKER.format(id="r", pattern="deploy", reason="reason two")))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same mtime: no cache may be trusted
    assert verdict(project, bash("deploy")) == Block(reason="reason two")
    path.unlink()
    assert verdict(project, bash("deploy")).kind == "allow"


def test_a_changed_config_module_takes_effect_on_the_next_load(project, tmp_path, monkeypatch):
    module = tmp_path / "site" / "live_rules.py"
    module.parent.mkdir()
    module.write_text(textwrap.dedent(BLOCKER.format(id="m", pattern="deploy", reason="reason one")))
    monkeypatch.syspath_prepend(str(module.parent))
    config(project, '[policies]\nmodules = ["live_rules"]\n')
    assert verdict(project, bash("deploy")) == Block(reason="reason one")
    import live_rules  # the fresh module is what others importing it see

    stat = module.stat()
    module.write_text(textwrap.dedent(BLOCKER.format(id="m", pattern="deploy", reason="reason two")))
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert verdict(project, bash("deploy")) == Block(reason="reason two")
    assert sys.modules["live_rules"] is not live_rules


def test_a_missing_config_module_fails_closed(project):
    config(project, '[policies]\nmodules = ["not_installed_rules"]\n')
    refused = verdict(project, bash("ls"))
    assert isinstance(refused, Block) and "module not_installed_rules: ModuleNotFoundError: no module named " \
                                                "'not_installed_rules' (is it installed, or on PYTHONPATH?)" in refused.reason


def test_hooks_registered_by_the_process_itself_are_part_of_every_policy(project):
    registry.register_hook("embedded", "pre_tool_use", {"command_pattern": "rm"}, None,
                           lambda e: registry.block("the host forbids rm"))
    policy(project, "p.py", """\
        from hookgate import register_hook
        register_hook("embedded", "pre_tool_use", None, None, print)
    """)
    refused = verdict(project, bash("rm x"))
    assert isinstance(refused, Block) and "the host forbids rm" in refused.reason
    assert "hook 'embedded': already registered; unregister_hook it first" in refused.reason  # the file's clash


def test_a_chain_gate_fails_closed_only_on_the_tools_its_hooks_name(tmp_path):
    """A core that cannot answer, or a payload hookgate cannot read, refuses the Bash call a Bash
    hook guards, not every tool call of the session."""
    from hookgate.python_hooks import chain_gate
    from hookgate.python_hooks.hooks import Hook, HookMatcher, HookOptions

    def hook(tool):
        return Hook(id=f"h-{tool}", event="pre_tool_use", matcher=HookMatcher(tool=tool), options=HookOptions(),
                    handler=lambda event: None)

    gate = chain_gate("pre_tool_use", [hook("bash"), hook("Task")])
    assert gate.matcher == "Agent|Bash" and gate.fail_mode == "closed"
    matches = gate.compiled_matcher()
    assert matches("Bash") and matches("Agent") and not matches("WebFetch")
    assert chain_gate("pre_tool_use", [hook("bash"), hook(None)]).matcher == ""  # a hook on every tool
    assert chain_gate("pre_tool_use", [hook("mcp__fs__write")]).matcher == ""  # no canonical spelling known
    assert chain_gate("session_start", [hook("Bash")]).matcher == ""  # not a tool event
