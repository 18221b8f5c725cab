"""What each program writes, given its words after expansion (shell.py reads the command).

Three kinds of programs:
  - writers whose targets are in their words: redirections aside, touch mkdir rm rmdir unlink
    shred truncate tee chmod chown gzip ..., cp mv install ln (the destination, mv its sources, a
    hard link its source), sed -i / perl -i / awk -i inplace, dd of=, sort -o, curl -o, wget -O,
    find -delete / -exec (the files it finds), xargs (whatever its input names: unknown),
    python/node/perl code whose writes are all literal, apply_patch;
  - programs that write on their own (RUN_ON_THEIR_OWN: git checkout/stash/restore/reset/apply,
    patch, tar -x, unzip, rsync, make, package managers, scripts, interpreters fed code this reader
    cannot read): their targets are unknown;
  - everything else reads.
Wrappers are looked through (sudo, env, nohup, timeout, ...), and `sh -c STRING`, `bash -c`,
`eval`, `trap` and `bash <<EOF` are read as commands.

Programs that leave work running after they return (DETACHERS: setsid, at, screen, tmux, ...) are
noted as such (Call.detaches): a check after the call cannot see what that work writes later.
"""

from __future__ import annotations

import os
import re
from itertools import takewhile
from typing import TYPE_CHECKING, Callable

from ..config.load import STATE_TOKEN as STATE_FOLDER
from ..shellwords import WRAPPERS
from .shell_lexer import Word

if TYPE_CHECKING:
    from .shell import Call

MAX_FOUND = 5000  # files a `find` may reach before its reach is unknown

# command -> options that take a value (so that their value is not an operand)
OPERAND_WRITERS: dict[str, frozenset[str]] = {
    "touch": frozenset({"-d", "-r", "-t", "--date", "--reference"}),
    "mkdir": frozenset({"-m", "--mode"}),
    "rm": frozenset(), "rmdir": frozenset(), "unlink": frozenset(), "sponge": frozenset(),
    "shred": frozenset({"-n", "-s", "--iterations", "--size"}),
    "truncate": frozenset({"-s", "-r", "--size", "--reference"}),
    "tee": frozenset(), "mkfifo": frozenset({"-m"}), "mknod": frozenset({"-m"}),
    "chmod": frozenset({"--reference"}), "chown": frozenset({"--reference"}), "chgrp": frozenset({"--reference"}),
    "chattr": frozenset(), "setfacl": frozenset({"-m", "-x", "-M", "-X"}), "ed": frozenset({"-p"}),
    "ex": frozenset({"-c"}), "vi": frozenset({"-c"}), "vim": frozenset({"-c", "-S"}), "nvim": frozenset({"-c"}),
    "nano": frozenset(), "emacs": frozenset({"--eval", "-l"}),
    "fallocate": frozenset({"-l", "-o", "--length", "--offset"}),
}
# (de)compressors replace FILE by FILE.gz (or the reverse) unless told to write to stdout
COMPRESSORS: dict[str, tuple[str, ...]] = {
    "gzip": (".gz",), "gunzip": (".gz",), "bzip2": (".bz2",), "bunzip2": (".bz2",), "xz": (".xz",),
    "unxz": (".xz",), "zstd": (".zst",), "unzstd": (".zst",), "lzma": (".lzma",), "compress": (".Z",),
    "lz4": (".lz4",), "unlz4": (".lz4",),  # lz4 IN OUT writes OUT: an operand too
}
COPIERS: dict[str, frozenset[str]] = {
    "cp": frozenset({"-S", "--suffix"}), "mv": frozenset({"-S", "--suffix"}), "ln": frozenset({"-S", "--suffix"}),
    "link": frozenset(),  # `link FILE1 FILE2`: ln without options
    "install": frozenset({"-m", "-o", "-g", "-S", "--mode", "--owner", "--group", "--suffix"}),
}
# options whose value is a file the program writes (a value "-" is stdout)
OPTION_OUTPUTS: dict[str, frozenset[str]] = {
    "sort": frozenset({"-o", "--output"}),
    "curl": frozenset({"-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii"}),
    "wget": frozenset({"-O", "--output-document", "-o", "--output-file", "-a", "--append-output"}),
    "iconv": frozenset({"-o", "--output"}), "openssl": frozenset({"-out", "-keyout"}),
    "gpg": frozenset({"-o", "--output"}), "gpg2": frozenset({"-o", "--output"}), "shuf": frozenset({"-o", "--output"}),
}
# programs that rewrite the files they are given in place -> (the options with which they do,
# none: they do unless told otherwise; the options with which they only report; the operands
# before the files, such as yq's expression). A folder given is formatted file by file: which of
# its files is unknown.
IN_PLACE: dict[str, tuple[frozenset[str], frozenset[str], int]] = {
    "rustfmt": (frozenset(), frozenset({"--check", "--version", "-V"}), 0),
    "gofmt": (frozenset({"-w"}), frozenset(), 0), "goimports": (frozenset({"-w"}), frozenset(), 0),
    "black": (frozenset(), frozenset({"--check", "--diff", "--version"}), 0),
    "isort": (frozenset(), frozenset({"--check-only", "-c", "--check", "--diff", "--stdout", "--version"}), 0),
    "gdformat": (frozenset(), frozenset({"--check", "-c", "--diff", "-d", "--version"}), 0),
    "prettier": (frozenset({"--write", "-w"}), frozenset(), 0), "clang-format": (frozenset({"-i"}), frozenset(), 0),
    "autopep8": (frozenset({"-i", "--in-place"}), frozenset(), 0), "yapf": (frozenset({"-i", "--in-place"}), frozenset(), 0),
    "shfmt": (frozenset({"-w", "--write"}), frozenset(), 0), "eslint": (frozenset({"--fix"}), frozenset(), 0),
    "yq": (frozenset({"-i", "--inplace", "--in-place"}), frozenset(), 1),
    "dos2unix": (frozenset(), frozenset({"-i", "--info", "--version"}), 0),
    "unix2dos": (frozenset(), frozenset({"-i", "--info", "--version"}), 0),
}
COMPILERS = frozenset({"cc", "gcc", "g++", "c++", "clang", "clang++", "tcc"})
# what a compiler writes without -o: a.out, or one FILE.o / FILE.s per source in the folder it runs in
COMPILED_SUFFIX = {"-c": ".o", "-S": ".s"}
COMPILER_PRINTS = frozenset({"-E", "-fsyntax-only", "-M", "-MM", "--version", "-v", "--help", "-dumpversion"})
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".m", ".s", ".S", ".i", ".ii")
# short options taking a value, so that `-fsSLo FILE` is read as curl reads it
SHORT_VALUES: dict[str, str] = {"curl": "oDcdHXuAebEKmwxTFrCyYzQ", "wget": "OoaPtTeUwQlAdiBY", "sort": "oktST",
                                "shuf": "noi"}
