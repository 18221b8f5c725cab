"""check_shell_writes: a Bash command that writes a forbidden path is blocked like a Write, and a
read-only command is never blocked. Two corpora through the Claude stdin protocol: every write
must be caught, every read allowed."""

import os

import pytest

from hookgate.pipeline.shell import shell_writes
from pipeline_support import Pipeline

# Ways of writing a file from a shell; {t} is the target.
WRITE_FORMS = [
    "echo x > {t}", "echo x >> {t}", "echo x >| {t}", "printf 'a' 1> {t}", "godot --check 2> {t}",
    "make &> {t}", "make &>> {t}", "make >& {t}", "cat <> {t}", "echo x>{t}", "echo x >{t}",
    "cat > {t} <<'EOF'\nbody with > and $x\nEOF", "cat <<EOF > {t}\n$HOME\nEOF", "cat <<-EOF >> {t}\n\tline\n\tEOF",
    "tee {t} < /dev/null", "echo x | tee -a {t}", "echo x | sudo tee {t} > /dev/null", "tee -- {t}",
    "sed -i 's/a/b/' {t}", "sed -i.bak -e 's/a/b/' {t}", "sed --in-place 's/a/b/' {t}", "sed -Ei 's/a/b/' {t}",
    "sed -e 's/a/b/' -i {t}", "perl -pi -e 's/a/b/' {t}", "perl -i.orig -pe 's/a/b/' {t}",
    "cp /tmp/src.txt {t}", "cp -f /tmp/src.txt {t}", "mv /tmp/src.txt {t}", "install -m 644 /tmp/src.txt {t}",
    "ln -sf /tmp/src.txt {t}", "rm {t}", "rm -f {t}", "touch {t}", "touch -d yesterday {t}", "truncate -s 0 {t}",
    "shred -u {t}", "unlink {t}", "dd if=/dev/zero of={t} bs=1 count=1", "mv {t} /tmp/elsewhere",
    "sort -o {t} /tmp/in.txt", "curl -s -o {t} http://127.0.0.1:9/x", "wget -O {t} http://127.0.0.1:9/x",
    "python3 -c \"open('{t}', 'w').write('x')\"", "python -c 'open(\"{t}\", mode=\"a\")'",
    "python3 -c 'import pathlib; pathlib.Path(\"{t}\").write_text(\"x\")'",
    "python3 - <<'EOF'\nwith open('{t}', 'a') as f:\n    f.write('x')\nEOF", "python3 <<EOF\nimport os\nos.remove('{t}')\nEOF",
    "python3 -c \"import shutil; shutil.copy('/tmp/a', '{t}')\"",
    "bash -c 'echo x > {t}'", "sh -c \"touch {t}\"", "bash -lc 'rm -f {t}'", "eval 'echo x > {t}'",
    "bash <<'EOF'\ntouch {t}\nEOF", "true && echo x > {t}", "false || touch {t}", "ls; rm {t}", "ls | tee {t}",
    "(echo x > {t})", "{{ echo x; }} > {t}", "echo $(touch {t})", "echo `touch {t}`", "x=$(rm -f {t})",
    "FOO=1 touch {t}", "env A=1 touch {t}", "nohup touch {t}", "timeout 5 touch {t}", "sudo -u root touch {t}",
    "nice -n 5 touch {t}", "command touch {t}", "/usr/bin/touch {t}", "if true; then touch {t}; fi",
    "for i in 1 2; do touch {t}; done", "while false; do :; done; touch {t}", "echo x > ./{t}", "echo x > src/../{t}",
    'echo x > "{t}"', "echo x > '{t}'", "echo \\\n x > {t}",
    "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {t}\n+x\n*** End Patch\nEOF",
]

# (role, subagent type or None for the lead, target) whose writes the rules forbid
FORBIDDEN_TARGETS = [
    ("build", None, "e2e/test_play.gd"),      # build: no e2e/ ...
    ("build", None, "src/player.gd"),         # ... and no game code
    ("build", "worker", "MEMORY.md"),         # subagents: no project memory ...
    ("build", "worker", ".hookgate/metrics.jsonl"),  # ... no pipeline state
    ("verify", None, "notes.txt"),            # verify is read-only
]

# writes that need a folder (cd), a tree (rm -r) or a particular spelling
SPECIAL_WRITES = [
    ("build", None, "cd e2e && touch t.gd"),
    ("build", None, "cd src; echo x > a.gd"),
    ("build", None, "pushd e2e && echo x > t.txt"),
    ("build", None, "cd /tmp && cd {root}/e2e && touch t"),
    ("build", None, "rm -rf e2e"),
    ("build", None, "rm -r src"),                      # src/ holds game code
    ("build", None, "rm -rf ."),
    ("build", None, "find e2e -name '*.gd' -delete"),
    ("build", None, "find src -name '*.gd' -exec rm {} \\;"),
    ("build", None, "mv e2e /tmp/old_e2e"),
    ("build", None, "python3 -c \"import shutil; shutil.rmtree('e2e')\""),
    ("build", None, "cp -r /tmp/tests e2e/"),
    ("build", None, "cp /tmp/a.gd /tmp/b.gd src/"),
    ("build", None, "cp -t src /tmp/a.gd"),
    ("build", None, "echo x > {root}/e2e/abs.gd"),
    ("build", None, "echo x > E2E/t.gd"),
    ("build", None, "ln -s /tmp/x.gd"),                # a link named x.gd in the current folder
    ("build", "worker", "echo note >> memory/notes.md"),
    ("build", "worker", "sed -i 's/a/b/' PLAN.md"),
    ("build", "worker", "cp /tmp/p project.godot"),
    ("build", "worker", "cd .hookgate && echo decomposer > current_role"),
    ("build", "general-purpose", "rm -rf memory"),
    ("build", "worker", "echo x > .claude/worktrees/agent-1/MEMORY.md"),
    ("build", None, "apply_patch '*** Begin Patch\n*** Update File: src/player.gd\n@@\n-a\n+b\n*** End Patch'"),
    ("verify", None, "mkdir out"),
    ("verify", None, "godot --headless > /tmp/run.log"),   # verify writes nowhere but its report
    ("evaluate", None, "echo x > src/player.gd"),
    ("gdd", None, "echo x > assets/hero.png"),
    ("build", "worker", "hookgate role clear"),               # a subagent may not lift the rules ...
    ("build", "worker", "hookgate role set scaffold"),
    ("build", "worker", "cd src && hookgate --project .. role set scaffold"),
    ("build", "worker", "hookgate stage complete build"),     # ... nor record a stage
    ("verify", None, "hookgate role set scaffold --project {root}/sub"),
]

