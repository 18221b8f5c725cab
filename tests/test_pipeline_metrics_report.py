"""`hookgate metrics report`: a readable HTML page of a session, built from its real metrics."""

import subprocess
import time
from html.parser import HTMLParser

from pipeline_support import Pipeline
from support import HOOKGATE
from test_pipeline_reports import FAILED_WORKER, VERIFIER, stop


class _Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.text, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def metrics_cli(root, *args):
    return subprocess.run([HOOKGATE, "metrics", *args], cwd=root, capture_output=True, text=True, timeout=60)


def a_session(tmp_path, session_id="s1"):
    pipe = Pipeline(tmp_path, session_id).role("build").ready_to_dispatch()
    pipe.session_start()
    stop(pipe, "worker", FAILED_WORKER, "w1")
    stop(pipe, "verifier", "## Verification Report: M03", "v1")
    pipe.subagent_stop("v1", VERIFIER, "verifier")
    pipe.bash("echo '<script>alert(1)</script>' > src/enemy.gd")
    for _ in range(6):
        pipe.stop()
    return pipe


def test_report_shows_subagents_outcomes_blocks_and_diagnostics(tmp_path):
    pipe = a_session(tmp_path)
    done = metrics_cli(tmp_path, "report")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / ".hookgate" / "reports" / "s1.html").read_text()
    assert done.stdout.strip() == str(tmp_path / ".hookgate" / "reports" / "s1.html")
    parsed = _Text()
    parsed.feed(page)
    text = " ".join(parsed.text)
    assert "script" not in parsed.tags  # report text is escaped, never markup
    assert "<script>alert(1)</script>" in text
    for expected in ("hookgate session", "w1", "worker", "verifier", "rejected_attempt", "terminal",
                     "check_worker_report", "check_shell_writes", "check_completion", "tool_or_environment_error",
                     "M03", "Build role cannot write game code directly (enemy.gd)", "unverified"):
        assert expected in text, expected
    assert len(pipe.metrics()) > 10


def test_list_and_choose_a_session(tmp_path):
    a_session(tmp_path, "first")
    time.sleep(0.05)  # file times tick every few ms: a hook call right after another can share its mtime
    Pipeline(tmp_path, "second").session_start()
    listed = metrics_cli(tmp_path, "list")
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == ["second", "first"]
    out = tmp_path / "first.html"
    assert metrics_cli(tmp_path, "report", "first", "-o", str(out)).returncode == 0
    assert "M03" in out.read_text()
    missing = metrics_cli(tmp_path, "report", "nope")
    assert missing.returncode == 1 and "no session 'nope'" in missing.stderr


def test_no_sessions_is_a_clear_error(tmp_path):
    (tmp_path / ".hookgate").mkdir()
    done = metrics_cli(tmp_path, "report")
    assert done.returncode == 1 and "no session has metrics" in done.stderr