# a curl / wget that writes into a file named after the URL, or a folder of its choosing
NAMED_BY_URL: dict[str, frozenset[str]] = {
    "curl": frozenset({"-O", "--remote-name", "--remote-name-all", "-J", "--output-dir"}),
    "wget": frozenset(),  # wget writes the URL's name unless -O says where
}
# programs whose writes are not in their words, with the subcommands / options that only read
RUN_ON_THEIR_OWN: dict[str, frozenset[str]] = {
    "patch": frozenset({"--dry-run", "--help", "--version"}),
    "unzip": frozenset({"-l", "-t", "-p", "-Z", "-v", "-z"}),
    "rsync": frozenset({"-n", "--dry-run", "--help", "--version", "--list-only"}),
    "make": frozenset({"-n", "--dry-run", "--just-print", "-q", "--question", "-v", "--version", "--help"}),
    "gmake": frozenset({"-n", "--dry-run", "--version"}), "cmake": frozenset({"--version", "--help"}),
    "ninja": frozenset({"-n", "--version"}), "meson": frozenset({"--version"}), "scons": frozenset({"-n"}),
    "npm": frozenset({"ls", "list", "view", "info", "search", "outdated", "--version", "-v", "help", "config"}),
    "npx": frozenset({"--version"}), "pnpm": frozenset({"ls", "list", "--version"}),
    "yarn": frozenset({"list", "info", "--version"}), "bun": frozenset({"--version"}),
    "pip": frozenset({"list", "show", "freeze", "--version", "help"}),
    "pip3": frozenset({"list", "show", "freeze", "--version", "help"}),
    "uv": frozenset({"--version"}), "poetry": frozenset({"--version"}), "cargo": frozenset({"--version"}),
    "go": frozenset({"version", "env", "list", "doc", "vet"}), "gradle": frozenset({"--version"}),
    "mvn": frozenset({"--version"}), "ant": frozenset(), "bazel": frozenset({"version"}),
    "godot": frozenset({"--version", "--help", "--check-only"}),
    "godot4": frozenset({"--version", "--help", "--check-only"}),
    "7z": frozenset({"l", "t"}), "7za": frozenset({"l", "t"}), "cpio": frozenset({"-t", "--list"}),
    "ar": frozenset({"t"}), "source": frozenset(), ".": frozenset(),
    "ruby": frozenset({"--version", "-v"}), "php": frozenset({"--version", "-v"}), "lua": frozenset({"-v"}),
    "Rscript": frozenset({"--version"}), "tclsh": frozenset(), "pwsh": frozenset({"--version"}),
    "deno": frozenset({"--version"}), "java": frozenset({"--version", "-version"}),
    "parallel": frozenset({"--version"}), "git-lfs": frozenset(),
    # a command run under another root or in another process's namespaces sees other files
    "chroot": frozenset({"--version", "--help"}), "nsenter": frozenset({"--version", "--help"}),
    # a database file, and what its dot-commands name (.output, .once, .save, .backup)
    "sqlite3": frozenset({"--version", "-version", "--help", "-help"}),
    # files named after a prefix, numbered as the input is cut
    "split": frozenset({"--version", "--help"}), "csplit": frozenset({"--version", "--help"}),
}
# git subcommands that leave the working tree as it is
GIT_READS = frozenset({
    "status", "diff", "log", "show", "rev-parse", "ls-files", "ls-tree", "blame", "grep", "describe", "shortlog",
    "cat-file", "rev-list", "reflog", "whatchanged", "branch", "tag", "remote", "fetch", "config", "help",
    "version", "--version", "show-ref", "for-each-ref", "name-rev", "merge-base", "count-objects", "fsck",
    "check-ignore", "check-attr", "var", "add", "commit", "push", "notes", "log", "cherry", "range-diff",
    "diff-tree", "diff-files", "diff-index", "ls-remote", "verify-commit", "bisect", "init",
})
GIT_OPTIONS_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})
# the environment through which a caller has a program run code of its choosing: a library the
# loader puts into every program, a script bash runs first, the modules and options an interpreter
# starts with (a Python, Node, Perl or Ruby program: pytest, npm and the rest too), the config and
# the programs git runs (core.fsmonitor on `git status`, diff.external on `git diff`). UNNAMED
# stands for a variable whose name only the shell knows (`export $name=...`, a nameref).
UNNAMED = ""
CODE_VARIABLES = frozenset({
    UNNAMED, "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH", "BASH_ENV",
    "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "PERLLIB",
    "RUBYOPT", "RUBYLIB",
    "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
    "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER", "GIT_EXEC_PATH", "GIT_DIR", "GIT_COMMON_DIR", "GIT_WORK_TREE", "GIT_TEMPLATE_DIR",
    "GIT_PROXY_COMMAND",
})
# `git config`: the options that only read, those that write, and those that take a value
GIT_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color",
                              "--get-colorbool", "--list", "-l"})
GIT_CONFIG_WRITES = frozenset({"--unset", "--unset-all", "--replace-all", "--add", "--rename-section",
                               "--remove-section", "--edit", "-e"})
GIT_CONFIG_VALUES = frozenset({"-f", "--file", "--blob", "--type", "-t", "--default", "--comment", "--value"})
# script(1)'s options with a value: the command it runs, the logs it writes, the rest
SCRIPT_OPTIONS = {"-c": "command", "--command": "command", "-T": "log", "--log-timing": "log", "-I": "log",
                  "--log-in": "log", "-O": "log", "--log-out": "log", "-B": "log", "--log-io": "log",
                  "-E": "other", "--echo": "other", "-m": "other", "--logging-format": "other"}
# read-only forms of subcommands otherwise writing
GIT_READ_FORMS = {"stash": frozenset({"list", "show"}), "apply": frozenset({"--check", "--stat", "--numstat",
                                                                             "--summary"}),
                  "worktree": frozenset({"list"}), "submodule": frozenset({"status", "summary"})}

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
# wrapper -> the operands before the command it runs (a duration, a lock file, a CPU mask, ...)
WRAPPER_OPERANDS: dict[str, int] = {"timeout": 1, "flock": 1, "taskset": 1, "chrt": 1, "sg": 1, "setarch": 1,
                                    "faketime": 1}
# wrapper -> its options whose value is a shell command (with one, that command is what runs), and
# the operands they may follow (su's user, sg's group, flock's lock file)
WRAPPER_SCRIPTS: dict[str, tuple[frozenset[str], int]] = {
    "flock": (frozenset({"-c", "--command"}), 1), "su": (frozenset({"-c", "--command"}), 1),
    "runuser": (frozenset({"-c", "--command"}), 1), "sg": (frozenset({"-c"}), 1),
}
# programs whose work may go on after they returned (a new session, a job queue, a terminal
# multiplexer's server, a service manager) -> the words with which they wait for it, or start
# nothing. What setsid, a wrapper, runs is read; the others run what no reader sees, which is
# unknown. (`&`, `coproc` and `disown` are the shell's own: shell.py.)
DETACHERS: dict[str, frozenset[str]] = {
    "setsid": frozenset({"-w", "--wait"}),
    "at": frozenset({"-l", "-r", "-d", "-c", "-V"}), "batch": frozenset({"-V"}), "crontab": frozenset({"-l"}),
    "systemd-run": frozenset({"--wait", "--pty", "-t", "--pipe", "-P", "--scope"}),
    "screen": frozenset({"-ls", "-list", "-r", "-R", "-x", "-v", "-wipe"}),
    "tmux": frozenset({"ls", "list-sessions", "list-windows", "list-panes", "has-session", "has", "capture-pane",
                       "kill-server", "kill-session", "-V"}),
    "daemonize": frozenset(), "start-stop-daemon": frozenset({"--stop", "-K", "--status", "-T"}),
    "dtach": frozenset(), "abduco": frozenset(),
    "pm2": frozenset({"ls", "list", "status", "logs", "show", "describe", "stop", "delete", "kill", "--version"}),
    "forever": frozenset({"list", "stop", "stopall", "logs", "--version"}),
    "supervisorctl": frozenset({"status", "stop", "avail", "tail", "version"}),
    "systemctl": frozenset({"status", "show", "cat", "is-active", "is-enabled", "is-failed", "list-units",
                            "list-unit-files", "list-timers", "stop", "kill", "--version"}),
    "service": frozenset({"status", "stop", "--status-all"}),
}
# programs that run a command elsewhere: a container (with the project mounted, it writes there as
# it likes), a host (which may be this one) -> (the subcommands or options that run nothing, the
# options that leave it running after the program returned). `docker start` runs in the
# background unless attached.
RUN_ELSEWHERE: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    **{engine: (frozenset({"ps", "images", "image", "version", "info", "inspect", "logs", "pull", "build", "login",
                           "search", "stats", "top", "history", "stop", "rm", "rmi", "kill", "--version", "-v"}),
                frozenset({"-d", "--detach"}))
       for engine in ("docker", "podman", "nerdctl")},
    "ssh": (frozenset({"-V", "-G"}), frozenset({"-f"})),
}
SYSTEM_BIN = ("/usr/bin/", "/bin/", "/usr/local/bin/", "/usr/sbin/", "/sbin/")
PYTHON = re.compile(r"python(\d+(\.\d+)?)?|py|pypy3?")
NODE = frozenset({"node", "nodejs"})
AWK = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
# python -m MODULE that write nothing of the project's
PY_READ_MODULES = frozenset({"json.tool", "http.server", "this", "site", "platform", "timeit", "sysconfig",
                             "tokenize", "dis", "pydoc", "calendar", "base64", "uuid", "zipfile -l"})