# appends to the stage log skip validation: refused with or without a role
STAGE_WRITES = [
    "echo '{\"role\": \"build\", \"ts\": \"2026-01-01T00:00:00Z\"}' >> .hookgate/stage.jsonl",
    "printf '%s\\n' '{\"role\":\"gdd\",\"ts\":\"t\"}' | tee -a .hookgate/stage.jsonl",
    "cat >> .hookgate/stage.jsonl <<'EOF'\n{\"role\": \"verify\", \"ts\": \"t\"}\nEOF",
    "python3 -c \"open('.hookgate/stage.jsonl', 'a').write('x')\"",
    "cd .hookgate && echo x >> stage.jsonl",
    "sed -i '$d' .hookgate/stage.jsonl",
    "rm .hookgate/stage.jsonl",
    "rm -rf .hookgate",
    "mv /tmp/forged.jsonl .hookgate/stage.jsonl",
    "cp /tmp/stage.jsonl .hookgate/",
    "ln -sf /tmp/forged.jsonl .hookgate/stage.jsonl",
]

# read-only commands: never blocked, even under verify (whose rules forbid every write but three)
READS = [
    "echo x >&2", "echo x 1>&2", "echo x 2>&1", "echo x >&-", "ls > /dev/null", "ls 2>/dev/null", "ls &>/dev/null",
    "ls 1>/dev/null 2>&1", "cat PLAN.md", "cat < PLAN.md", "cat 0<PLAN.md", "wc -l < PLAN.md", "head -n 5 PLAN.md",
    "tail -n 20 PLAN.md", "ls -la", "ls e2e/", "find . -name '*.gd'", "find . -type f -newer PLAN.md",
    "find e2e -name '*.gd' -print", "git status", "git diff", "git log --oneline | head", "git diff > /dev/null",
    "grep -r 'x > y' .", "grep -n '>' src/player.gd", "grep -c '>>' PLAN.md", "grep 'rm -rf' notes.md",
    "echo 'a > b'", 'echo "a >> b.txt"', "echo a\\>b", "printf '%s\\n' '>'", "echo '$(touch x)'",
    "echo \"tee -a x\"", "awk '{print $1}' PLAN.md", "sed -n '1,5p' PLAN.md", "sed 's/a/b/' PLAN.md",
    "sed -e 's/x/y/' PLAN.md | head", "sed --quiet 1p PLAN.md", "perl -ne 'print' PLAN.md", "perl -e 'print 1'",
    "python3 -c \"print(open('PLAN.md').read())\"", "python3 -c \"open('PLAN.md', 'r')\"", "python3 --version",
    "python3 -c 'import sys; print(sys.argv)' > /dev/null", "cat PLAN.md | tee /dev/stderr", "tee < PLAN.md",
    "diff <(cat a) <(cat b)", "cmp a b", "cat <<EOF\nhello > world\nEOF", "cat <<'EOF' | grep x\nrm -rf /\nEOF",
    "cat <<< 'a > b'", "# rm -rf e2e", "echo done # > e2e/x", "test -f e2e/a.gd", "[ -d e2e ] && echo yes",
    "godot --headless --check-only 2>&1 | tail -20", "stat src/player.gd", "file assets/hero.png", "du -sh .",
    "echo $HOME", "env", "pwd", "which godot", "rm --help", "cp --help", "touch --version", "sed --version",
    "cat file | sort | uniq -c", "sort PLAN.md", "sort -r PLAN.md | head -3", "jq . .hookgate/evaluation.json",
    "cat .hookgate/stage.jsonl", "tail -1 .hookgate/stage.jsonl", "grep verify .hookgate/stage.jsonl",
    "cp .hookgate/stage.jsonl /dev/stdout", "echo hi | cat > /dev/null", "exec 3>&1", "read -r line < PLAN.md",
    "while read l; do echo \"$l\"; done < PLAN.md", "time ls", "nice -n 5 ls", "timeout 5 cat PLAN.md", "sudo ls",
    "bash -c 'ls -la'", "sh -c \"cat PLAN.md\"", "eval 'echo hi'", "echo $(cat PLAN.md)", "echo `date`",
    "x=$((1+2)); echo $x", "node -e 'console.log(1)'", "echo '*** Update File: e2e/x.gd'", "grep -r apply_patch .",
    "for f in *.gd; do echo $f; done", "if [ -f PLAN.md ]; then cat PLAN.md; fi", "case $x in a) echo a;; esac",
    "ls | xargs echo", "git show HEAD:PLAN.md | head", "curl -s http://127.0.0.1:9/health", "wget -q -O - http://127.0.0.1:9/",
    "dd if=PLAN.md bs=1 count=4", "find . -maxdepth 1", "ls -R e2e | wc -l", "tail -f /dev/null & sleep 0; kill %1",
    "echo x | tee", "hookgate stage complete verify", "hookgate role show",
]


