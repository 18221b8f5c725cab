import json

import pytest

from hookgate.errors import PayloadError
from hookgate.model.events import UnknownEvent
from hookgate.model.verdicts import Allow, Ask, Block, Context, Modify, Retry
from hookgate_codex import dialect

PATCH = ("*** Begin Patch\n*** Add File: new/b.txt\n+hello\n+world\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n"
         " three\n*** Update File: old.txt\n*** Move to: moved.txt\n@@\n-x\n+y\n*** Delete File: gone.txt\n*** End Patch\n")


def payload(event="PreToolUse", **fields):
    base = {"session_id": "s", "turn_id": "t", "transcript_path": None, "cwd": "/w", "hook_event_name": event,
            "model": "gpt-5.5", "permission_mode": "bypassPermissions"}
    return json.dumps({**base, **fields}).encode()


def tool(name, tool_input, event="PreToolUse", **fields):
    return dialect.decode(payload(event, tool_name=name, tool_input=tool_input, tool_use_id="c", **fields))


def test_bash_is_canonical_already_and_the_runtime_is_codex():
    (event,) = tool("Bash", {"command": "ls"}, agent_id="a1", agent_type="default")
    assert (event.name, event.tool_name, event.tool_input, event.runtime) == ("PreToolUse", "Bash", {"command": "ls"}, "codex")
    assert (event.agent_id, event.agent_type, event.identity, event.turn_id) == ("a1", "default", "given", "t")


def test_a_patch_is_one_canonical_file_event_per_file():
    events = tool("apply_patch", {"command": PATCH})
    got = [(e.tool_name, {k: v for k, v in e.tool_input.items() if k != "patch"}) for e in events]
    assert got == [
        ("Write", {"file_path": "/w/new/b.txt", "content": "hello\nworld\n"}),
        ("Edit", {"file_path": "/w/a.txt", "old_string": "one\ntwo\nthree", "new_string": "one\nTWO\nthree"}),
        ("Delete", {"file_path": "/w/old.txt"}),
        ("Edit", {"file_path": "/w/moved.txt", "old_string": "x", "new_string": "y", "moved_from": "/w/old.txt"}),
        ("Delete", {"file_path": "/w/gone.txt"}),
    ]
    assert all(e.tool_input["patch"] == PATCH and e.tool_use_id == "c" for e in events)


def test_patch_details():
    multi = "*** Begin Patch\n*** Update File: /abs/a.gd\n@@ func a\n-a\n+b\n@@ func c\n-c\n+d\n*** End of File\n*** End Patch"
    (event,) = tool("apply_patch", {"command": multi})
    assert event.tool_name == "MultiEdit" and event.tool_input["file_path"] == "/abs/a.gd"
    assert event.tool_input["edits"] == [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]
    # Codex tolerates a missing end marker; so does hookgate. A pure move has no chunk.
    (delete, move) = tool("apply_patch", {"command": "*** Begin Patch\n*** Update File: a\n*** Move to: ../b\n"})
    assert (delete.tool_input["file_path"], move.tool_name, move.tool_input["file_path"]) == ("/w/a", "Edit", "/w/../b")


@pytest.mark.parametrize("patch", ["", "hello", "*** Begin Patch\n*** End Patch\n", "*** Begin Patch\n*** Add File: \n",
                                   "*** Begin Patch\n*** Frobnicate File: x\n*** End Patch"])
def test_a_patch_hookgate_cannot_read_is_a_payload_error_never_a_guess(patch):
    with pytest.raises(PayloadError, match="apply_patch"):
        tool("apply_patch", {"command": patch})
    with pytest.raises(PayloadError, match="apply_patch"):
        tool("apply_patch", {"patch": patch})


