"""The parity report is computed, current, complete, and readable in a browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hookgate.parity.capabilities import CAPABILITIES, runtimes, table
from hookgate.parity.matrix import cell, compute
from hookgate.parity.render import markdown, page
from hookgate.parity.rows import Need, Row, all_rows, parse_need

ROOT = Path(__file__).resolve().parents[1]


def test_parity_md_in_the_repo_is_what_the_code_computes():
    assert (ROOT / "PARITY.md").read_text() == markdown(compute()), \
        "PARITY.md drifted: regenerate it with `hookgate parity -o PARITY.md`"


def test_every_cell_names_a_test():
    matrix = compute()
    missing = [f"{row.id}@{rt}" for row in matrix.rows for rt, c in matrix.cells[row.id].items() if not c.proof]
    assert missing == []


def test_every_declared_need_is_in_the_vocabulary():
    rows = all_rows()
    assert rows and all(need.capability in CAPABILITIES for row in rows for need in row.needs)
    with pytest.raises(ValueError, match="unknown capability"):
        parse_need("teleport:PreToolUse")
    assert parse_need("context:SessionStart?") == Need("context", "SessionStart", optional=True)


def test_a_cell_is_as_weak_as_its_weakest_need():
    claude, codex, opencode = table("claude"), table("codex"), table("opencode")
    blocker = Row(id="x", family="t", title="", events=("PreToolUse",), needs=(Need("block", "PreToolUse"),))
    asker = Row(id="y", family="t", title="", events=("PreToolUse",), needs=(Need("ask", "PreToolUse"),))
    hinted = Row(id="z", family="t", title="", events=("PreToolUse",), needs=(Need("ask", "PreToolUse", optional=True),))
    assert cell(blocker, claude).status == "enforced"
    assert cell(asker, codex).status == "not enforceable" and "ask" in cell(asker, codex).notes[0]
    assert cell(hinted, codex).status == "degraded"
    stop = Row(id="s", family="t", title="", events=("Stop",), needs=(Need("block", "Stop"),))
    assert cell(stop, opencode).status == "degraded"
    nowhere = Row(id="n", family="t", title="", events=())
    assert {cell(nowhere, rt).status for rt in runtimes()} == {"not enforceable"}


def test_the_json_report_has_every_cell(tmp_path):
    done = subprocess.run([str(Path(__import__("sys").executable).with_name("hookgate")), "parity", "--format", "json"],
                          capture_output=True, text=True, check=True)
    report = json.loads(done.stdout)
    assert len(report["cells"]) == len(report["rows"]) and {rt["runtime"] for rt in report["runtimes"]} == {"claude", "codex", "gemini", "opencode"}


def test_the_html_page_renders_in_headless_chromium(tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    assert browser, "Chromium is needed for this check: `make chromium` installs Debian's package"
    matrix = compute()
    html = tmp_path / "parity.html"
    html.write_text(page(matrix))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    dom = subprocess.run([browser, *flags, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", html.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    cells = re.findall(r"<td class=\"(enforced|degraded|not-enforceable)\" data-row=\"([^\"]+)\" data-runtime=\"([\w.-]+)\"", dom)
    assert len(cells) == len(matrix.rows) * len(matrix.runtimes)
    shot = tmp_path / "parity.png"
    subprocess.run([browser, *flags, f"--user-data-dir={tmp_path / 'profile2'}", "--window-size=1400,1000",
                    f"--screenshot={shot}", html.as_uri()], capture_output=True, timeout=120)
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000  # a real, non-blank page


def test_the_matrix_has_a_column_per_proven_version_and_a_row_for_opencode_2():
    matrix = compute()
    assert [rt.key for rt in matrix.runtimes] == ["claude-2.1.332", "claude-2.1.290", "codex-0.171.0",
                                                  "codex-0.160.0", "gemini-0.61.0", "opencode-1.18.33"]
    assert [rt.key for rt in matrix.unsupported] == ["opencode-2"]
    report = markdown(matrix)
    line = next(line for line in report.splitlines() if line.startswith("| opencode 2.x |"))
    assert "not supported yet: hookgate's plugin targets the OpenCode 1 plugin API" in line
    assert "does not load V1 plugins" in line
    assert "<td class=unsupported colspan=3 data-runtime='opencode-2'><span class=status>not supported yet" in page(matrix)
    assert all(len(by_table) == 6 for by_table in matrix.cells.values())  # no cells for a version not supported