@pytest.fixture
def project(tmp_path):
    pipe = Pipeline(tmp_path)
    for name in ("src/player.gd", "e2e/test_play.gd", "PLAN.md", "memory/notes.md"):
        pipe.write(name)
    pipe.completed("scaffold")
    return pipe


def blocked(pipe: Pipeline, role, agent, command):
    pipe.role(role)
    answer = pipe.bash(command.replace("{root}", str(pipe.root)), ("a1", agent) if agent else None)
    return answer


def write_corpus():
    cases = [(role, agent, form.format(t=target)) for role, agent, target in FORBIDDEN_TARGETS for form in WRITE_FORMS]
    cases += SPECIAL_WRITES
    cases += [(role, None, command) for command in STAGE_WRITES for role in (None, "verify")]
    return cases


def test_corpus_sizes():
    assert len(write_corpus()) >= 400 and len(READS) >= 100


def test_every_write_of_the_corpus_is_caught(project):
    missed = [(role, agent, command) for role, agent, command in write_corpus()
              if not blocked(project, role, agent, command).blocked]
    assert missed == []


def test_every_read_of_the_corpus_is_allowed(project):
    false_positives = [(command, answer.reason) for command in READS
                       for answer in [blocked(project, "verify", None, command)] if answer.blocked]
    assert false_positives == []


@pytest.mark.parametrize("command", ["echo x > notes.txt", "touch build/out.log", "rm -rf build/", "cp a.txt b.txt",
                                     "sed -i 's/a/b/' PLAN.md", "mkdir -p docs && echo x > docs/a.md"])
def test_allowed_writes_stay_allowed(project, command):
    assert not blocked(project, "build", None, command).blocked


def test_reasons_are_the_write_rules_reasons(project):
    answer = blocked(project, "build", None, "echo x > src/enemy.gd")
    assert answer.reason == ("Build role cannot write game code directly (enemy.gd). Dispatch a Worker subagent. "
                             "(via `echo x > src/enemy.gd`)")
    stage = blocked(project, None, None, "echo x >> .hookgate/stage.jsonl")
    assert "`hookgate stage complete ROLE`" in stage.reason


def test_no_role_means_only_the_stage_log_is_guarded(project):
    assert not blocked(project, None, None, "rm -rf e2e src MEMORY.md").blocked
    assert blocked(project, None, None, "rm .hookgate/stage.jsonl").blocked


def test_shell_writes_are_recorded(project):
    blocked(project, "build", None, "echo x > notes.txt; cp notes.txt n2.txt")
    writes = project.metrics("file_write")
    assert [(w["file"], w["via"]) for w in writes] == [("notes.txt", "Bash"), ("n2.txt", "Bash")]


def test_targets_resolved_before_the_call_are_judged(project):
    answer = blocked(project, "build", None, 'out=e2e/x.gd; echo x > "$out"')
    assert answer.blocked and "(x.gd)" in answer.reason


def test_targets_known_only_at_run_time_are_refused_while_nothing_checks_after(project):
    answer = blocked(project, "build", None, 'echo x > "$OUT"; cd "$DIR" && touch a')
    assert answer.blocked
    assert "cannot tell before it runs" in answer.reason and "Write/Edit tool" in answer.reason
    unknown = project.metrics("shell_write_unknown")
    assert [u["target"] for u in unknown] == ["$OUT", "a"]
    assert not any(u["checked_after"] for u in unknown)


def test_targets_known_only_at_run_time_run_when_the_effect_check_covers_them(project):
    project.role("build")
    answer = project.call({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1",
                           "tool_input": {"command": 'echo x > "$OUT"; git stash'}})
    assert not answer.blocked  # a call that names itself is paired with its after-event, and checked there
    unknown = project.metrics("shell_write_unknown")
    assert [u["checked_after"] for u in unknown] == [True, True]


# commands that leave work running once bash returned (the corpus's "detached" family measures
# that they do, in real bash), and the same work waited for
LEAVES_WORK = [
    "python3 x.py &", "nohup python3 x.py > /dev/null 2>&1 &", "(python3 x.py &)", "(python3 x.py &); wait",
    "python3 x.py & disown", "python3 x.py & disown; wait", "python3 x.py & wait $!", "python3 x.py & wait -n",
    "if true; then python3 x.py & fi", "coproc python3 x.py", "coproc W { python3 x.py; }", "setsid python3 x.py",
    "setsid -f python3 x.py", "setsid python3 x.py -w", "bash -c 'python3 x.py &'", "echo $(python3 x.py &)",
    "python3 - <<'EOF' &\nimport os\nos.remove(name)\nEOF",
]
WAITS_FOR_IT = [
    "python3 x.py", "python3 x.py & wait", "python3 x.py & python3 y.py & wait", "coproc { python3 x.py; }; wait",
    "setsid -w python3 x.py", "setsid --wait python3 x.py", "nohup python3 x.py", "python3 x.py && python3 y.py",
    "python3 x.py 2>&1 | tee /dev/null", "python3 x.py &> /dev/null",
]


