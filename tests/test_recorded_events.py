"""What a session's decisions.jsonl keeps of each decided event: the canonical event, bounded
(a long value cut to a digest and a tail, a tool's output only as its digest) and without secrets
(env-like assignments with secret names, tokens by their shape), saying what it took out."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pipeline_support import Pipeline
from hookgate.recording import MAX_CHARS, TAIL_CHARS, scrub

SECRETS = {
    "env assignment": ("export GITHUB_TOKEN=ghx0123456789abcdef0123 && git push", "ghx0123456789abcdef0123"),
    "quoted assignment": ('DB_PASSWORD="correct horse battery" ./migrate', "correct horse battery"),
    "json field": ('{"api_key": "k-98765432109876543210"}', "k-98765432109876543210"),
    "bearer": ("curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345' https://x", "abcdefghijklmnopqrstuvwxyz012345"),
    "aws key id": ("aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    "github pat": ("git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    "url password": ("psql postgres://admin:s3cr3tpass@db:5432/app", "s3cr3tpass"),
    "openai-style key": ("OPENAI=sk-proj-abcdefghijklmnopqrstuvwx ./run", "sk-proj-abcdefghijklmnopqrstuvwx"),
    "slack token": ("notify xoxb-123456789012-abcdefghijkl", "xoxb-123456789012-abcdefghijkl"),
    "jwt": ("use eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    "private key": ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAA"),
}


def decisions(p: Pipeline) -> list[dict]:
    path = p.session_dir / "decisions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_kind_of_secret_is_redacted() -> None:
    for name, (text, secret) in SECRETS.items():
        clean, found = scrub(text)
        assert found and secret not in clean and "[redacted]" in clean, (name, clean)


def test_ordinary_text_is_kept_as_it_is() -> None:
    for text in ("echo hello > src/a.gd", "git commit -m 'fix the token parser'", "pytest -k auth --tb=short",
                 "author: Jane", "export PATH=/usr/bin:$PATH", "the password field is validated in forms.py",
                 "--auth-type=none", "key = value"):
        assert scrub(text) == (text, False), text


def test_no_secret_reaches_the_session_log_and_the_record_says_what_was_dropped(tmp_path: Path) -> None:
    p = Pipeline(tmp_path)
    p.session_start()
    for text, _ in SECRETS.values():
        p.bash(text)
    logged = (p.session_dir / "decisions.jsonl").read_text()
    for name, (_, secret) in SECRETS.items():
        assert secret not in logged, name
    bash = [d for d in decisions(p) if d["tool"] == "Bash"]
    assert len(bash) == len(SECRETS) and all(d["call"]["redacted"] == ["tool_input.command"] for d in bash)


def test_a_long_content_is_cut_to_a_digest_and_a_tail(tmp_path: Path) -> None:
    p = Pipeline(tmp_path)
    p.session_start()
    content = "".join(f"line {i}\n" for i in range(20_000))
    p.tool("Write", file_path="big.txt", content=content)
    [write] = [d for d in decisions(p) if d["tool"] == "Write"]
    stored = write["call"]["tool_input"]["content"]
    assert stored["cut"] == len(content) and stored["sha256"] == hashlib.sha256(content.encode()).hexdigest()
    assert stored["tail"] == content[-TAIL_CHARS:] and write["call"]["cut"] == ["tool_input.content"]
    line = (p.session_dir / "decisions.jsonl").read_text().splitlines()[-1]
    assert len(line) < 4 * MAX_CHARS


def test_a_tools_output_is_kept_only_as_its_digest(tmp_path: Path) -> None:
    p = Pipeline(tmp_path)
    p.session_start()
    p.call({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "cat notes"},
            "tool_response": {"stdout": "the output the tool printed", "stderr": ""}})
    [post] = [d for d in decisions(p) if d["hook_event"] == "PostToolUse"]
    assert "the output the tool printed" not in json.dumps(post)
    assert set(post["call"]["tool_response"]) == {"cut", "sha256"} and post["call"]["cut"] == ["tool_response"]


def test_a_decision_records_every_gate_that_ran_and_the_state_it_read(tmp_path: Path) -> None:
    p = Pipeline(tmp_path).role("build")
    p.completed("gdd")
    p.session_start()
    p.tool("Write", file_path="src/a.gd", content="x")
    [write] = [d for d in decisions(p) if d["tool"] == "Write"]
    assert write["decision"] == "block" and write["blocked_by"] == ["check_file_permissions"]
    assert [g["id"] for g in write["gates"]] == ["session_start", "check_file_permissions", "stage_reminder", "effect_snapshot"]
    assert write["role"] == "build" and write["stages"] == 1 and write["root"] == str(tmp_path)
    assert [r["event"] for r in write["records"]] == ["file_write", "hook_block"]
    assert write["session_id"] == "s1" and write["runtime"] == "claude" and write["ts"]


def test_a_new_session_starts_a_new_log(tmp_path: Path) -> None:
    p = Pipeline(tmp_path)
    p.session_start()
    p.tool("Read", file_path="a")
    p.session_start()  # the same id starting again (not a compaction): the log starts over
    assert [d["hook_event"] for d in decisions(p)] == ["SessionStart"]
    p.session_start("compact")
    assert [d["hook_event"] for d in decisions(p)] == ["SessionStart", "SessionStart"]


def test_a_text_scrubbed_before_is_scrubbed_alike_and_long_texts_are_not_kept() -> None:
    """scrub remembers short texts it has seen (a pure function of the text): the second sight
    of a secret is redacted as the first, and a text past the memo's length is not kept."""
    from hookgate import recording

    secret = "export GITHUB_TOKEN=ghp_" + "a" * 36
    first = recording.scrub(secret)
    assert first == recording.scrub(secret) and first[1] and "ghp_" not in first[0]
    assert recording.scrub(secret + " # again")[1]
    long_text = "x" * (recording._MEMO_CHARS + 1) + " password=hunter22"
    assert recording.scrub(long_text)[1] and long_text not in recording._SCRUBBED


