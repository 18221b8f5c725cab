"""A peer for benchmarks/run.py: GodotMaker's second PreToolUse Write|Edit script, in the same shape
(its own Python process, its own json parse): it acts only on an append to .godotmaker/stage.jsonl,
which the benchmark's Write is not, so it reads its payload and leaves, as it does on most writes."""
import json
import sys
from pathlib import Path


def main() -> int:
    payload = json.load(sys.stdin)
    path = Path(payload.get("tool_input", {}).get("file_path", ""))
    if path.name != "stage.jsonl" or path.parent.name != ".godotmaker":
        return 0
    schemas = Path(payload.get("cwd", ".")) / "config" / "stage_schemas.json"
    content = payload["tool_input"].get("content", "")
    role = json.loads(content.splitlines()[-1]).get("role") if content.strip() else None
    required = json.loads(schemas.read_text()).get(role, {}).get("files", []) if schemas.exists() else []
    missing = [name for name in required if not (schemas.parent.parent / name).exists()]
    if missing:
        json.dump({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                          "permissionDecisionReason": f"missing: {', '.join(missing)}"}}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
