"""The adversarial shell corpus (issue 12, "Measure"), measured with real bash.

Per runtime dialect, every case of tests/shell_corpus/cases.toml goes through the hook cycle and
is counted: a writing case (one that really changed a protected file when run in bash) after
which a protected file is no longer as it was is a miss; a harmless case (one that changed no
protected file) that was refused, or whose writes were put back, costs the user.

The goals of the issue are 0 misses and at most 1% of harmless calls refused or reverted, with
the effect check in force (the calls name themselves, as the runtimes' payloads do): both are
asserted, and no harmless call may be refused on a literal target it does not write (a misjudged
name). The counts are printed (run with -s) and written to shell_corpus_counts_<dialect>.json in
the test's tmp dir.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from hookgate import effect
from hookgate.effect import feed as feeds, tree
from shell_corpus_support import (Case, build_template, ground_truth, hook_cycle, load_cases, serve)

CASES = load_cases()
UNKNOWN_MARKERS = ("cannot tell before it runs",)


def test_the_corpus_is_large_enough_and_covers_the_families():
    writes = [c for c in CASES if c.expect == "write"]
    harmless = [c for c in CASES if c.expect == "harmless"]
    assert len(writes) >= 300 and len(harmless) >= 150
    families = {c.family for c in CASES}
    for family in ("variables", "globs", "braces", "loops", "interpreters", "quoting", "git-and-archives",
                   "downloads", "find-xargs-make", "scripts", "nesting-and-size", "links", "folders",
                   "recursive-removal", "published-bypasses", "guardfall-obfuscation", "guardfall-obfuscation-harmless",
                   "false-positives-of-issue-12", "rarer-writers", "rarer-writers-harmless", "detached",
                   "detached-harmless", "nested-repository-programs", "nested-repository-harmless", "git-hooks-managers", "rules-rewritten"):
        assert family in families


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    # a memory filesystem where there is one: some thousand fixture copies cost seconds there, minutes on disk
    shm = Path("/dev/shm")
    scratch = Path(tempfile.mkdtemp(prefix="hookgate-corpus-", dir=shm)) if shm.is_dir() and os.access(shm, os.W_OK) \
        else tmp_path_factory.mktemp("shell_corpus")
    root = scratch
    templates = {False: build_template(root / "template"), True: build_template(root / "template_big", big=True)}
    url, server = serve(templates[False] / "out")
    work = root / "work"
    truths = {}
    for index, case in enumerate(CASES):
        truths[case] = ground_truth(case, templates[case.big], work / f"truth{index}", url)
        shutil.rmtree(work / f"truth{index}", ignore_errors=True)
    yield {"templates": templates, "url": url, "truths": truths, "work": work,
           "report": tmp_path_factory.mktemp("shell_corpus_counts")}
    server.shutdown()
    shutil.rmtree(scratch, ignore_errors=True)


# some 2,400 real bash runs and 7,000 hook calls: about two minutes of CPU, several on a busy machine
@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["claude", "codex", "claude, change feed", "claude, no after-event"])
def test_the_corpus_through_the_hook_cycle(corpus, runtime, monkeypatch, capsys):
    """"change feed": the Claude dialect decided as a long-lived core decides it (the OpenCode
    core: effect/feed.py), each case's readings looking only at what inotify saw touched.
    "no after-event": as on a runtime that sends no after-event for the tool, so that nothing a
    call changed can be put back: what the effect check cannot see must be refused before the
    call, still with no miss, at the cost of the harmless calls it cannot tell (counted, and
    none refused by name)."""
    runtime, _, variant = runtime.partition(", ")
    feed, checked = variant == "change feed", variant != "no after-event"
    if not checked:
        monkeypatch.setattr(effect, "covers", lambda event, ctx: False)
    through_feed: list[int] = []  # the readings that looked only at what the feed saw touched
    if feed:
        monkeypatch.setattr(feeds, "_live", True)
        real = tree.read_touched
        monkeypatch.setattr(tree, "read_touched", lambda *args: through_feed.append(1) or real(*args))
    work = corpus["work"]
    monkeypatch.setenv("HOME", str(corpus["templates"][False] / "home"))
    counts = {"writing": 0, "harmless": 0, "ran": 0, "misses": 0, "writing_refused": 0, "harmless_refused": 0,
              "harmless_refused_unknown": 0, "harmless_refused_by_name": 0, "harmless_reverted": 0}
    misses: list[str] = []
    by_name: list[str] = []
    surprises: list[str] = []
    refused_harmless: list[str] = []
    for index, case in enumerate(CASES):
        truth = corpus["truths"][case]
        if truth.writes != (case.expect == "write"):
            surprises.append(f"{case.id}: expected {case.expect}, measured changes {truth.protected_changed or truth.changed[:3]}")
        if case.detached and truth.writes and not truth.late:
            surprises.append(f"{case.id}: every protected file it changed was changed before bash returned")
        cycle = hook_cycle(case, runtime, corpus["templates"][case.big], work / f"{runtime}{index}", corpus["url"], truth,
                           settled=feed)
        shutil.rmtree(work / f"{runtime}{index}", ignore_errors=True)
        counts["ran"] += cycle.ran
        if truth.writes:
            counts["writing"] += 1
            counts["writing_refused"] += cycle.refused
            if cycle.protected_changed:
                counts["misses"] += 1
                misses.append(f"{case.id} -> {cycle.protected_changed}")
        else:
            counts["harmless"] += 1
            if cycle.refused:
                counts["harmless_refused"] += 1
                unknown = any(m in cycle.reason for m in UNKNOWN_MARKERS)
                counts["harmless_refused_unknown" if unknown else "harmless_refused_by_name"] += 1
                (refused_harmless if unknown else by_name).append(f"{case.id}: {cycle.reason[:160]}")
            counts["harmless_reverted"] += cycle.reverted
    counts["harmless_refused_or_reverted_pct"] = round(
        100 * (counts["harmless_refused"] + counts["harmless_reverted"]) / max(1, counts["harmless"]), 2)
    label = runtime + (f" ({variant})" if variant else "")
    if feed:
        counts["read_through_feed"] = len(through_feed)
    summary = {"runtime": label, "counts": counts, "misses": misses, "harmless_refused_by_name": by_name,
               "harmless_refused_as_unknown": refused_harmless, "measured_unlike_expected": surprises}
    (corpus["report"] / f"shell_corpus_counts_{'_'.join([runtime, *variant.split()])}.json").write_text(json.dumps(summary, indent=2))
    with capsys.disabled():
        print(f"\nshell corpus on the {label} dialect: {json.dumps(counts)}")
        for title, items in (("MISSES", misses), ("harmless refused by name", by_name),
                             ("harmless refused as unknown", refused_harmless),
                             ("measured effect unlike the family's expectation", surprises)):
            if items:
                print(f"  {title} ({len(items)}):")
                for item in items:
                    print(f"    {item}")
    assert counts["writing"] >= 300 and counts["harmless"] >= 150
    assert misses == []
    assert by_name == []
    # the counts go by the measurement; a family whose label bash contradicts is a case that no
    # longer tests what its family claims (a rewrite of identical bytes, a download that is a no-op)
    assert surprises == []
    if checked:
        assert counts["harmless_refused_or_reverted_pct"] <= 1.0
    else:  # every writing case refused before it ran; the harmless ones refused are those it cannot tell
        assert counts["writing_refused"] == counts["writing"] and counts["harmless_reverted"] == 0
    if feed:  # every case's settling call and its own PreToolUse were read through the feed, and after
        # the calls that ran, all but those that moved a folder (the feed then reads the tree whole)
        assert len(through_feed) >= 2 * len(CASES) + counts["ran"] - 40, (len(through_feed), counts["ran"])
