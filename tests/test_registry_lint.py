"""`hookgate doctor`'s checks of the Python policies (registry.lint)."""

from __future__ import annotations

import textwrap
from types import SimpleNamespace

import pytest

from hookgate import python_hooks as registry
from hookgate.python_hooks.lint import doctor_check, lint
from test_registry import clean_process_registry  # noqa: F401  (autouse)


def policy(project, name: str, body: str) -> None:
    path = project.dir / "policies" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body))


def test_clean_policies_have_no_problems(project, ctx):
    policy(project, "ok.py", """\
        from hookgate import register_hook
        register_hook("a", "pre_tool_use", None, {"timeout_ms": 2000}, print)
    """)
    assert lint(ctx.config, project) == []


def test_never_firing_names_failed_loads_and_slow_chains(project, ctx):
    policy(project, "a.py", """\
        from hookgate import register_hook
        register_hook("plan", "pre_planning", None, None, print)
        register_hook("slow-1", "session_start", None, {"timeout_ms": 20000}, print)
        register_hook("slow-2", "session_start", None, {"timeout_ms": 20000}, print)
    """)
    policy(project, "b.py", "raise ImportError('no backend client')\n")
    problems = lint(ctx.config, project, budgets={"SessionStart": 30})
    where = project.dir / "policies"
    assert [(p.severity, p.message) for p in problems] == [
        ("error", f"{where}: does not load, so gating events are blocked: {where / 'b.py'}: ImportError: no backend client"),
        ("warning", f"{where / 'a.py'}: pre_planning is emitted by no supported runtime, so this hook never fires - at `hook 'plan'`"),
        ("warning", f"{where / 'a.py'}: suspicious timeouts: the session_start hooks may take 40s together (slow-1, slow-2), "
                    "but the runtime gives hookgate's whole call 30s (set options.timeout_ms lower) - at `session_start`"),
    ]
    assert all(p.status == "fail" for p in problems)


def test_the_doctor_check_leaves_an_invalid_config_to_the_config_check(project):
    project.config_path.write_text("[policies]\nmodules = 3\n")
    assert doctor_check(SimpleNamespace(project=project.root, env={})) == []
    project.config_path.write_text('[policies]\nmodules = ["no_such_policy_module"]\n')
    [problem] = doctor_check(SimpleNamespace(project=project.root, env={}))
    assert "module no_such_policy_module: ModuleNotFoundError" in problem.message