def program_writes(words: list[Word], call: "Call") -> None:
    words = _unwrap(words, call)
    if not words:
        return
    first = words[0]
    if not first.literal:
        call.unknown(f"the program {first.text} (known only when the command runs)")
        return
    name = _program_name(first.text)
    if name is None:
        call.unknown(f"the script {first.text}")
        return
    args = words[1:]
    chosen = sorted(CODE_VARIABLES & call.child.vars.keys())
    if chosen:  # and what it is seen to write besides: a target it names is refused by name
        call.unknown(f"what `{name}` runs with {chosen[0] or 'a variable named only when the command runs'}")
    if name in DETACHERS:
        if _detaches(name, args, call):
            call.unknown(f"what `{name}` runs after the command returned")
        return
    if name in RUN_ELSEWHERE:
        _run_elsewhere(name, args, call)
        return
    handler = handler_for(name)
    if handler is not None:
        handler(name, args, call)
        return
    if name in OPERAND_WRITERS:
        recursive = name in ("rmdir",) or (name in ("rm", "chmod", "chown", "chgrp") and any(
            _is_recursive_flag(a) for a in args))
        operands = _operands(args, OPERAND_WRITERS[name])
        if name in ("chmod", "chown", "chgrp") and not any(a.text.startswith("--reference") for a in args):
            operands = operands[1:]  # the mode / owner
        for word in operands:
            call.target(word, tree=recursive)
            if name == "mkdir" and word.literal:
                path = call.absolute(word.text)
                if path:
                    call.made_dir(path)
        return
    if name in COMPRESSORS:
        if any(a.literal and a.text in ("-c", "--stdout", "-l", "--list", "-t", "--test") for a in args):
            return
        for word in _operands(args, frozenset({"-S", "--suffix"})):
            call.target(word)
            for suffix in COMPRESSORS[name]:
                if word.text.endswith(suffix):
                    call.target(Word(word.text[:-len(suffix)], word.literal))
        return
    if name in COPIERS:
        _copy(name, args, call)
        return
    if name in IN_PLACE:
        _in_place(name, args, call)
        return
    if name == "rename":
        _rename(args, call)
        return
    if name in OPTION_OUTPUTS:
        for word in _option_values(args, OPTION_OUTPUTS[name], SHORT_VALUES.get(name, "")):
            if word.text != "-":
                call.target(word)
        if name in NAMED_BY_URL and _writes_by_url(name, args):
            call.unknown(f"the file {name} names after the URL")
        return
    if name in RUN_ON_THEIR_OWN:
        if not any(a.literal and a.text in RUN_ON_THEIR_OWN[name] for a in args[:2]):
            call.unknown(f"what `{name}` writes on its own")
        return


def _program_name(text: str) -> str | None:
    """The program a command word runs; None for a script (a path outside the system folders)."""
    if "/" not in text:
        return text
    base = os.path.basename(text)
    if text.startswith(SYSTEM_BIN) and base:
        return base
    return None


def _detaches(name: str, args: list[Word], call: "Call") -> bool:
    """Note that `name` leaves work running, unless its words say it waits for it (or starts
    none); True when it does."""
    if any(arg.literal and arg.text in DETACHERS[name] for arg in args):
        return False
    call.detaches(f"`{name}`")
    return True


def _run_elsewhere(name: str, args: list[Word], call: "Call") -> None:
    runs_nothing, detaching = RUN_ELSEWHERE[name]
    words = [arg.text for arg in args if arg.literal]
    if words[:1] and words[0] in runs_nothing:  # the subcommand, or an option of the program's own
        return
    call.unknown(f"what `{name}` runs")
    letters = {option[1] for option in detaching if len(option) == 2}
    clustered = any(word.startswith("-") and not word.startswith("--") and letters & set(word[1:]) for word in words)
    started = name != "ssh" and "start" in words[:2] and not {"-a", "--attach"} & set(words)
    if clustered or detaching & set(words) or started:
        call.detaches(f"`{name}`")


def _unwrap(words: list[Word], call: "Call") -> list[Word]:
    while words and words[0].literal and os.path.basename(words[0].text) in WRAPPERS:
        name = os.path.basename(words[0].text)
        takes_value = WRAPPERS[name]
        rest = words[1:]
        if name in DETACHERS:  # its own options come before what it runs
            _detaches(name, list(takewhile(lambda word: word.literal and word.text.startswith("-"), rest)), call)
        if name == "command" and rest and rest[0].literal and rest[0].text in ("-v", "-V"):
            return []  # `command -v x` looks x up
        if name in ("su", "runuser") and any(word.literal and word.text in ("-", "-l", "--login") for word in rest):
            call.child = call.child.copy()
            call.child.cwd = None  # a login shell starts in the user's home, wherever that is
        script = _script_option(rest, *WRAPPER_SCRIPTS[name], takes_value) if name in WRAPPER_SCRIPTS else None
        if script is not None:
            if script.literal:
                call.script(script.text)
            else:
                call.unknown(f"the command {name} runs ({script.text})")
            return []
        while rest and rest[0].literal and (rest[0].text.startswith("-") or (name == "env" and "=" in rest[0].text)):
            option = rest.pop(0).text
            if option == "--":
                break
            if name == "env" and "=" in option and not option.startswith("-"):
                if call.child is call.state:
                    call.child = call.state.copy()
                variable, _, value = option.partition("=")
                call.child.vars[variable] = [value]  # the wrapped command's environment
                continue
            if name == "env" and option in ("-S", "--split-string") and rest:
                call.script(rest.pop(0).text)
                return []
            if name == "env" and option in ("-C", "--chdir") and rest:
                call.unknown("the folder env -C runs in")
            if option in takes_value and rest:
                rest.pop(0)
        del rest[:WRAPPER_OPERANDS.get(name, 0)]
        if name == "coproc":  # `coproc [NAME] { ...; }`: the group's commands run, NAME does not
            braced = [index for index, word in enumerate(rest[:2]) if word.literal and word.text == "{"]
            rest = rest[braced[0] + 1:] if braced else rest
        words = rest
    return words


def _script_option(words: list[Word], options: frozenset[str], operands: int, takes_value: frozenset[str]) -> Word | None:
    """The value of one of `options` (`-c CMD`, `--command=CMD`) among a wrapper's own words: its
    options and its first `operands` operands. What comes after them is the command it runs, whose
    own `-c` (`python3 -c`) is not the wrapper's."""
    seen = 0
    items = iter(enumerate(words))
    for index, word in items:
        if not word.literal or word.text == "--":
            return None
        name, equals, value = word.text.partition("=")
        if word.text in options:
            return words[index + 1] if index + 1 < len(words) else None
        if equals and name in options:
            return Word(value, True)
        if word.text.startswith("-"):
            if word.text in takes_value:
                next(items, None)
            continue
        seen += 1
        if seen > operands:
            return None
    return None


