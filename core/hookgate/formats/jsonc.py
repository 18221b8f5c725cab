"""JSON with comments and trailing commas (OpenCode's opencode.jsonc), made plain JSON for
msgspec's decoder: `//` and `/* */` comments and a comma before a closing bracket go, and
strings stay as they are (`"http://..."` keeps its slashes)."""

from __future__ import annotations

import re

# a string (kept), else a comment (dropped); then a string, else a trailing comma
_COMMENTS = re.compile(rb'("(?:[^"\\]|\\.)*")|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING = re.compile(rb'("(?:[^"\\]|\\.)*")|,(?=\s*[\]}])')


def plain(text: bytes) -> bytes:
    without_comments = _COMMENTS.sub(lambda m: m.group(1) or b" ", text)
    return _TRAILING.sub(lambda m: m.group(1) or b"", without_comments)