@pytest.mark.parametrize("command", LEAVES_WORK)
def test_unknowns_of_a_command_that_leaves_work_running_outlive_the_call(command):
    _, unknown = shell_writes(command, "/p")
    assert unknown and all(item.outlives for item in unknown), unknown


@pytest.mark.parametrize("command", WAITS_FOR_IT)
def test_unknowns_of_a_command_that_waits_for_its_work_end_with_it(command):
    _, unknown = shell_writes(command, "/p")
    assert unknown and not any(item.outlives for item in unknown), unknown


@pytest.mark.parametrize("command", [
    "echo 'rm PLAN.md' | at now", "batch <<< 'rm PLAN.md'", "systemd-run --user python3 x.py", "screen -dm python3 x.py",
    "tmux new -d 'python3 x.py'", "daemonize /usr/bin/python3 x.py", "start-stop-daemon --start --background -x x",
    "dtach -n s python3 x.py", "crontab x.cron", "pm2 start app.js", "forever start app.js", "systemctl --user start x",
    "service x start", "supervisorctl start x",
])
def test_programs_that_run_work_later_are_unknown_and_outlive_the_call(command):
    _, unknown = shell_writes(command, "/p")
    assert len(unknown) == 1 and unknown[0].outlives and "after the command returned" in unknown[0].target


# a container with the project mounted, or a host that may be this one, runs what no reader sees
# (no Docker daemon nor sshd here to run them: the reader's reading only)
@pytest.mark.parametrize("command, outlives", [
    ("docker run --rm -v $PWD:/w alpine rm /w/PLAN.md", False), ("docker compose up", False),
    ("podman run -v .:/w alpine sh -c 'rm /w/x'", False), ("ssh localhost 'rm PLAN.md'", False),
    ("docker start -a x", False), ("docker run -d -v $PWD:/w alpine rm /w/PLAN.md", True), ("docker run -dit alpine", True),
    ("podman run --detach alpine true", True), ("docker compose up -d", True), ("docker start x", True),
    ("nerdctl run -d alpine", True), ("ssh -fN -L 8080:localhost:80 host", True),
])
def test_programs_that_run_a_command_elsewhere_are_unknown(command, outlives):
    _, unknown = shell_writes(command, "/p")
    assert len(unknown) == 1 and bool(unknown[0].outlives) == outlives, unknown


@pytest.mark.parametrize("command", ["screen -ls", "tmux ls", "at -l", "crontab -l", "systemd-run --wait true",
                                     "docker ps", "docker build .", "docker logs x", "ssh -V", "pm2 ls",
                                     "systemctl status x",
                                     "sleep 5 &", "python3 -m http.server &", "(echo x > /tmp/log) &"])
def test_work_left_running_that_writes_nothing_unknown_is_not_unknown(command):
    assert shell_writes(command, "/p")[1] == []


def test_unknown_targets_of_work_left_running_are_refused_though_the_effect_check_covers_the_call(project):
    project.role("build")
    for command in ('nohup sh -c "sleep 1; git stash" > /dev/null 2>&1 &', "setsid -f make", "tmux new -d make"):
        answer = project.call({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1",
                               "tool_input": {"command": command}}, )
        assert answer.blocked and "leaves work running after the call returned" in answer.reason, command
        assert "Run it in the foreground" in answer.reason
    assert not any(u["checked_after"] for u in project.metrics("shell_write_unknown"))
    for command in ("git stash & wait", "sleep 1 &", "python3 -m http.server 8000 > /dev/null 2>&1 &"):
        answer = project.call({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_2",
                               "tool_input": {"command": command}})
        assert not answer.blocked, (command, answer.reason)


def test_a_call_run_in_the_background_is_not_covered_by_the_effect_check(project):
    """Claude Code answers a `run_in_background` Bash call (and fires its PostToolUse) once it
    started: the check after it would read the files before the command wrote them."""
    project.role("build")
    call = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_bg",
            "tool_input": {"command": "git stash", "run_in_background": True}}
    answer = project.call(call)
    assert answer.blocked and "run in the background" in answer.reason
    assert not project.call({**call, "tool_input": {"command": "git stash"}}).blocked
    assert not project.call({**call, "tool_input": {"command": "ls src", "run_in_background": True}}).blocked
    assert not project.call({**call, "tool_input": {"command": "git stash", "run_in_background": False}}).blocked


def test_claude_s_monitor_tool_runs_a_shell_command_judged_like_a_background_bash_call(project):
    """Claude Code's Monitor runs `command` in the background and streams its lines back: the
    pack's shell gates read it as they read Bash (it wrote a lead's game code on 2.1.332 before)."""
    project.role("build")
    call = {"hook_event_name": "PreToolUse", "tool_name": "Monitor", "tool_use_id": "toolu_mon",
            "tool_input": {"description": "watch", "timeout_ms": 5000}}
    known = project.call({**call, "tool_input": {**call["tool_input"], "command": "echo x >> src/player.gd"}})
    assert known.blocked and "player.gd" in known.reason
    unknown = project.call({**call, "tool_input": {**call["tool_input"], "command": "git stash"}})
    assert unknown.blocked and "run in the background" in unknown.reason
    hookgate = project.call({**call, "tool_input": {**call["tool_input"], "command": "hookgate uninstall claude"}})
    assert hookgate.blocked
    for harmless in ({"command": "tail -f /tmp/build.log | grep --line-buffered ERROR"}, {"ws": {"url": "ws://127.0.0.1:1"}}):
        answer = project.call({**call, "tool_input": {**call["tool_input"], **harmless}})
        assert not answer.blocked, (harmless, answer.reason)


