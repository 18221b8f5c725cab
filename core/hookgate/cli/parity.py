"""`hookgate parity [--format md|json|html] [--output FILE]`: the runtime parity report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(args: list[str]) -> int:
    from hookgate.parity.matrix import compute
    from hookgate.parity.render import FORMATS

    parser = argparse.ArgumentParser(prog="hookgate parity", description="which gate each runtime can enforce, and how")
    parser.add_argument("--format", choices=sorted(FORMATS), default="md")
    parser.add_argument("--output", "-o", type=Path, help="write to FILE instead of stdout")
    ns = parser.parse_args(args[1:])
    rendered = FORMATS[ns.format](compute())
    data = rendered if isinstance(rendered, bytes) else rendered.encode()
    if ns.output:
        ns.output.write_bytes(data)
        print(f"written: {ns.output}")
    else:
        sys.stdout.buffer.write(data)
    return 0
