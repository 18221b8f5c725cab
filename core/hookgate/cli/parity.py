"""`hookgate parity [--format md|json|html] [--output FILE]`: the runtime parity report.
`--installed`: the runtimes on PATH against the versions the report proves.
`--diff OLD NEW`: what changed between two capability tables (keys such as claude-2.1.290)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def main(args: list[str]) -> int:
    from hookgate.parity.render import FORMATS

    parser = argparse.ArgumentParser(prog="hookgate parity", description="which gate each runtime can enforce, and how")
    parser.add_argument("--format", choices=sorted(FORMATS), default="md")
    parser.add_argument("--output", "-o", type=Path, help="write to FILE instead of stdout")
    parser.add_argument("--installed", action="store_true",
                        help="say, per runtime on PATH, whether its version is the one the report proves")
    parser.add_argument("--diff", nargs=2, metavar=("OLD", "NEW"),
                        help="what changed between two capability tables (e.g. claude-2.1.290 claude-2.1.332)")
    ns = parser.parse_args(args[1:])
    if ns.installed:
        return installed()
    if ns.diff:
        from hookgate.parity.diff import render

        try:
            sys.stdout.write(render(*ns.diff))
        except KeyError as exc:
            print(f"hookgate parity --diff: {exc.args[0]}", file=sys.stderr)
            return 2
        return 0
    from hookgate.parity.matrix import compute

    rendered = FORMATS[ns.format](compute())
    data = rendered if isinstance(rendered, bytes) else str(rendered).encode()
    if ns.output:
        ns.output.write_bytes(data)
        print(f"written: {ns.output}")
    else:
        sys.stdout.buffer.write(data)
    return 0


def installed() -> int:
    """Exits 1 when a runtime on PATH is a version hookgate does not support."""
    from hookgate.parity.installed import all_installed

    found = all_installed(os.environ)
    for runtime in found:
        print(f"{runtime.standing:<11} {runtime.message}")
    return 1 if any(r.standing == "unsupported" for r in found) else 0