# -- handlers of programs with their own grammar ---------------------------------------------------

def _shell(name: str, args: list[Word], call: "Call") -> None:
    """sh -c STRING [NAME ARGS...], sh SCRIPT, sh reading its stdin. Options (also `+x`, `-o
    pipefail`) come before the operands; with -c the first operand is the script."""
    index, command_mode, reads_stdin = 0, False, False
    while index < len(args):
        arg = args[index]
        if not arg.literal:
            call.unknown(f"the options of {name}")
            return
        text = arg.text
        if text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            index += 2
            continue
        if text in ("--", "-"):
            index += 1
            break
        if text.startswith("--"):
            if text in ("--version", "--help"):
                return
            index += 1
            continue
        if text.startswith(("-", "+")) and len(text) > 1:
            command_mode |= "c" in text[1:]
            reads_stdin |= "s" in text[1:]
            index += 1
            continue
        break
    operands = args[index:]
    if command_mode:
        if not operands:
            return
        script = operands[0]
        if not script.literal:
            call.unknown(f"the script of {name} -c ({script.text})")
            return
        call.script(script.text, operands[1:] or [Word(name, True)])
        return
    if operands and not reads_stdin:
        call.unknown(f"the script {operands[0].text}")
        return
    _stdin_code(name, call, lambda text: call.script(text, [Word(name, True)] + operands))


def _stdin_code(name: str, call: "Call", read: Callable[[str], None]) -> None:
    """A program that runs the code on its stdin: a here-document is read, a pipe or a file is not."""
    if call.piped or call.stdin_file:
        call.unknown(f"the code {name} reads from its input")
    for document in call.stdin:
        read(document.body)


def _eval(name: str, args: list[Word], call: "Call") -> None:
    if all(a.literal for a in args):
        call.script(" ".join(a.text for a in args))
    else:
        call.unknown(f"the code {name} runs")


def _trap(name: str, args: list[Word], call: "Call") -> None:
    operands = [a for a in args if not (a.literal and a.text.startswith("-"))]
    if operands:
        _eval(name, operands[:1], call)


def _script(name: str, args: list[Word], call: "Call") -> None:
    """script [-c COMMAND] [FILE]: records a session into FILE (typescript when none is named), the
    timing and I/O logs into the files its options name, and runs COMMAND as shell code."""
    operands: list[Word] = []
    items = iter(args)
    for arg in items:
        text = arg.text
        if not arg.literal or not text.startswith("-") or text == "-":
            operands.append(arg)
            continue
        if text.startswith("--"):
            option, equals, attached = text.partition("=")
            value = Word(attached, True) if equals else None
        else:  # a cluster: the first letter taking a value takes the rest, or the next word
            taking = next((i for i, letter in enumerate(text[1:], 1) if f"-{letter}" in SCRIPT_OPTIONS or letter == "t"),
                          None)
            if taking is None:
                continue
            option, rest = f"-{text[taking]}", text[taking + 1:]
            value = Word(rest, True) if rest else None
        if option in ("-t", "--timing"):  # -t[FILE]: the timing log, named only attached (else stderr)
            if value is not None:
                call.target(value)
            continue
        role = SCRIPT_OPTIONS.get(option)
        if role is None:
            continue
        if value is None:
            value = next(items, None)
        if value is None:
            break
        if role == "log":
            call.target(value)
        elif role == "command":
            if value.literal:
                call.script(value.text)
            else:
                call.unknown(f"the command script runs ({value.text})")
    call.target(operands[0] if operands else Word("typescript", True))


def _compiler(name: str, args: list[Word], call: "Call") -> None:
    """cc -o FILE (or -oFILE) writes FILE; without it, a.out, or with -c / -S one object or
    assembly file per source, named after it, in the folder the compiler runs in."""
    outputs: list[Word] = []
    items = iter(args)
    for arg in items:
        if arg.literal and arg.text == "-o":
            value = next(items, None)
            outputs += [value] if value is not None else []
        elif arg.literal and arg.text.startswith("-o") and not arg.text.startswith("-objc"):  # clang's -objcmt-*
            outputs.append(Word(arg.text[2:], True))
    for word in outputs:
        call.target(word)
    if outputs:
        return
    flags = {a.text for a in args if a.literal}
    if flags & COMPILER_PRINTS:
        return
    suffix = next((COMPILED_SUFFIX[f] for f in COMPILED_SUFFIX if f in flags), None)
    if suffix is None:
        call.target(Word("a.out", True))
        return
    for source in args:
        if source.literal and source.text.endswith(SOURCE_SUFFIXES) and not source.text.startswith("-"):
            stem = os.path.splitext(os.path.basename(source.text))[0]
            call.target(Word(stem + suffix, True))
        elif not source.literal:
            call.unknown(f"the file {name} names after {source.text}")


def _hookgate(name: str, args: list[Word], call: "Call") -> None:
    """`hookgate role set|clear` writes the active role and `hookgate stage complete` the stage log
    (after validating it): subagents may do neither, as they may not write those files."""
    project = _option_values(args, frozenset({"--project"}))
    words = [a.text for a in args if a.literal and not a.text.startswith("-") and a not in project]
    target = {("role", "set"): "current_role", ("role", "clear"): "current_role",
              ("stage", "complete"): "stage.jsonl"}.get(tuple(words[:2]))  # type: ignore[arg-type]
    if target is None:
        return
    folder = project[0] if project else Word(".", True)
    # the project's state folder (`.hookgate`, or `.godotmaker` in a GodotMaker project): the gate,
    # which knows the project's layout, places it (shell_writes.placed)
    call.target(Word(os.path.join(folder.text, STATE_FOLDER, target), folder.literal),
                validated=target == "stage.jsonl")


def _git(name: str, args: list[Word], call: "Call") -> None:
    rest = list(args)
    cwd: str | None = call.state.cwd
    while rest and rest[0].literal and rest[0].text.startswith("-"):
        option = rest.pop(0).text
        if option in ("-c",) or option.startswith(("--work-tree", "--git-dir", "--config-env")):
            call.unknown(f"what git writes with {option}")
            return
        if option == "-C" and rest:
            folder = rest.pop(0)
            cwd = os.path.join(cwd, folder.text) if folder.literal and cwd is not None else None
        elif option in GIT_OPTIONS_WITH_VALUE and rest:
            rest.pop(0)
    if not rest:
        return
    sub = rest[0]
    if not sub.literal:
        call.unknown(f"the git subcommand {sub.text}")
        return
    if sub.text == "config":
        _git_config(rest[1:], cwd, call)
        return
    if sub.text in GIT_READS:
        if sub.text in ("branch", "tag", "remote", "notes") or not any(
                a.literal and a.text in ("-o", "--output") for a in rest[1:]):
            return
    plain_args = [a.text for a in rest[1:] if not (a.literal and a.text in ("-q", "--quiet"))]
    if sub.text in ("checkout", "switch") and len(plain_args) == 2 and plain_args[0] in ("-b", "-c"):
        return  # a new branch at HEAD: the files stay as they are
    reads = GIT_READ_FORMS.get(sub.text, frozenset())
    if any(a.literal and a.text in reads for a in rest[1:2]) or (
            sub.text == "apply" and any(a.literal and a.text in reads for a in rest[1:])):
        return
    call.unknown(f"what `git {sub.text}` writes in the working tree")


