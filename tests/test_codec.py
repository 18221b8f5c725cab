import json
from pathlib import Path

import pytest

from hookgate.errors import PayloadError
from hookgate.model.codec import decode_event, encode_event, event_from_builtins
from hookgate.model.events import KNOWN_EVENTS, PreToolUse, SubagentStop, UnknownEvent

PAYLOADS = Path(__file__).resolve().parents[1] / "parity-tests" / "payloads"


def test_every_claude_event_decodes_to_its_type():
    for name, cls in KNOWN_EVENTS.items():
        event = decode_event(json.dumps({"hook_event_name": name, "session_id": "s", "tool_name": "Bash"}).encode())
        assert type(event) is cls and event.name == name


def test_extra_fields_are_ignored_and_identity_kept():
    event = decode_event(json.dumps({
        "hook_event_name": "SubagentStop", "session_id": "s", "agent_id": "a1", "agent_type": "worker",
        "last_assistant_message": "## Report", "brand_new_field": {"x": 1}}).encode())
    assert isinstance(event, SubagentStop) and event.in_subagent and event.agent_type == "worker"
    assert event.runtime == "claude" and event.identity == "given"


def test_unknown_event_names_never_crash():
    event = decode_event(b'{"hook_event_name": "TeammateIdle", "session_id": "s", "teammate_name": "t"}')
    assert isinstance(event, UnknownEvent) and event.name == "TeammateIdle" and event.fields["teammate_name"] == "t"


@pytest.mark.parametrize("raw, message", [
    (b"", "empty payload"),
    (b"   \n", "empty payload"),
    (b'{"hook_event_name": "PreToolUse", "tool_na', "truncated"),
    (b"[1, 2]", "Expected `object`, got `array`"),
    (b'"text"', "Expected `object`"),
    (b'{"session_id": "s"}', "no hook_event_name"),
    (b'{"hook_event_name": "PreToolUse", "tool_name": "X", "tool_input": 3}', "tool_input"),
    (b"\xff\xfe garbage", "invalid payload"),
])
def test_bad_payloads_raise_one_clear_error(raw, message):
    with pytest.raises(PayloadError, match=message):
        decode_event(raw)


def test_canonical_form_round_trips():
    event = PreToolUse(session_id="s", runtime="opencode", identity="inferred", agent_id="ses_child",
                       tool_name="Write", tool_input={"file_path": "a"})
    assert decode_event(encode_event(event)) == event
    assert event_from_builtins(json.loads(encode_event(event))) == event


def test_captured_claude_payloads_decode():
    names = set()
    for file in sorted(PAYLOADS.glob("claude_*.hooks.jsonl")):
        for line in file.read_text().splitlines():
            event = decode_event(json.dumps(json.loads(line)["payload"]).encode())
            assert not isinstance(event, UnknownEvent)
            names.add(event.name)
    assert {"SessionStart", "PreToolUse", "PostToolUse", "SubagentStart", "SubagentStop", "Stop", "SessionEnd"} <= names
