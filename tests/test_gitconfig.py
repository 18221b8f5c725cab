"""The git config reader (formats/gitconfig.py) against git itself: for every text, the names it
reads are the names `git config --file F --list` lists, or it reads none (None) and the effect
check takes no change of that file for inert. Never the other way round: a name git sees and the
reader does not would let a program git runs pass for an inert setting."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hookgate.formats.gitconfig import entries

TEXTS = {
    "git init's": "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n",
    "a remote and its branch": '[remote "origin"]\n\turl = https://x/y.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
                               '[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n',
    "a key on the header's line": "[core] fsmonitor = rm -f PLAN.md\n",
    "a bare key": "[core]\n\tbare\n",
    "a continued value": "[alias]\n\tst = !echo a \\\n  && rm -f PLAN.md\n",
    "a continued value that looks like a key": "[alias]\n\tst = !echo \\\nfsmonitor = x\n",
    "a quoted value with a comment sign": '[core]\n\tpager = "less ; rm -f x" # comment\n',
    "the old subsection spelling": "[remote.origin]\n\turl = x\n",
    "mixed case": '[CoRe]\n\tFsMonitor = x\n[Remote "Origin"]\n\tURL = y\n',
    "an include": "[include]\n\tpath = /tmp/evil.cfg\n",
    "a conditional include": '[includeIf "gitdir:/tmp/"]\n\tpath = evil.cfg\n',
    "comments": "; c\n# d\n[core]\n\tbare = false ; x\n",
    "CRLF line ends": "[core]\r\n\tbare = false\r\n",
    "an unclosed header": "[core\n\tbare = false\n",
    "a key with a space": "[core]\n\tfs monitor = x\n",
    "a key before any section": "bare = true\n",
    "an escaped quote in a subsection": '[remote "a\\"b"]\n\turl = z\n',
    "a dash in a key": "[core]\n\tsome-key = 1\n",
    "an empty value": "[core]\n\tpager =\n",
    "spaces inside the brackets": "[ core ]\n\tbare = true\n",
    "an equals sign in the value": "[core]\n\tsshCommand = ssh -o a=b\n",
    "a byte order mark": "\ufeff[core]\n\tbare = true\n",
    "a no-break space before a key": "[core]\n\u00a0fsmonitor = x\n",
    "a key with a digit first": "[core]\n\t1x = y\n",
    "two sections on one line": "[core] bare = true [alias] x = !y\n",
    "a value ending in an escaped backslash": "[core]\n\tpager = a\\\\\nfsmonitor = x\n",
}


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_the_names_read_are_the_names_git_lists(text: str, tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(text)
    done = subprocess.run(["git", "config", "--file", str(config), "--list"], capture_output=True, text=True)
    listed = [line.split("=", 1)[0] for line in done.stdout.splitlines()] if done.returncode == 0 else None
    read = entries(text)
    assert read is None or [name for name, _ in read] == listed, (read, listed)


def test_what_it_reads_most_of():
    read = [text for text in TEXTS.values() if entries(text) is not None]
    assert len(read) >= 18  # it is of use: the files git init, remote add and push -u write are among them
    assert entries(TEXTS["a continued value"]) == [("alias.st", "!echo a && rm -f PLAN.md")]