def _git_config(args: list[Word], cwd: str | None, call: "Call") -> None:
    """`git config` that sets, unsets or edits writes a config file: the one --file names, the
    user's (--global), or the repository's. Git runs programs some keys name, on its own."""
    options: list[str] = []
    operands: list[Word] = []
    items = iter(args)
    for arg in items:
        if arg.literal and arg.text.startswith("-"):
            options.append(arg.text.split("=", 1)[0])
            if arg.text in GIT_CONFIG_VALUES:
                next(items, None)
        else:
            operands.append(arg)
    action = operands[0].text if operands and operands[0].literal else None
    if action in ("get", "list") or GIT_CONFIG_READS & set(options):
        return
    if not (action in ("set", "unset", "rename-section", "remove-section", "edit") or len(operands) >= 2
            or GIT_CONFIG_WRITES & set(options)):
        return  # `git config KEY`: a read
    settings = _git_config_key(action, operands, options)
    if not any(option in ("-f", "--file") for option in options):
        files = _git_config_files(options, cwd)
        if files is None:
            call.unknown("the config file `git config` writes")
        for path in files or ():
            call.target(Word(path, True), settings=settings)
        return
    for word in _option_values(args, frozenset({"-f", "--file"})):
        call.target(word, settings=settings)


def _git_config_key(action: str | None, operands: list[Word], options: list[str]) -> tuple[str, ...]:
    """The one key a `git config` sets or unsets, lower case (the gate lets a key that names no
    program through); () when it renames or removes a section, opens an editor, or its key is
    not known before it runs."""
    if action in ("edit", "rename-section", "remove-section") or {
            "-e", "--edit", "--rename-section", "--remove-section"} & set(options):
        return ()
    keyed = operands[1:] if action in ("set", "unset") else operands
    return (keyed[0].text.lower(),) if keyed and keyed[0].literal else ()