def test_gemini_s_background_shell_is_claude_s_run_in_background():
    from hookgate_gemini import dialect

    (event,) = dialect.decode(b'{"hook_event_name": "BeforeTool", "session_id": "s", "cwd": "/p", '
                              b'"tool_name": "run_shell_command", "tool_input": {"command": "make", "is_background": true}}')
    assert event.tool_name == "Bash" and event.tool_input["run_in_background"] is True
    assert dialect.gemini_input({"command": "make", "run_in_background": True}) == {"command": "make", "is_background": True}


def test_unknown_targets_are_never_refused_without_a_role(project):
    assert not blocked(project, None, None, 'echo x > "$OUT"; git stash; make; ./run.sh').blocked
    assert project.metrics("shell_write_unknown") == []


def test_a_command_hookgate_cannot_read_is_unknown_not_harmless(project):
    # bash runs a command line by line: an error on a later line does not undo the earlier ones
    answer = blocked(project, "build", None, "echo x > e2e/a.gd\necho 'unclosed")
    assert answer.blocked
    assert "cannot read" in blocked(project, "build", None, "echo 'unclosed > notes.txt").reason
    assert not blocked(project, None, None, "echo 'unclosed > notes.txt").blocked
    deep = "echo " + "$(" * 40 + "touch e2e/deep.gd" + ")" * 40
    assert blocked(project, "build", None, deep).blocked
    _, unknown = shell_writes("echo \"$(rm x", "/p")
    assert unknown and "cannot read" in unknown[0].target


@pytest.mark.parametrize("command, paths", [
    ("echo x > a", ["/p/a"]),
    ("echo x 2>&1 > a", ["/p/a"]),
    ("(cd sub && touch a); touch b", ["/p/sub/a", "/p/b"]),
    ("cd sub; cd ..; touch c", ["/p/c"]),
    ("cp a b c dir", ["/p/dir/a", "/p/dir/b", "/p/dir/c"]),   # several sources: dir is a folder
    ("mv a b", ["/p/b", "/p/a"]),                                # b is no folder (it does not exist)
    ("sed -n -e p -i x y", ["/p/x", "/p/y"]),
    ("sed -i~ s/a/b/ x", ["/p/x"]),
    ("perl -p -i -e s/a/b/ x", ["/p/x"]),
    ("echo ~/x > ~/y", [os.path.expanduser("~/y")]),
    ("bash -c 'sh -c \"touch deep\"'", ["/p/deep"]),
    ("python3 -c \"import os; os.rename('a', 'b')\"", ["/p/a", "/p/b"]),
    ("cat a <<'X' > out\n> not a redirect\nX\ntouch after", ["/p/out", "/p/after"]),
])
def test_the_lexer_finds_each_target(command, paths):
    writes, _ = shell_writes(command, "/p")
    assert [w.path for w in writes] == paths


def test_the_lead_may_run_hookgate_s_own_commands(project):
    assert not blocked(project, "build", None, "hookgate stage complete build").blocked   # validated by the CLI
    assert not blocked(project, "build", None, "hookgate role set verify").blocked
    assert not blocked(project, "verify", None, "hookgate role clear").blocked          # verify may write current_role
    assert not blocked(project, "build", "worker", "hookgate role show").blocked


# -- what bash reads, this reader reads (bash itself is the oracle) ---------------------------------

BASH_ACCEPTS = [
    "git commit -m \"$(cat <<'EOF'\nFix the player's jump\nEOF\n)\"",
    "printf $'it\\'s' > out",
    "echo x > out # it's done",
    "# don't\necho x > out",
    "echo \"$(echo \"it's\")\" > out",
    "echo ${x:-'it\"s'} > out",
    "x=$(case a in a) echo a;; esac); echo $x > out",
    "echo $(( 1 > 0 )) > out",
    "(( 2 > 1 )) && echo x > out",
    "[[ b > a ]] && echo x > out",
    "cat > out <<- 'EOF'\n\tit's\n\tEOF",
    "cat <<EOF > out; echo done\nx\nEOF",
    "cat <<$(printf EOF) > out\nbody\n$(printf EOF)",
    "echo `echo \"it's\"` > out",
    "f() { echo x > out; }; f",
    "a=(1 2); echo \"${a[@]}\" > out",
    "echo 'a'\"b\"$'c' > out",
    "echo $\"x\" > out",
    "echo " + "$(echo " * 20 + "x" + ")" * 20 + " > out",
]


@pytest.mark.parametrize("command", BASH_ACCEPTS)
def test_what_bash_reads_this_reader_reads(command):
    import subprocess
    assert subprocess.run(["bash", "-n", "-c", command], capture_output=True).returncode == 0
    writes, unknown = shell_writes(command, "/p")
    assert not [u for u in unknown if "cannot read" in u.target]
    assert "/p/out" in [w.path for w in writes] or "> out" not in command


