"""`hookgate demo [--keep DIR]`: the scripted session of hookgate/demo, then the parity report."""

from __future__ import annotations

import argparse
from pathlib import Path


def main(args: list[str]) -> int:
    from hookgate.demo import main as demo

    parser = argparse.ArgumentParser(prog="hookgate demo", description="a scripted pipeline session through "
                                     "Claude Code's, Codex's and OpenCode's adapters, gates firing, then the parity report")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="play in DIR and keep it (default: a temporary folder)")
    ns = parser.parse_args(args[1:])
    return demo(ns.keep)