@pytest.mark.parametrize(("tool_input", "agent_type", "description"), [
    ({"message": "worker: fix the jump\nmore"}, "default", "worker: fix the jump"),
    ({"message": "  verify: check it"}, "default", "verify: check it"),
    ({"message": "reviewer: look", "agent_type": "reviewer"}, "reviewer", "reviewer: look"),
    ({"items": [{"type": "text", "text": "asset-producer: draw"}, {"type": "image", "image_url": "x"}]},
     "default", "asset-producer: draw"),
    ({}, "default", ""),
])
def test_spawn_agent_is_agent_typed_as_the_child_will_be(tool_input, agent_type, description):
    """subagent_type is the agent_type the child's SubagentStart will carry, so dispatch and start
    pair up; the role prefix stays in the description, where the pipeline reads it."""
    (event,) = tool("spawn_agent", tool_input)
    assert event.tool_name == "Agent"
    assert (event.tool_input["subagent_type"], event.tool_input["description"]) == (agent_type, description)
    prompt = tool_input.get("message") or (tool_input.get("items") or [{"text": ""}])[0]["text"]
    assert event.tool_input["prompt"] == prompt
    assert {k: event.tool_input[k] for k in tool_input} == tool_input  # Codex's own keys stay


@pytest.mark.parametrize(("name", "canonical"), [
    ("multi_agent_v1wait_agent", "wait_agent"), ("multi_agent_v2spawn_agent", "Agent"),
    ("collaboration.spawn_agent", "Agent"), ("mcp__github__create_issue", "mcp__github__create_issue"),
    ("view_image", "Read"), ("multi_agent_v1", "multi_agent_v1"),
])
def test_namespaced_and_codex_only_tool_names(name, canonical):
    (event,) = tool(name, {"path": "img.png", "message": "m"})
    assert event.tool_name == canonical


def test_view_image_is_a_read_of_the_image():
    (event,) = tool("view_image", {"path": "assets/a.png"})
    assert event.tool_input == {"path": "assets/a.png", "file_path": "/w/assets/a.png"}


def test_post_tool_use_of_a_patch_is_split_too_and_keeps_the_response():
    events = tool("apply_patch", {"command": PATCH}, event="PostToolUse", tool_response="Success.")
    assert [e.name for e in events] == ["PostToolUse"] * 5 and all(e.tool_response == "Success." for e in events)


@pytest.mark.parametrize(("event", "fields"), [
    ("SessionStart", {"source": "startup"}), ("SessionEnd", {"reason": "other"}), ("Interrupt", {}),
    ("PreCompact", {"trigger": "auto"}), ("PostCompact", {"trigger": "manual"}),
    ("SubagentStart", {"agent_id": "a", "agent_type": "default"}),
    ("SubagentStop", {"agent_id": "a", "agent_type": "default", "agent_transcript_path": None,
                      "stop_hook_active": False, "last_assistant_message": None}),
    ("Stop", {"stop_hook_active": True, "last_assistant_message": "done"}),
    ("UserPromptSubmit", {"prompt": "hi", "agent_id": "a", "agent_type": "default"}),
])
def test_every_codex_event_decodes(event, fields):
    (decoded,) = dialect.decode(payload(event, **fields))
    assert decoded.name == event and decoded.runtime == "codex"
    assert decoded.agent_id == fields.get("agent_id")


def test_an_unknown_event_is_kept_not_a_crash():
    (event,) = dialect.decode(payload("PreModelRequest", extra=1))
    assert isinstance(event, UnknownEvent) and event.name == "PreModelRequest" and event.fields["extra"] == 1
    assert event.runtime == "codex"


@pytest.mark.parametrize("raw", [b"", b"  ", b"{", b"[]", b"42", b'{"hook_event_name": "PreToolUse"}',
                                 b'{"hook_event_name": "PreToolUse", "tool_name": 3}'])
def test_unreadable_payloads_are_payload_errors(raw):
    with pytest.raises(PayloadError):
        dialect.decode(raw)


def test_a_non_object_tool_input_is_kept():
    (event,) = tool("some_tool", "raw text")
    assert event.tool_input == {"input": "raw text"}


# -- render ----------------------------------------------------------------------------------------

def rendered(event, verdict):
    answer = dialect.render(event, verdict)
    out = json.loads(answer.stdout) if answer.stdout else None
    return answer.exit_code, out, answer.stderr