@pytest.mark.parametrize("command, paths", [
    ("p=PLAN.md; echo x > $p", ["/p/PLAN.md"]),
    ("a=PLAN b=.md; echo x > \"$a$b\"", ["/p/PLAN.md"]),
    ("files='A B'; rm $files", ["/p/A", "/p/B"]),
    ("export T=M.md; echo x >> $T", ["/p/M.md"]),
    ("sed -i s/a/b/ {PLAN,STRUCTURE}.md", ["/p/PLAN.md", "/p/STRUCTURE.md"]),
    ("touch t{1..2}.gd", ["/p/t1.gd", "/p/t2.gd"]),
    ("for f in A B; do echo x > $f; done", ["/p/A", "/p/B"]),
    ("cd sub; cd -; touch a", ["/p/a"]),
    ("pushd sub; pushd ../other; popd; touch a", ["/p/sub/a"]),
    ("cd sub; echo x > ~+/a", ["/p/sub/a"]),
    ("F=x.gd bash -c 'echo > $F'", ["/p/x.gd"]),
    ("bash -o pipefail -c 'touch a'", ["/p/a"]),
    ("bash -e -o pipefail -O extglob -c 'touch a'", ["/p/a"]),
    ("bash -c 'touch \"$1\"' _ named", ["/p/named"]),
    ("echo x | xargs -I{} cp {} dest.gd", ["/p/dest.gd"]),
    ("curl -fsSLo out.gd http://127.0.0.1:9/x", ["/p/out.gd"]),
    ("cp PLAN.md PLAN.md.orig", ["/p/PLAN.md.orig"]),
    ("ln PLAN.md /tmp/hl", ["/tmp/hl", "/p/PLAN.md"]),     # a hard link shares PLAN.md from now on
    ("zip -qm a.zip M.md", ["/p/a.zip", "/p/M.md"]),
    ("hash -p /bin/rm nop; nop -f M.md", ["/p/M.md"]),             # the name runs the program hash -p gave it
    ("function f { touch M.md; }; f", ["/p/M.md"]),                # the body is read; the name is not a command
    ("env F=x.gd bash -c 'echo > $F'", ["/p/x.gd"]),               # env's assignments reach the command it runs
    ("fallocate -l 8192 M.md", ["/p/M.md"]), ("iconv -f utf-8 -t utf-16 -o M.md in", ["/p/M.md"]),
    ("openssl enc -base64 -in a -out M.md", ["/p/M.md"]), ("gpg --batch -o M.md --enarmor a", ["/p/M.md"]),
    ("gcc -O2 -fno-omit-frame-pointer -o M.gd x.c", ["/p/M.gd"]), ("cc -c a.c sub/b.cpp", ["/p/a.o", "/p/b.o"]),
    ("cc x.c", ["/p/a.out"]), ("lz4 -qf a M.md", ["/p/a", "/p/M.md"]),
    ("script -q M.md", ["/p/M.md"]), ("script -q", ["/p/typescript"]), ("script -qtM.md out", ["/p/M.md", "/p/out"]),
    ("script -qc 'rm -f M.md' out", ["/p/M.md", "/p/out"]), ("script --command='touch M.md' -O log out", ["/p/M.md", "/p/log", "/p/out"]),
    ("git config --file M.md a.b c", ["/p/M.md"]), ("git config -f=M.md a.b c", ["/p/M.md"]),
    # wrappers run the command after their options and operands (a shell string with -c)
    ("taskset -c 0 rm M.md", ["/p/M.md"]), ("chrt -o 0 rm M.md", ["/p/M.md"]), ("prlimit --nofile=9 rm M.md", ["/p/M.md"]),
    ("setpriv --reuid=0 rm M.md", ["/p/M.md"]), ("su -c 'rm M.md' root", ["/p/M.md"]), ("su root -c 'rm M.md'", ["/p/M.md"]),
    ("runuser -u root -- rm M.md", ["/p/M.md"]), ("runuser root --command='rm M.md'", ["/p/M.md"]),
    ("sg root -c 'rm M.md'", ["/p/M.md"]), ("sg root rm M.md", ["/p/M.md"]), ("setarch x86_64 rm M.md", ["/p/M.md"]),
    ("flock l -c 'rm M.md'", ["/p/M.md"]), ("flock -c 'rm M.md' l", ["/p/M.md"]), ("unshare -r rm M.md", ["/p/M.md"]),
    ("busybox rm M.md", ["/p/M.md"]), ("faketime 2020-01-01 rm M.md", ["/p/M.md"]), ("numactl -N 0 rm M.md", ["/p/M.md"]),
    ("link M.md /tmp/hl", ["/tmp/hl", "/p/M.md"]), ("shuf -o M.md in", ["/p/M.md"]),
    ("flock l python3 -c \"open('M.md', 'w')\"", ["/p/M.md"]),  # python's -c, not flock's: read as Python
    # formatters rewrite the files they are given, unless told only to report
    ("rustfmt a.rs", ["/p/a.rs"]), ("gofmt -w a.go", ["/p/a.go"]), ("black a.py", ["/p/a.py"]),
    ("prettier --write M.md", ["/p/M.md"]), ("clang-format -i a.c", ["/p/a.c"]), ("gdformat a.gd", ["/p/a.gd"]),
    ("yq -i '.a = 1' c.yaml", ["/p/c.yaml"]), ("dos2unix M.md", ["/p/M.md"]), ("eslint --fix a.js", ["/p/a.js"]),
])
def test_targets_known_before_the_call_are_resolved(command, paths):
    writes, unknown = shell_writes(command, "/p")
    assert [w.path for w in writes] == paths and unknown == []


@pytest.mark.parametrize("command", ["rename s/md/txt/ M.md", "rename -e s/md/txt/ M.md", "rename .md .txt M.md"])
def test_rename_takes_its_files_names_and_gives_names_only_running_it_tells(command):
    writes, unknown = shell_writes(command, "/p")
    assert "/p/M.md" in [w.path for w in writes] and [u.target for u in unknown] == ["the names rename gives the files"]


