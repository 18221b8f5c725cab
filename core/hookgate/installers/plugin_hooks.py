"""The hook commands of hookgate's runtime plugins (the Claude Code and Codex plugin channels).

A plugin is installed by the runtime, not by hookgate, so it cannot name this hookgate by absolute
path the way `hookgate install` does: it calls the `hookgate` on the user's PATH. Each command
first checks that there is one. When there is none:

  - a gating event (fail_closed in the lifecycle matrix) is refused, exit 2, with a reason that
    says why and what to do: the model reads it as the refusal, the user sees it as the hook's
    error, and nothing hookgate would have judged goes ahead unjudged;
  - SessionStart says the same once, to the user and to the model (`start_answer`), without
    refusing: an unguarded session should know it is one;
  - every other event goes ahead silently, as it would under a hookgate that allows.

It runs under `sh` because Codex starts hooks with the user's login shell, which may not be POSIX.

The hookgate it finds is started without `site` when it is hookgate's own launcher (core/bin/hookgate,
which says so on its second line) under a plain interpreter path: `site` costs about a fifth of a
warm call. Where the launcher sits in its install's bin/ folder itself, its interpreter runs the
few statements `hookgate install` registers (`python -S -P -c`, hookgate.cli.install.hook_command),
with the install's site-packages worked out from the launcher's place as the launcher does it: no
script to compile on every start (0.97-0.99x the time of starting the launcher, side by side). A
link to it (pipx's) is started as `python -S .../hookgate`, which follows the link. Anything else
on PATH by that name is run as it is.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any, Callable

PROGRAM = "hookgate"
LAUNCHER_MARK = "# hookgate launcher"  # the second line of core/bin/hookgate begins so
# `sh` that sets "$@" to the program to run: the first PROGRAM on PATH (as `command -v` finds it),
# through its interpreter with -S when its first line names a python by absolute path alone
# ("#!/.../python3.11": no argument, not pip's /bin/sh re-exec) and its second begins with
# LAUNCHER_MARK; else PROGRAM itself. No fork and no output: a file it cannot read is plain PROGRAM.
# Then, for the launcher by an absolute path that is no link, SITELESS in place of the script.
LAUNCH = "; ".join([
    "set -f", "IFS=:", "set -- {program}",
    "for d in $PATH; do f=${{d:-.}}/{program}",
    '[ -f "$f" ] && [ -x "$f" ] || continue',
    '{{ read -r l; read -r m; }} 2>/dev/null <"$f"',
    'p=${{l#"#!"}}',
    'case $p in /*[[:space:]]*) ;; /*) case ${{p##*/}} in python*) case $m in "{mark}"*) '
    '[ -x "$p" ] && set -- "$p" -S "$f";; esac;; esac;; esac',
    "break; done", "unset IFS", "set +f",
    'case $#$f in 3/*) [ -L "$f" ] || set -- "$p" -S -P -c "{siteless}" "${{f%/*/*}}";; esac',
])
# What the launcher's interpreter runs with its install's folder (the launcher's, two levels up) as
# its first argument: that folder's site-packages on sys.path, as core/bin/hookgate puts it there,
# then the hook command (hookgate.client.launched); site's when hookgate is not there (an
# editable install, a system's dist-packages), as the launcher falls back to it.
SITELESS = ("import sys, posix; lib = sys.argv.pop(1) + '/lib/python%d.%d/site-packages' % sys.version_info[:2]; "
            "sys.path.append(lib) if posix.access(lib + '/hookgate', 0) else __import__('site').main(); "
            "from hookgate.client import launched; launched()")
INSTALL_HINT = ("install it (pip install . in a hookgate checkout) on the PATH this runtime runs hooks with, "
                "then start a new session")


def missing_message(event: str, gating: bool) -> str:
    consequence = f"{event} is refused until it is" if gating else "this session is not guarded by hookgate"
    return f"hookgate is not installed or not on PATH: {consequence}; {INSTALL_HINT}"


def command(runtime: str, event: str, *, gating: bool, start_answer: str | None = None,
            refuse_crashes: bool = False) -> str:
    """`sh -c '<check>; <launch>; exec "$@" hook RUNTIME --event EVENT'`. `start_answer` is what the
    runtime should read on stdout at SessionStart when hookgate is missing (its JSON).
    `refuse_crashes`: on a gating event, turn any exit but 0 and 2 of hookgate itself into a
    refusal too, for a runtime that has no fail-closed switch of its own (Codex)."""
    if gating:
        missing = f"echo {_double_quoted(missing_message(event, True))} >&2; exit 2"
    elif start_answer is not None:
        missing = f"echo {_double_quoted(start_answer)}; exit 0"
    else:
        missing = "exit 0"
    run = f'"$@" hook {runtime} --event {event}'
    if gating and refuse_crashes:
        # "$s" is left for sh to expand: the exit status hookgate ended with
        crashed = _double_quoted(f"hookgate could not run (exit STATUS): {event} is refused until it is "
                                 "repaired; run: hookgate doctor").replace("STATUS", "$s")
        run = f"{run}; s=$?; case $s in 0|2) exit $s;; esac; echo {crashed} >&2; exit 2"
    else:
        run = f"exec {run}"
    launch = LAUNCH.format(program=PROGRAM, mark=LAUNCHER_MARK, siteless=SITELESS)
    script = f"command -v {PROGRAM} >/dev/null 2>&1 || {{ {missing}; }}; {launch}; {run}"
    return f"sh -c {shlex.quote(script)}"


def _double_quoted(text: str) -> str:
    """`text` as one double-quoted sh word (the script itself sits in single quotes)."""
    if "'" in text:
        raise ValueError(f"no single quote in a plugin hook message: {text!r}")
    return '"' + "".join("\\" + c if c in '\\"$`' else c for c in text) + '"'


# -- what the Claude Code and Codex plugin generators share ----------------------------------

def session_start_answer() -> str:
    """What a plugin's SessionStart hook says when no hookgate is on PATH: to the user and the model."""
    message = missing_message("SessionStart", False)
    return json.dumps({"systemMessage": message,
                       "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": message}})


def hooks_document(registrations: dict[str, Any], hook_command: Callable[[str], str],
                   form: Callable[[str], dict[str, Any]] = lambda line: {"command": line}) -> dict[str, Any]:
    """The plugin's hooks.json: the install's registrations, each handler running `hook_command(event)`
    in the runtime's form of a handler (`form`: the handler's fields for a command line)."""
    for event, groups in registrations.items():
        for group in groups:
            for handler in group["hooks"]:
                handler.update(form(hook_command(event)))
    return {"hooks": registrations}


def json_text(document: Any) -> str:
    return json.dumps(document, indent=2) + "\n"


def write_files(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