def _git_config_files(options: list[str], cwd: str | None) -> list[str] | None:
    """The config files `git config` with these options may write (None: not known before it runs)."""
    if "--system" in options:
        return []  # the system's, outside every project: not hookgate's to judge
    if "--global" in options:
        home = os.path.expanduser("~")
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        return [os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config")]
    if cwd is None:
        return None
    name = "config.worktree" if "--worktree" in options else "config"
    folder = cwd
    while True:  # the repository the command runs in: the first .git on the way up
        dot_git = os.path.join(folder, ".git")
        if os.path.isdir(dot_git):
            return [os.path.join(dot_git, name)]
        if os.path.exists(dot_git):  # a submodule's or a worktree's .git file names its folder elsewhere
            return _config_of_git_file(dot_git, name)
        parent = os.path.dirname(folder)
        if parent == folder:  # none yet: one the command makes first (`git init && git config ...`)
            return [os.path.join(cwd, ".git", name)]
        folder = parent


def _config_of_git_file(dot_git: str, name: str) -> list[str] | None:
    """The config `git config` writes in the repository a `.git` file names (`gitdir: PATH`): a
    submodule's (.git/modules/NAME/config), or a worktree's shared one (its `commondir`'s config)
    or, with --worktree, its own config.worktree. None when the file does not name a folder."""
    def first_line(path: str) -> str | None:
        try:
            with open(path, "rb") as f:
                return f.read(4096).split(b"\n", 1)[0].decode().strip()
        except (OSError, UnicodeDecodeError):
            return None

    named = first_line(dot_git)
    if not named or not named.startswith("gitdir:"):
        return None
    git_dir = os.path.normpath(os.path.join(os.path.dirname(dot_git), named[len("gitdir:"):].strip()))
    common = first_line(os.path.join(git_dir, "commondir")) if name == "config" else None
    folder = os.path.normpath(os.path.join(git_dir, common)) if common else git_dir
    return [os.path.join(folder, name)]


def _tar(name: str, args: list[Word], call: "Call") -> None:
    if not args:
        return
    first = args[0].text if args[0].literal else ""
    flags = "".join(a.text.lstrip("-") for a in args if a.literal and a.text.startswith("-") and
                    not a.text.startswith("--")) + (first if not first.startswith("-") else "")
    long = {a.text.split("=")[0] for a in args if a.literal and a.text.startswith("--")}
    if "x" in flags or long & {"--extract", "--get", "--delete", "--append", "--update"} or "r" in flags or (
            "u" in flags):
        call.unknown("the files tar extracts")
        return
    if "c" in flags or "--create" in long:
        for word in _option_values(args, frozenset({"-f", "--file"}), "f"):
            if word.text != "-":
                call.target(word)
        if first and not first.startswith("-") and "f" in first and len(args) > 1:
            call.target(args[1])  # `tar cf out.tar ...`


def _sed(name: str, args: list[Word], call: "Call") -> None:
    scripts, files, in_place = _sed_parts(args)
    for script in scripts:
        if not script.literal or re.search(_SED_WRITES, script.text):
            call.unknown("the files a sed script writes (w / e commands)")
    if in_place:
        for word in files:
            call.target(word)


# (sources, not compiled patterns: each is compiled by `re`, and kept in its cache, the first time a
# command needs it; most commands need none, and compiling them all cost every cold Bash call ~3 ms)
_SED_WRITES = r"(^|[;\n{}]|[/|,#%@]\s*[gpiImMe0-9]*)\s*[wWe](\s|$)|\b[wWe]\s+\S+\s*$"


def _sed_parts(args: list[Word]) -> tuple[list[Word], list[Word], bool]:
    in_place, scripts, operands = False, [], []
    items = iter(args)
    for arg in items:
        text = arg.text
        if arg.literal and text.startswith("--"):
            in_place |= text.startswith("--in-place")
            if text in ("--expression", "--file"):
                value = next(items, None)
                if value is not None:
                    scripts.append(value if text == "--expression" else Word("w", True))
            elif text.startswith(("--expression=", "--file=")):
                scripts.append(Word(text.split("=", 1)[1], True) if text.startswith("--e") else Word("w", True))
            continue
        if arg.literal and text.startswith("-") and len(text) > 1:
            for j, flag in enumerate(text[1:]):
                if flag == "i":
                    in_place = True
                    break  # the rest of the cluster is the backup suffix
                if flag in "efl":
                    attached = text[j + 2:]
                    value_word = Word(attached, True) if attached else next(items, None)
                    if flag == "e" and value_word is not None:
                        scripts.append(value_word)
                    elif flag == "f":
                        scripts.append(Word("w", True))  # a script file: what it does is unknown
                    break
            continue
        operands.append(arg)
    if not scripts and operands:
        scripts, operands = [operands[0]], operands[1:]
    return scripts, operands, in_place


def _perl(name: str, args: list[Word], call: "Call") -> None:
    in_place, code, operands = False, [], []
    items = iter(args)
    for arg in items:
        text = arg.text
        if arg.literal and text.startswith("-") and len(text) > 1 and not text.startswith("--"):
            for j, flag in enumerate(text[1:]):
                if flag == "i":
                    in_place = True
                    break
                if flag in "eE":
                    value = text[j + 2:]
                    code.append(Word(value, True) if value else next(items, Word("", True)))
                    break
                if flag in "IMmxdDC":
                    if not text[j + 2:]:
                        next(items, None)
                    break
            continue
        operands.append(arg)
    if not code:
        if operands:
            call.unknown(f"the perl script {operands[0].text}")
            return
        _stdin_code(name, call, lambda body: _code_unknown(call, "perl", body, _PERL_RISKY))
        return
    for word in code:
        if not word.literal:
            call.unknown("perl code known only when the command runs")
        else:
            _code_unknown(call, "perl", word.text, _PERL_RISKY)
    if in_place:
        for word in operands:
            call.target(word)


_PERL_RISKY = (r"\b(open|sysopen|unlink|rename|system|exec|qx|truncate|mkdir|rmdir|link|symlink|chmod|"
               r"chown|utime|eval|do|require|syscall|File::\w+|Path::\w+|IO::\w+|POSIX)\b|`|\$\^I")


def _awk(name: str, args: list[Word], call: "Call") -> None:
    program: Word | None = None
    operands: list[Word] = []
    in_place = False
    items = iter(args)
    for arg in items:
        text = arg.text
        if arg.literal and text in ("-f", "--file"):
            call.unknown("the awk program file")
            return
        if arg.literal and text in ("-i", "--include"):
            value = next(items, None)
            in_place |= value is not None and value.text in ("inplace", "inplace.awk")
            continue
        if arg.literal and text in ("-F", "-v", "--assign", "--field-separator"):
            next(items, None)
            continue
        if arg.literal and text.startswith("-") and len(text) > 1 and program is None:
            continue
        if program is None:
            program = arg
        else:
            operands.append(arg)
    if program is not None:
        if not program.literal:
            call.unknown("an awk program known only when the command runs")
        elif re.search(_AWK_RISKY, program.text):
            call.unknown("the files an awk program writes (print >, system, |)")
    if in_place:
        for word in operands:
            if "=" not in word.text:
                call.target(word)


_AWK_RISKY = r"\b(system|close|fflush)\s*\(|\bprintf?\b[^;{}\n]*(>|\|)|\|\s*getline|\bgetline\b[^;{}]*<"


def _dd(name: str, args: list[Word], call: "Call") -> None:
    for arg in args:
        if arg.text.startswith("of="):
            call.target(Word(arg.text[3:], arg.literal))


def _apply_patch(name: str, args: list[Word], call: "Call") -> None:
    from ..formats.apply_patch import touched_files  # on use: few commands are patches

    texts = [a.text for a in args if a.literal] + [d.body for d in call.stdin]
    for text in texts:
        for path in touched_files(text):
            call.target(Word(path, True))
    if call.piped or call.stdin_file or any(not a.literal for a in args):
        call.unknown("the files of a patch read from the input")


def _uniq(name: str, args: list[Word], call: "Call") -> None:
    operands = _operands(args, frozenset({"-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"}))
    if len(operands) >= 2:
        call.target(operands[1])  # `uniq IN OUT` writes OUT


def _xxd(name: str, args: list[Word], call: "Call") -> None:
    operands = _operands(args, frozenset({"-c", "-g", "-l", "-s", "-o", "-n", "-cols", "-len", "-seek"}))
    if len(operands) >= 2:
        call.target(operands[1])


def _zip(name: str, args: list[Word], call: "Call") -> None:
    """`zip ARCHIVE FILES`: writes the archive; -m moves the files into it (removes them)."""
    operands = _operands(args, frozenset({"-b", "-n", "-t", "-tt", "-x", "-i", "-O", "--out", "-P", "-Z"}))
    flags = "".join(a.text for a in args if a.literal and a.text.startswith("-") and not a.text.startswith("--"))
    if not operands:
        return
    call.target(operands[0])
    if "m" in flags or any(a.literal and a.text == "--move" for a in args):
        for word in operands[1:]:
            call.target(word, tree=True)


def _find(name: str, args: list[Word], call: "Call") -> None:
    """`find START... EXPR`: -delete, -exec/-execdir/-ok CMD and -fprint FILE write. The files it
    acts on are found (by -name/-iname/-path/-type/-maxdepth/-mindepth) as find would find them."""
    index = 0
    while index < len(args) and args[index].literal and args[index].text in ("-H", "-L", "-P"):
        index += 1
    starts: list[Word] = []
    while index < len(args) and not (args[index].literal and args[index].text.startswith(("-", "(", "!"))):
        starts.append(args[index])
        index += 1
    expression = args[index:]
    execs: list[list[Word]] = []
    deletes = False
    tests: list[tuple[str, str]] = []
    plain = True  # only tests this reader applies, joined by "and"
    items = iter(expression)
    for arg in items:
        text = arg.text if arg.literal else ""
        if text == "-delete":
            deletes = True
        elif text in ("-exec", "-execdir", "-ok", "-okdir"):
            inner: list[Word] = []
            for word in items:
                if word.literal and word.text in (";", "+"):
                    break
                inner.append(word)
            execs.append(inner)
        elif text in ("-fprint", "-fprint0", "-fls", "-fprintf"):
            target = next(items, None)
            if target is not None:
                call.target(target)
            if text == "-fprintf":
                next(items, None)
        elif text in ("-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-type", "-maxdepth",
                      "-mindepth"):
            value = next(items, None)
            if value is None or not value.literal:
                plain = False
            else:
                tests.append((text, value.text))
        elif text in ("-print", "-print0", "-ls", "-quit", "-prune", "-true", "-a", "-and") or text == "-printf":
            if text == "-printf":
                next(items, None)
        else:
            plain = False
            if text in ("-newer", "-size", "-mtime", "-mmin", "-user", "-group", "-perm", "-regex", "-iregex",
                        "-atime", "-ctime", "-amin", "-cmin", "-links", "-inum", "-samefile", "-uid", "-gid",
                        "-used", "-fstype", "-context", "-newermt", "-anewer", "-cnewer", "-lname", "-ilname"):
                next(items, None)
    writing_execs = [inner for inner in execs if _writes_anything(inner + [Word("{}", False)], call)]
    if not deletes and not writing_execs:
        return
    if not plain:
        call.unknown("the files find acts on (an expression hookgate does not evaluate)")
        return
    if not starts:
        starts = [Word(".", True)]
    found: list[str] = []
    for start in starts:
        if not start.literal:
            call.unknown(f"the files find searches under {start.text}")
            return
        root = call.absolute(start.text)
        if root is None:
            call.unknown(f"the files find searches under {start.text}")
            return
        more = _found(root, start.text, tests)
        if more is None:
            call.unknown(f"the files under {start.text} (too many to list)")
            return
        found.extend(more)
    for path in found:
        if deletes:
            call.target(Word(path, True))
        for inner in writing_execs:
            call.command([Word(path, True) if w.literal and w.text == "{}" else
                          Word(w.text.replace("{}", path), w.literal) for w in inner])


def _found(root: str, shown: str, tests: list[tuple[str, str]] | None) -> list[str] | None:
    """The paths `find` visits under root that pass `tests` (None: any), as absolute paths."""
    from fnmatch import fnmatch, fnmatchcase
    if not os.path.lexists(root):
        return []
    if not os.path.isdir(root) or os.path.islink(root):
        paths = [(root, shown, 0)]
    else:
        paths = [(root, shown, 0)]
        base_depth = root.rstrip("/").count("/")
        for folder, dirs, files in os.walk(root):
            depth = folder.rstrip("/").count("/") - base_depth + 1
            shown_folder = shown.rstrip("/") + folder[len(root.rstrip("/")):]
            paths.extend((os.path.join(folder, n), os.path.join(shown_folder, n), depth) for n in dirs + files)
            if len(paths) > MAX_FOUND:
                return None
    out: list[str] = []
    for path, spelled, depth in paths:
        ok = True
        for test, value in tests or []:
            base = os.path.basename(path.rstrip("/"))
            if test == "-name":
                ok = fnmatchcase(base, value)
            elif test == "-iname":
                ok = fnmatch(base.lower(), value.lower())
            elif test in ("-path", "-wholename"):
                ok = fnmatchcase(spelled, value)
            elif test in ("-ipath", "-iwholename"):
                ok = fnmatchcase(spelled.lower(), value.lower())
            elif test == "-type":
                kinds = {"f": os.path.isfile(path) and not os.path.islink(path), "d": os.path.isdir(path) and
                         not os.path.islink(path), "l": os.path.islink(path)}
                ok = any(kinds.get(k, True) for k in value.split(","))
            elif test == "-maxdepth":
                ok = value.isdigit() and depth <= int(value)
            elif test == "-mindepth":
                ok = value.isdigit() and depth >= int(value)
            if not ok:
                break
        if ok:
            out.append(path)
    return out


def _writes_anything(words: list[Word], call: "Call") -> bool:
    """Whether `words`, run as a command (with unknown operands), may write anything."""
    probe = call.probe()
    program_writes(list(words), probe)
    return bool(probe.reader.writes or probe.reader.unknown)


def _xargs(name: str, args: list[Word], call: "Call") -> None:
    """`... | xargs CMD ARGS`: CMD runs with operands read from the input: whatever CMD would
    write with an operand nobody knows yet is unknown."""
    takes_value = {"-I", "-i", "-n", "-P", "-d", "-L", "-l", "-s", "-E", "-e", "-a", "--max-args", "--max-procs",
                   "--delimiter", "--max-lines", "--max-chars", "--eof", "--arg-file", "--replace"}
    rest = list(args)
    replace = None
    while rest and rest[0].literal and rest[0].text.startswith("-"):
        option = rest.pop(0).text
        if option in ("-I", "--replace") and rest:
            replace = rest.pop(0).text
        elif option.startswith("-I") and len(option) > 2:
            replace = option[2:]
        elif option in takes_value and rest:
            rest.pop(0)
    if not rest:
        return  # xargs echo
    unknown = Word("<input of xargs>", False)
    if replace:
        inner = [unknown if w.literal and replace in w.text else w for w in rest]
    else:
        inner = rest + [unknown]
    call.command(inner)


def _python(name: str, args: list[Word], call: "Call") -> None:
    code: list[Word] = []
    items = iter(args)
    script = None
    for arg in items:
        text = arg.text
        if not arg.literal:
            call.unknown(f"what {name} runs ({text})")
            return
        if text in ("--version", "-V", "--help", "-h"):
            return
        if text == "-m":
            module = next(items, None)
            if module is None or module.text not in PY_READ_MODULES:
                call.unknown(f"what `{name} -m {module.text if module else ''}` writes")
            return
        if text.startswith("-") and len(text) > 1 and not text.startswith("--"):
            flags = text[1:]
            if "c" in flags:
                value = flags[flags.index("c") + 1:]
                code.append(Word(value, True) if value else next(items, Word("", True)))
                break
            if flags[-1] in "WXQ":
                next(items, None)
            continue
        if text == "-":
            break
        script = arg
        break
    if code:
        for word in code:
            if not word.literal:
                call.unknown("python code known only when the command runs")
            else:
                _python_code(call, word.text)
        return
    if script is not None:
        call.unknown(f"what the script {script.text} writes")
        return
    _stdin_code(name, call, lambda body: _python_code(call, body))


def _node(name: str, args: list[Word], call: "Call") -> None:
    items = iter(args)
    for arg in items:
        text = arg.text
        if not arg.literal:
            call.unknown(f"what {name} runs ({text})")
            return
        if text in ("--version", "-v", "--help", "-h"):
            return
        if text in ("-e", "--eval", "-p", "--print"):
            code = next(items, None)
            if code is None or not code.literal:
                call.unknown("node code known only when the command runs")
            else:
                _code_unknown(call, "node", code.text, _JS_RISKY)
            return
        if text.startswith("-") and text != "-":
            continue
        if text == "-":
            break
        call.unknown(f"what the script {text} writes")
        return
    _stdin_code(name, call, lambda body: _code_unknown(call, "node", body, _JS_RISKY))


_JS_RISKY = r"\b(require|import|process|child_process|fs|Deno|Bun|eval|Function|globalThis|module)\b"


def _code_unknown(call: "Call", language: str, code: str, risky: str) -> None:
    if re.search(risky, code):
        call.unknown(f"the files {language} code may write")


def _python_code(call: "Call", code: str) -> None:
    """Literal writes of a Python program are targets; any other way it may write is unknown."""
    for path, tree in python_writes(code):
        call.target(Word(path, True), tree=tree)
    rest = re.sub(_PY_SAFE, " ", code)
    for pattern in (_PY_OPEN, _PY_PATH_WRITE, _PY_ONE_PATH, _PY_TWO_PATHS):
        rest = re.sub(pattern, " ", rest)
    if re.search(_PY_RISKY, rest):
        call.unknown("the files python code may write (paths not written literally)")


# -- operands and options ----------------------------------------------------------------------------

def _is_recursive_flag(arg: "Word") -> bool:
    text = arg.text
    return arg.literal and (text == "--recursive" or (text[:2] != "--" and text[:1] == "-" and bool(set(text) & {"r", "R"})))


def _operands(args: list[Word], takes_value: frozenset[str]) -> list[Word]:
    operands: list[Word] = []
    items = iter(args)
    options_done = False
    for arg in items:
        if not options_done and arg.literal and arg.text.startswith("-") and arg.text != "-":
            if arg.text == "--":
                options_done = True
            elif arg.text in takes_value:
                next(items, None)
            continue
        operands.append(arg)
    return operands


def _in_place(name: str, args: list[Word], call: "Call") -> None:
    writes_with, reports_with, not_files = IN_PLACE[name]
    options = {arg.text.split("=", 1)[0] for arg in args if arg.literal and arg.text.startswith("-")}
    if (writes_with and not writes_with & options) or reports_with & options:
        return
    for word in _operands(args, frozenset())[not_files:]:
        path = call.absolute(word.text) if word.literal else None
        folder = word.text.endswith("/") or os.path.basename(word.text) in (".", "..")
        if path is not None and (folder or call.is_dir(path)):
            call.unknown(f"the files {name} rewrites under {word.text}")
        elif word.text != "-":
            call.target(word)


def _rename(args: list[Word], call: "Call") -> None:
    """rename EXPRESSION FILE... (Perl's) or FROM TO FILE... (util-linux's): every FILE leaves its
    name (a write of it, as mv's source), for a new one only running the expression tells."""
    if any(arg.literal and arg.text in ("-n", "--no-act", "--nono", "--dry-run", "-V", "--version") for arg in args):
        return
    given = any(arg.literal and arg.text in ("-e", "-E") for arg in args)  # the expression as an option's value
    files = _operands(args, frozenset({"-e", "-E"}))[0 if given else 1:]
    for word in files:
        call.target(word)
    if files:
        call.unknown("the names rename gives the files")


def _copy(name: str, args: list[Word], call: "Call") -> None:
    target_dir: Word | None = None
    cleaned: list[Word] = []
    items = iter(args)
    for arg in items:
        if arg.literal and arg.text in ("-t", "--target-directory"):
            target_dir = next(items, None)
        elif arg.literal and arg.text.startswith("--target-directory="):
            target_dir = Word(arg.text.split("=", 1)[1], True)
        else:
            cleaned.append(arg)
    operands = _operands(cleaned, COPIERS[name])
    flags = "".join(a.text for a in cleaned if a.literal and a.text.startswith("-") and not a.text.startswith("--"))
    longs = {a.text for a in cleaned if a.literal and a.text.startswith("--")}
    recursive = bool(set(flags) & set("rRa")) or bool(longs & {"--recursive", "--archive"})
    linking = name in ("ln", "link")
    symbolic = name == "ln" and ("s" in flags or "--symbolic" in longs)
    into_dir = "T" not in flags and "--no-target-directory" not in longs
    if target_dir is not None:
        sources, dest = operands, target_dir
    elif len(operands) >= 2:
        sources, dest = operands[:-1], operands[-1]
    elif operands and linking:
        sources, dest = operands, Word(".", True)  # `ln -s TARGET` links into the current directory
    else:
        return
    if not dest.literal:
        call.target(dest)
        return
    dest_path = call.absolute(dest.text)
    dest_is_dir = dest_path is not None and into_dir and (
        call.is_dir(dest_path) or dest.text.endswith("/") or target_dir is not None or len(sources) > 1)
    for source in sources:
        if not source.literal:
            # a source named only at run time lands under a name nobody knows yet, unless DEST is a file
            call.target(Word(source.text, False) if dest_is_dir else dest)
            if name == "mv":
                call.target(source)
            continue
        src_path = call.absolute(source.text)
        base = os.path.basename(source.text.rstrip("/"))
        contents_only = source.text.rstrip("/").endswith("/.") or base in (".", "..")
        landing = os.path.join(dest.text, base) if dest_is_dir and not contents_only else dest.text
        if recursive and src_path is not None and os.path.isdir(src_path) and not os.path.islink(src_path):
            copied = _tree_files(src_path)
            if copied is None:
                call.unknown(f"the files {name} copies from {source.text} (too many to list)")
            else:
                for rel in copied:
                    call.target(Word(os.path.join(landing, rel), True))
        call.target(Word(landing, True), tree=name == "mv" and src_path is not None and os.path.isdir(src_path))
        if name == "mv":
            call.target(source, tree=True)  # a move also removes the source, with all it holds
        elif linking:
            # a hard link shares the source's content from now on, a symbolic link points at it:
            # writing through the new name writes the source, so the link counts as a write of it
            if symbolic:
                call.target(Word(_link_target(source.text, landing), True), tree=True)  # a link to a folder
            else:
                call.target(source)


def _link_target(target: str, link: str) -> str:
    """Where a symbolic link named `link` pointing at `target` leads (relative to the link's folder)."""
    if os.path.isabs(target):
        return target
    return os.path.join(os.path.dirname(link) or ".", target)


def _tree_files(root: str) -> list[str] | None:
    rels: list[str] = [""]
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        rels.extend(os.path.normpath(os.path.join(rel, n)) for n in dirs + files)
        if len(rels) > MAX_FOUND:
            return None
    return [r for r in rels if r]


def _option_values(args: list[Word], options: frozenset[str], short_values: str = "") -> list[Word]:
    """The values of `options` (also `--opt=V`, `-oV` and a cluster `-fsSLo V`)."""
    values: list[Word] = []
    items = iter(args)
    shorts = {o[1] for o in options if len(o) == 2 and o.startswith("-")}
    for arg in items:
        if not arg.literal:
            continue
        text = arg.text
        if text in options:
            value = next(items, None)
            if value is not None:
                values.append(value)
        elif "=" in text and text.split("=", 1)[0] in options:
            values.append(Word(text.split("=", 1)[1], True))
        elif text.startswith("-") and not text.startswith("--") and len(text) > 2:
            for j, flag in enumerate(text[1:]):
                if flag in shorts:
                    value_text = text[j + 2:]
                    if value_text:
                        values.append(Word(value_text, True))
                    else:
                        value = next(items, None)
                        if value is not None:
                            values.append(value)
                    break
                if flag in short_values:
                    if not text[j + 2:]:
                        next(items, None)
                    break
    return values


def _writes_by_url(name: str, args: list[Word]) -> bool:
    if name == "wget":
        return not any(a.literal and (a.text in ("-O", "--output-document", "--spider") or a.text.startswith(
            ("-O", "--output-document="))) for a in args) and not any(
            a.literal and a.text.startswith("-") and not a.text.startswith("--") and "O" in a.text for a in args)
    flags = {a.text for a in args if a.literal}
    clusters = [a.text for a in args if a.literal and a.text.startswith("-") and not a.text.startswith("--")]
    return bool(flags & NAMED_BY_URL[name]) or any("O" in c.split("o")[0] for c in clusters)


# -- writes inside other languages ---------------------------------------------------------------

_PY_STR = r"""[rRbBuU]?(['"])([^'"]+)\{n}"""  # a literal string; {n} is its quote's group number
_PY_OPEN = r"\bopen\(\s*" + _PY_STR.format(n=1) + r"""\s*,\s*(?:mode\s*=\s*)?[rRbB]?(['"])([^'"]*)\3\s*\)"""
_PY_PATH_WRITE = (
    r"\b(?:pathlib\.)?Path\(\s*" + _PY_STR.format(n=1) + r"\s*\)\s*\.\s*(write_text|write_bytes|touch|mkdir|unlink|"
    r"""rmdir|rename|replace|symlink_to|hardlink_to|chmod|open\(\s*['"][^'"]*[wax+][^'"]*['"]\s*\))""")
_PY_ONE_PATH = (r"\b(?:os\.(?:remove|unlink|rmdir|removedirs|mkdir|makedirs|truncate|chmod)|shutil\.rmtree)"
                r"\(\s*" + _PY_STR.format(n=1) + r"\s*[,)]")
_PY_TWO_PATHS = (r"\b(os\.rename|os\.replace|shutil\.(?:copy|copy2|copyfile|copytree|move))\(\s*"
                 + _PY_STR.format(n=2) + r"\s*,\s*" + _PY_STR.format(n=4) + r"\s*[,)]")
# literal reads, which write nothing
_PY_SAFE = (r"""\bopen\(\s*[rRbBuU]?(['"])[^'"]+\1\s*(,\s*(mode\s*=\s*)?['"][rbt]*['"]\s*)?\)|"""
            r"""\b(?:pathlib\.)?Path\(\s*[rRbBuU]?(['"])[^'"]*\4\s*\)\s*\.\s*(read_text|read_bytes|exists|"""
            r"""is_file|is_dir|stat|resolve|glob|rglob|iterdir)\(""")
# anything else that can write a file (or run something that does)
_PY_RISKY = (
    r"\b(open|Path|pathlib|shutil|subprocess|system|popen|Popen|spawn\w*|exec\w*|eval|compile|__import__|"
    r"importlib|getattr|ctypes|tarfile|zipfile|tempfile|sqlite3|fileinput|shelve|dbm|pty|mmap|write_text|"
    r"write_bytes|savefig|to_csv|to_json|to_excel|to_parquet|copyfile|rmtree|io|codecs|builtins|globals|"
    r"os\s*\.\s*(remove|unlink|rename|renames|replace|rmdir|removedirs|mkdir|makedirs|truncate|ftruncate|chmod|"
    r"lchmod|fchmod|chown|symlink|link|write|open|fdopen|utime|mknod|mkfifo|dup2|posix_spawn\w*|startfile|"
    r"execv\w*|system|popen|spawn\w*))\b")


def python_writes(code: str) -> list[tuple[str, bool]]:
    """(path, whether everything under it may change) for each literal path a Python program writes
    (open for writing, pathlib, os, shutil)."""
    paths = [(m.group(2), False) for m in re.finditer(_PY_OPEN, code) if set(m.group(4)) & set("wax+")]
    paths += [(m.group(2), m.group(3) in ("rmdir", "rename", "replace")) for m in re.finditer(_PY_PATH_WRITE, code)]
    paths += [(m.group(2), "rmtree" in m.group(0) or "rmdir" in m.group(0)) for m in re.finditer(_PY_ONE_PATH, code)]
    for m in re.finditer(_PY_TWO_PATHS, code):
        if m.group(1) in ("os.rename", "os.replace", "shutil.move"):
            paths.append((m.group(3), True))  # the source goes away, with all it holds
        paths.append((m.group(5), m.group(1) == "shutil.copytree"))
    return paths


_HANDLERS: dict[str, Callable[[str, list[Word], "Call"], None]] = {
    **{shell: _shell for shell in SHELLS}, "eval": _eval, "trap": _trap, "hookgate": _hookgate, "git": _git,
    "tar": _tar, "bsdtar": _tar, "sed": _sed, "gsed": _sed, "perl": _perl, **{a: _awk for a in AWK}, "dd": _dd,
    "apply_patch": _apply_patch, "applypatch": _apply_patch, "uniq": _uniq, "xxd": _xxd, "find": _find,
    "xargs": _xargs, "zip": _zip, **{n: _node for n in NODE}, "script": _script,
    **{compiler: _compiler for compiler in COMPILERS},
}


def handler_for(name: str) -> Callable[[str, list[Word], "Call"], None] | None:
    if PYTHON.fullmatch(name):
        return _python
    return _HANDLERS.get(name)
