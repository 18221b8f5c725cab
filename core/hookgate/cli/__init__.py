"""The `hookgate` command. Each command lives in its own module and is imported only when used,
so the hook path pays for nothing but itself (not even `importlib` or `__future__`)."""

import sys

COMMANDS: dict[str, tuple[str, str]] = {
    "hook": ("hookgate.client", "stdin adapter: one payload in, the runtime's answer out"),
    "install": ("hookgate.cli.install", "merge hookgate's registrations into a runtime's config"),
    "uninstall": ("hookgate.cli.install", "remove exactly what install added"),
    "serve": ("hookgate.cli.serve", "JSON-RPC 2.0 core on stdin/stdout (the OpenCode plugin runs it)"),
    "role": ("hookgate.cli.role", "set, clear or show the active pipeline role"),
    "stage": ("hookgate.cli.stage", "validate a pipeline role's outputs, then record its completion"),
    "metrics": ("hookgate.cli.metrics", "list sessions, or write a readable HTML report of one"),
    "explain": ("hookgate.cli.explain", "why one decided call went as it did: its event, gates, rule, alternatives"),
    "replay": ("hookgate.cli.replay", "decide a recorded session's events again under a policy; print what changed"),
    "parity": ("hookgate.cli.parity", "the runtime parity report: which gate each runtime enforces, and how"),
    "doctor": ("hookgate.cli.doctor", "check the installation: what each runtime would skip, and the fix"),
    "warm": ("hookgate.cli.warm", "start, stop or show the project's warm core (hook calls start it themselves)"),
    "migrate": ("hookgate.cli.migrate", "replace GodotMaker's hook registrations by hookgate's (a dry run unless --apply)"),
    "demo": ("hookgate.cli.demo", "a scripted pipeline session through the adapters, gates firing"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {help}" for name, (_, help) in COMMANDS.items()]
    return "usage: hookgate COMMAND [ARGS]\n\ncommands:\n" + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in {"-h", "--help", "help"}:
        sys.stdout.write(usage())
        return 0 if args else 2
    if args[0] in {"-V", "--version"}:
        from hookgate import __version__

        print(f"hookgate {__version__}")
        return 0
    entry = COMMANDS.get(args[0])
    if entry is None:
        sys.stderr.write(f"hookgate: unknown command {args[0]!r}\n\n{usage()}")
        return 2
    try:
        return int(__import__(entry[0], fromlist=["main"]).main(args) or 0)
    except BrokenPipeError:  # `hookgate ... | head`: the reader left, nothing more to say
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130