@pytest.mark.parametrize("event", ["PreToolUse", "PermissionRequest", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop"])
def test_a_refusal_is_exit_2_with_the_reason_on_stderr(event):
    assert rendered(event, Block(reason="no", context="ctx", message="msg")) == (2, None, "no\nctx\nmsg")
    code, out, stderr = rendered(event, Block(reason=""))
    assert code == 2 and out is None and stderr.strip()  # Codex ignores exit 2 with an empty stderr
    assert rendered(event, Retry(reason="busy", delay_ms=1500)) == (2, None, "busy (temporary: retry in 1.5s)")


def test_pre_tool_use_answers():
    assert rendered("PreToolUse", Allow()) == (0, None, "")
    code, _, stderr = rendered("PreToolUse", Ask(reason="sure?"))
    assert code == 2 and stderr.startswith("sure? (needs the user's confirmation")
    assert rendered("PreToolUse", Modify(updated_input={"command": "ls -la"})) == (0, {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "ls -la"}}}, "")
    assert rendered("PreToolUse", Context(context="hint", message="fyi")) == (0, {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "hint"}, "systemMessage": "fyi"}, "")


def test_a_rewrite_is_given_back_in_the_tools_codex_shape():
    def updated(tool_input):
        return rendered("PreToolUse", Modify(updated_input=tool_input))[1]["hookSpecificOutput"]["updatedInput"]

    (agent,) = tool("spawn_agent", {"message": "worker: a", "fork_context": True})
    assert updated(agent.tool_input) == {"message": "worker: a", "fork_context": True}
    assert updated({**agent.tool_input, "prompt": "worker: b"}) == {"message": "worker: b", "fork_context": True}
    (items,) = tool("spawn_agent", {"items": [{"type": "text", "text": "x"}]})
    assert updated(items.tool_input) == {"items": [{"type": "text", "text": "x"}]}
    assert updated({**items.tool_input, "prompt": "y"}) == {"message": "y"}
    (image,) = tool("view_image", {"path": "a.png"})
    assert updated({**image.tool_input, "file_path": "/w/b.png"}) == {"path": "/w/b.png"}
    assert updated({"server_arg": 1}) == {"server_arg": 1}


def test_a_rewrite_of_one_file_of_a_patch_is_refused_since_codex_cannot_carry_it():
    write = tool("apply_patch", {"command": PATCH})[0]
    code, out, stderr = rendered("PreToolUse", Modify(updated_input={**write.tool_input, "content": "x"}))
    assert code == 2 and out is None and "cannot carry a rewrite of one file of a patch" in stderr


@pytest.mark.parametrize("verdict", [Allow(), Allow(message="m"), Context(context="c", message="m"), Block(reason="r"),
                                     Block(reason=""), Retry(reason="r"), Ask(reason="a"), Ask(reason=""),
                                     Modify(updated_input={"command": "x"}), Modify(updated_input={"file_path": "f", "patch": "p"})])
def test_pre_tool_use_never_gets_a_field_codex_rejects(verdict):
    code, out, stderr = rendered("PreToolUse", verdict)
    if code == 2:
        assert stderr.strip() and out is None
        return
    out = out or {}
    specific = out.get("hookSpecificOutput", {})
    assert not {"continue", "stopReason", "suppressOutput", "decision", "reason"} & set(out)
    assert specific.get("permissionDecision") in (None, "allow")
    assert (specific.get("permissionDecision") == "allow") == ("updatedInput" in specific)


def test_permission_request_answers():
    assert rendered("PermissionRequest", Ask(reason="sure?")) == (0, None, "")  # Codex's own prompt asks the user
    assert rendered("PermissionRequest", Modify(updated_input={"command": "x"})) == (0, None, "")  # cannot rewrite
    assert rendered("PermissionRequest", Context(context="c", message="m")) == (0, {"systemMessage": "m"}, "")


def test_stop_gets_no_context_which_would_mean_nothing_there():
    assert rendered("Stop", Context(context="x", message="released")) == (0, {"systemMessage": "released"}, "")


def test_events_with_limited_answers():
    assert rendered("PreCompact", Block(reason="not now")) == (0, {"continue": False, "stopReason": "not now"}, "")
    assert rendered("PostCompact", Block(reason="late")) == (0, None, "")
    assert rendered("SessionStart", Context(context="[hookgate]")) == (0, {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "[hookgate]"}}, "")
    assert rendered("SubagentStart", Block(reason="no", context="c")) == (0, {
        "hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "c"}}, "")
    assert rendered("Interrupt", Context(context="c", message="m")) == (0, {"systemMessage": "m"}, "")
    assert rendered("SessionEnd", Block(reason="x", message="m")) == (0, None, "")
    assert rendered("PreModelRequest", Block(reason="x", message="m")) == (0, None, "")
