"""A peer for benchmarks/run.py: a PreToolUse Write|Edit hook written the way GodotMaker's scripts
are (one Python process per script per call, the payload parsed with json, the role read from
.godotmaker/current_role, a metrics line appended). Only the build role's rules are here; what is
measured is the shape of the call, not the rule table."""
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

GAME_CODE = (".gd", ".tscn", ".tres")


def main() -> int:
    payload = json.load(sys.stdin)
    root = Path(payload.get("cwd") or os.getcwd())
    path = Path(payload["tool_input"]["file_path"])
    rel = os.path.relpath(os.path.normpath(root / path), root).replace(os.sep, "/")
    state = root / ".godotmaker"
    state.mkdir(exist_ok=True)
    with open(state / "metrics.jsonl", "a") as log:
        log.write(json.dumps({"ts": datetime.now(timezone.utc).isoformat(), "event": "file_write",
                              "session_id": payload.get("session_id"), "file": path.name}) + "\n")
    try:
        role = (state / "current_role").read_text().strip()
    except FileNotFoundError:
        return 0
    reason = None
    if role in ("build", "fixgap"):
        if rel.startswith("e2e/"):
            reason = "e2e/ is not writable in the build role"
        elif rel.endswith(GAME_CODE):
            reason = f"{path.name}: game code is written by a Worker in the {role} role, not directly"
    if reason:
        json.dump({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                          "permissionDecisionReason": reason}}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