def test_only_a_text_that_holds_a_hint_compiles_the_patterns(monkeypatch: pytest.MonkeyPatch) -> None:
    """The secret patterns are compiled on first use (a cold hook process pays for none while its
    texts hold no hint), and scrub by them as before once one does."""
    from hookgate import recording

    monkeypatch.setattr(recording, "_compiled", {})
    monkeypatch.setattr(recording, "_SCRUBBED", {})
    assert recording.scrub("/home/u/game/src/player.gd: Build role cannot write game code") == (
        "/home/u/game/src/player.gd: Build role cannot write game code", False)
    assert recording._compiled == {}
    assert recording.scrub("export API_TOKEN=abcdefgh12345 && curl -H 'Authorization: Bearer abcdefghijklmnop'") == (
        "export API_TOKEN=[redacted] && curl -H 'Authorization: [redacted]'", True)
    assert recording._compiled


def test_nested_values_name_what_was_taken_out_and_keep_the_rest_as_it_was() -> None:
    """Numbers, None and plain short strings are kept as they are (the short way); a secret or a
    cut anywhere below is named by its path, in the order met, whatever the depth."""
    from hookgate import recording

    long_text = "z" * (MAX_CHARS + 1)
    value = {"n": 1, "f": 2.5, "b": True, "none": None, "plain": "src/player.gd",
             "list": ["ok", {"cmd": "export API_TOKEN=abcdefgh12345"}, [long_text, 3]],
             "deep": {"a": {"b": {"c": "curl -H 'Authorization: Bearer abcdefghijklmnop'"}}}}
    bounds = recording._Bounds()
    stored = bounds.value(value, "records")
    assert {k: stored[k] for k in ("n", "f", "b", "none", "plain")} == {
        "n": 1, "f": 2.5, "b": True, "none": None, "plain": "src/player.gd"}
    assert stored["list"][0] == "ok" and stored["list"][1] == {"cmd": "export API_TOKEN=[redacted]"}
    assert stored["list"][2][0]["cut"] == len(long_text) and stored["list"][2][1] == 3
    assert "Bearer" not in stored["deep"]["a"]["b"]["c"]
    assert bounds.redacted == ["records.list[1].cmd", "records.deep.a.b.c"]
    assert bounds.cut == ["records.list[2][0]"]


def test_a_value_nested_too_deep_to_encode_is_recorded_cut_without_its_digest() -> None:
    """A payload a few hundred levels deep is read by the decoder and then recorded deeper in the
    stack, where the same walk runs out of room: the fuzz test found such a call turned into
    hookgate's internal error. Its record keeps what it can: the cut named, no digest."""
    from hookgate.model.events import PostToolUse, PreToolUse
    from hookgate.recording import MAX_DEPTH, canonical

    deep: list = []
    for _ in range(20_000):  # deeper than any recursion limit: built without recursion
        deep = [deep]
    stored = canonical(PreToolUse(session_id="s", tool_name="Write", tool_input={"file_path": "a.md", "x": deep}))
    assert stored["tool_input"]["file_path"] == "a.md"
    cut = stored["tool_input"]["x"]
    for _ in range(MAX_DEPTH - 1):
        cut = cut[0]
    assert cut == {"cut": "depth", "sha256": None} and stored["cut"] == ["tool_input.x" + "[0]" * (MAX_DEPTH - 1)]
    output = canonical(PostToolUse(session_id="s", tool_name="Bash", tool_input={}, tool_response={"out": deep}))
    assert output["tool_response"] == {"cut": "output", "sha256": None}
    shallow = canonical(PostToolUse(session_id="s", tool_name="Bash", tool_input={}, tool_response={"out": [[1]]}))
    assert shallow["tool_response"]["sha256"] == hashlib.sha256(b'{"out":[[1]]}').hexdigest()  # the digest as before