def test_globs_and_find_are_expanded_against_the_filesystem(tmp_path):
    for name in ("a.gd", "b.gd", "c.txt", "sub/d.gd"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    root = str(tmp_path)
    writes, _ = shell_writes("sed -i s/a/b/ *.gd", root)
    assert [w.path for w in writes] == [f"{root}/a.gd", f"{root}/b.gd"]
    writes, _ = shell_writes("for f in *.gd; do rm \"$f\"; done", root)
    assert [w.path for w in writes] == [f"{root}/a.gd", f"{root}/b.gd"]
    writes, _ = shell_writes("find . -name '*.gd' -exec sed -i s/a/b/ {} +", root)
    assert sorted(w.path for w in writes) == [f"{root}/a.gd", f"{root}/b.gd", f"{root}/sub/d.gd"]
    assert shell_writes("find . -name '*.gd' -exec grep -l extends {} +", root) == ([], [])
    assert shell_writes("find . -name '*.tmp' -delete", root) == ([], [])
    writes, _ = shell_writes("cp -r sub/. other", root)
    assert [w.path for w in writes] == [f"{root}/other/d.gd", f"{root}/other"]


@pytest.mark.parametrize("command", [
    "git stash", "git checkout -- .", "git restore src", "git reset --hard", "git apply x.patch", "patch -p1 < x.patch",
    "tar -xf a.tar", "unzip -o a.zip", "rsync -a a/ b/", "make", "npm install", "./build.sh", "bash build.sh",
    "source env.sh", "cat <<'EOF' | python3\nprint(1)\nEOF", "python3 script.py", "python3 -m pytest",
    "python3 -c \"p='PLAN.md'; open(p,'w')\"", "python3 -Ic \"import os; os.remove(name)\"",
    "node -e \"require('fs').writeFileSync('x','y')\"", "perl -e 'unlink \"x\"'", "awk '{print > \"x\"}' y",
    "echo 'rm x' | bash", "curl -s http://127.0.0.1:9/x | sh", "ls | xargs rm", "ls | xargs sed -i s/a/b/",
    "curl -sO http://127.0.0.1:9/x.gd", "wget -q http://127.0.0.1:9/x.gd", "$EDITOR x", "echo x > \"$OUT\"",
    "x=$(cat f); echo > $x", "eval \"$CMD\"", "sed -n 'w out' in",
    "shopt -s expand_aliases\nalias nop='rm -f'\nnop M.md", "hash -p $P nop; nop M.md", "BASH_ENV=e.sh bash -c true",
    "env BASH_ENV=e.sh bash -c true", "export BASH_ENV=e.sh; bash -c ls", "sqlite3 :memory: '.output M.md' 'select 1;'",
    "sqlite3 db.sqlite 'create table t(x)'", "split -n 2 a part", "csplit -f part a 2", "cc -c $SRC",
    "su - root -c 'rm M.md'", "runuser -l root -c 'rm M.md'", "su -c \"$CMD\"", "chroot / rm M.md", "nsenter -t 1 -m rm x",
    "black .", "rename s/md/txt/ M.md",
])
def test_targets_only_the_running_shell_knows_are_unknown(command):
    _, unknown = shell_writes(command, "/p")
    assert unknown, command


@pytest.mark.parametrize("command", [
    "git status", "git diff HEAD", "git log --oneline", "git commit -qm x", "git stash list", "git apply --check x.patch",
    "tar -tf a.tar", "tar -tzf a.tgz", "unzip -l a.zip", "make -n", "python3 --version",
    "python3 -c \"print(open('PLAN.md').read())\"", "python3 -c 'import json,sys; print(json.load(sys.stdin))'",
    "node -e 'console.log(1)'", "perl -ne 'print' f", "awk '{print $1}' f", "awk '$1 > 3' f", "ls | xargs echo",
    "ls | xargs grep x", "find . -name '*.gd' -exec grep -l extends {} +", "bash -c 'ls'", "command -v git",
    "case $x in a) echo a;; esac", "for f in *.gd; do echo $f; done", "echo $HOME", "sed 's/a/b/' f",
    "alias ll='ls -l'; ls", "hash ls; ls", "function f { ls; }; f", "git config user.name", "git config --get user.name", "git config -l", "cc -E x.c",
    "sqlite3 --version", "shuf -n 3 f", "rustfmt --check a.rs", "gofmt -l a.go", "black --check a.py", "prettier a.md",
    "clang-format a.c", "gdformat --check a.gd", "yq .a c.yaml", "eslint a.js", "rename -n s/a/b/ x",
])
def test_commands_that_only_read_are_neither_writes_nor_unknown(command):
    assert shell_writes(command, "/p") == ([], []), command


@pytest.mark.parametrize("command, written", [
    ("git config user.name x", "{repo}/.git/config"), ("git config --unset core.fsmonitor", "{repo}/.git/config"),
    ("git config set core.hooksPath h", "{repo}/.git/config"), ("git -C sub config a.b c", "{repo}/.git/config"),
    ("git config --worktree a.b c", "{repo}/.git/config.worktree"), ("git config --global a.b c", "{home}/.gitconfig"),
    ("git config --file=build/x.cfg a.b c", "{repo}/build/x.cfg"), ("git config -e", "{repo}/.git/config"),
])
def test_git_config_that_sets_writes_the_config_file_git_writes(command, written, tmp_path, monkeypatch):
    repo, home = tmp_path / "repo", tmp_path / "home"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    monkeypatch.setenv("HOME", str(home))
    writes, unknown = shell_writes(command, str(repo))
    assert unknown == [] and written.format(repo=repo, home=home) in [w.path for w in writes], (writes, unknown)


@pytest.mark.parametrize("command, settings", [
    ("git config User.Email a@b", ("user.email",)), ("git config set user.name t", ("user.name",)),
    ("git config unset user.name", ("user.name",)), ("git config --unset-all remote.o.fetch", ("remote.o.fetch",)),
    ("git config -e", ()), ("git config --remove-section user", ()), ("git config \"$(echo a.b)\" c", ()),
])
def test_git_config_names_the_key_it_sets(command, settings, tmp_path):
    (tmp_path / ".git").mkdir()
    writes, _ = shell_writes(command, str(tmp_path))
    assert [w.settings for w in writes] == [settings], writes


@pytest.mark.parametrize("command, written", [
    ("git -C addons/lib config a.b c", "{repo}/.git/modules/addons/lib/config"),  # a submodule
    ("git -C ../wt config a.b c", "{repo}/.git/config"),  # a worktree shares the repository's config
    ("git -C ../wt config --worktree a.b c", "{repo}/.git/worktrees/wt/config.worktree"),
])
def test_git_config_through_a_git_file_writes_the_config_of_the_folder_it_names(command, written, tmp_path):
    repo, worktree = tmp_path / "repo", tmp_path / "wt"
    (repo / ".git" / "modules" / "addons" / "lib").mkdir(parents=True)
    (repo / "addons" / "lib").mkdir(parents=True)
    (repo / "addons" / "lib" / ".git").write_text("gitdir: ../../.git/modules/addons/lib\n")
    (repo / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (repo / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {repo}/.git/worktrees/wt\n")
    writes, unknown = shell_writes(command, str(repo))
    assert unknown == [] and [w.path for w in writes] == [written.format(repo=repo)], (writes, unknown)
    (repo / "addons" / "lib" / ".git").write_text("not a gitdir line\n")
    assert shell_writes("git -C addons/lib config a.b c", str(repo))[1]  # unknown


@pytest.mark.parametrize("command", [
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=x git status",
    "export GIT_EXTERNAL_DIFF=x; git diff", "GIT_DIR=/tmp/r git status", "git --config-env=core.pager=P log",
    "git -c core.fsmonitor=x status", "LD_PRELOAD=/tmp/x.so ls", "env LD_AUDIT=/tmp/a.so cat x",
    "PYTHONPATH=/tmp/p pytest -q", "NODE_OPTIONS='--require /tmp/x.js' npm ls", "PERL5OPT=-MEv perl -e 1",
    'export "RUBYOPT=-r/tmp/x"; ruby -e 1', "x=PYTHONPATH; export $x=/tmp; python3 -c pass",
    "declare -n r=GIT_DIR; r=/tmp; git status", "typeset -n r; ls", "BASH_ENV=/tmp/e.sh ./build.sh",
])
def test_a_program_run_with_code_of_the_callers_choosing_is_unknown(command):
    writes, unknown = shell_writes(command, "/p")
    assert writes == [] and unknown, command


@pytest.mark.parametrize("command", ["export FOO=1; ls", "declare -x A=1 B; echo $A", "GIT_AUTHOR_NAME=x git log",
                                     "export -p", "FOO=$(echo 1) ls"])
def test_an_ordinary_variable_is_not_code(command):
    assert shell_writes(command, "/p") == ([], []), command


def test_files_outside_the_project_are_not_judged_by_name(project):
    for command in ("echo x > /tmp/PLAN.md", "cp PLAN.md /tmp/PLAN.md", "echo x > /tmp/check.gd",
                    "cp src/player.gd /tmp/player.gd.bak"):
        assert not blocked(project, "build", "worker", command).blocked, command
        assert not blocked(project, "build", None, command.replace("PLAN.md", "x.gd")).blocked, command
    assert not blocked(project, "build", "worker", "cp PLAN.md PLAN.md.orig").blocked
    assert blocked(project, "build", "worker", "cp /tmp/x PLAN.md").blocked


def test_a_link_out_of_the_project_into_it_is_judged_where_it_lands(project, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "plan.link").symlink_to(project.root / "PLAN.md")
    assert blocked(project, "build", "worker", f"echo x > {outside}/plan.link").blocked
    os.link(project.root / "src" / "player.gd", outside / "player.hl")
    answer = blocked(project, "build", None, f"echo x > {outside}/player.hl")
    assert answer.blocked and "hard link" in answer.reason


def test_a_tree_too_large_to_walk_is_unknown_not_allowed(project, monkeypatch):
    from hookgate.pipeline import shell_writes as gate
    for i in range(30):
        project.write(f"bulk/f{i:02d}.txt")
    project.write("bulk/zz/last.gd")
    assert blocked(project, "build", None, "rm -rf bulk").blocked                  # walked whole: last.gd found
    monkeypatch.setattr(gate, "MAX_TREE_FILES", 10)
    answer = blocked(project, "build", None, "rm -rf bulk")
    assert answer.blocked and "too many files" in answer.reason
    assert not blocked(project, None, None, "rm -rf bulk").blocked                 # no role: nothing refused


def test_the_lead_of_a_role_without_rules_is_not_refused_for_unknowns(project):
    # hookgate's own registrations are every agent's to leave alone (self-protection), so with it on
    # even the lead of a role without rules runs a command of unknown writes only when it is checked after
    assert blocked(project, "scaffold", None, "git stash; make; ./build.sh").blocked
    project.write(".hookgate/config.toml", "[pipeline.protect]\nenabled = false\n")
    assert not blocked(project, "scaffold", None, "git stash; make; ./build.sh").blocked
    assert blocked(project, "scaffold", "worker", "git stash").blocked            # its subagents still have rules
