"""Which files one agent may not write, as one compiled check.

`pipeline.permissions.write_denial` judges one path for one event; the effect check asks the same
question of every file in the project, thousands of times per call. Here the rule sets that
write_denial would use for one (role, agent) are compiled once (pipeline/rules.py's matchers) and the
answers kept per path, so the scan pays a dict lookup for a path it has judged before. The answer
is the same as write_denial's for a path that exists in the project as named (a test compares
them); the two readings write_denial takes (named and resolved) are one here, since the scan walks
real folders without following symlinks.
"""

from typing import TYPE_CHECKING, NamedTuple

import msgspec

from ..config.schema import Config, PathRule, RuleSet
from ..digest import sha256_hex
from ..environ import Variables
from ..paths import _marker_parts, _strip_worktree, anchor, anchor_names, place
from ..pipeline.permissions import rule_sets_for
from ..pipeline.rules import Test, denial, expand, rule_test

if TYPE_CHECKING:
    from ..engine.context import Context
    from ..model.events import Event


class Agent(NamedTuple):
    """Who acts, as far as the write rules can tell agents apart."""

    role: str
    in_subagent: bool
    agent_type: str | None


def agent_of(event: "Event", ctx: "Context", role: str) -> Agent:
    from ..pipeline.agents import agent_type_of

    subagent = event.in_subagent
    return Agent(role, subagent, agent_type_of(event, ctx) if subagent else None)


class Protection:
    """`reason(rel)`: why this agent may not write the project file `rel` ("/"-separated, as
    named), or None. `key` names the rules it was built from, for what is stored on disk."""

    def __init__(self, rule_sets: list[RuleSet], classes: dict[str, list[str]], markers: list[str],
                 agent: Agent | None = None) -> None:
        # each rule as the test write_denial compiles it to (pipeline/rules.py)
        self._sets: list[tuple[list[tuple[Test, PathRule]], str | None]] = [
            ([(rule_test(rule, classes, None), rule) for rule in s.rules], s.otherwise) for s in rule_sets]
        self._markers = _marker_parts(tuple(markers))
        self._answers: dict[str, str | None] = {}
        material = msgspec.json.encode([rule_sets, classes, markers, agent])
        self.key = sha256_hex(material)[:20]

    def reason(self, rel: str) -> str | None:
        try:
            return self._answers[rel]
        except KeyError:
            pass
        low = _strip_worktree(rel.lower(), self._markers)
        name = low.rsplit("/", 1)[-1]
        answer = None
        for rules, otherwise in self._sets:
            answer = otherwise
            for test, rule in rules:
                if test(low, name):
                    answer = rule.reason if rule.deny is not None else None
                    break
            if answer:
                break
        if len(self._answers) < 200_000:
            self._answers[rel] = answer
        return answer


# (agent, the config object, the root) -> its compiled protection; a changed config is a new object
_compiled: dict[tuple[Agent, int, str | None], tuple[Config, Protection]] = {}


def _inside(rule: PathRule, classes: dict[str, list[str]], root: str | None) -> PathRule:
    """A self-protection rule as the scan of the project can use it: a pattern anchored at a place
    outside the project ("~/...", "$NAME/...") becomes the project path it names, when it lies in the
    project, and is left out otherwise (the scan sees only the project)."""
    patterns = []
    base = (root.rstrip("/").lower() + "/") if root else None
    for pattern in expand(rule.deny or rule.allow or [], classes):
        if not (pattern.startswith("~/") or pattern.startswith("$")):
            patterns.append(pattern)
            continue
        place = anchor(pattern)
        if place is not None and base is not None and place.startswith(base):
            patterns.append("/" + place[len(base):])
    field = "deny" if rule.deny is not None else "allow"
    return msgspec.structs.replace(rule, **{field: patterns})


def protection_for(agent: Agent, config: Config, root: str | None = None) -> Protection:
    key = (agent, id(config), root)
    hit = _compiled.get(key)
    if hit is not None and hit[0] is config:
        return hit[1]
    pipeline = config.pipeline
    sets = rule_sets_for(pipeline, agent.role, agent.in_subagent, agent.agent_type)
    if pipeline.protect.enabled:  # hookgate's own files come first, as in write_denial
        rules = [_inside(rule, pipeline.paths, root) for rule in pipeline.protect.rules]
        sets = [RuleSet(rules=rules)] + sets
    protection = Protection(sets, pipeline.paths, pipeline.worktree_markers, agent)
    if len(_compiled) > 32:
        _compiled.clear()
    _compiled[key] = (config, protection)
    return protection


_WILDCARDS = frozenset("*?[")


class Outside(NamedTuple):
    """The protected places outside the project the effect check reads (outside_places)."""

    files: dict[str, str]  # path -> the reason: files named one by one ("~/.bashrc")
    folders: dict[str, str]  # folder -> the reason of its rule: every file below it ("~/.claude/skills/*")
    rules: list[PathRule]  # the self-protection rules, to judge a file found in a folder
    classes: dict[str, list[str]]
    answers: dict[str, str | None]  # path -> its reason: these places live as long as what they were worked out from
    # names what every answer is a function of (the rules, the classes, the root, the values of the
    # variables the rules read): an index read under the same key judged its files as these would
    key: str = ""

    def reason(self, path: str, root: str) -> str | None:
        """Why a file found below one of `folders` is protected (an earlier rule may allow it)."""
        try:
            return self.answers[path]
        except KeyError:
            answer = denial(self.rules, path.lower(), self.classes, root)
            if len(self.answers) < 100_000:
                self.answers[path] = answer
            return answer


_NOTHING = Outside({}, {}, [], {}, {})
# (id(config), root) -> (the config, the variables its places read, their values then, the places)
_outside: dict[tuple[int, str], tuple[Config, Variables, tuple[object, ...], Outside]] = {}


def outside_places(config: Config, root: str) -> Outside:
    """The places outside the project no agent may change while a role is active: the files the
    self-protection rules name one by one at a place ("~/.bashrc", "$CODEX_HOME/hooks.json", no
    wildcard), as named (check.py follows a symlink among them to its file), and the folders whose
    every file they name ("~/.claude/skills/*", a folder named before its one `*`), which the
    check lists. The scan sees only the project, so the effect check reads these by name.
    `[effect] skip_outside` names those left to the syntax gates: what the runtimes or hookgate
    write themselves during calls (~/.claude.json, a shell snapshot, hookgate's state), and
    hookgate's install, too large to list around every call. Worked out once per config, root and
    values of the variables the places read (HOME, CODEX_HOME, ...)."""
    pipeline = config.pipeline
    if not pipeline.protect.enabled:
        return _NOTHING
    key = (id(config), root)
    hit = _outside.get(key)
    if hit is not None and hit[0] is config and hit[1].values() == hit[2]:
        return hit[3]
    skipped = set(config.effect.skip_outside)
    rules = pipeline.protect.rules
    patterns = [pattern for rule in rules for pattern in expand(rule.deny or [], pipeline.paths)
                if pattern[:1] in ("~", "$") and pattern not in skipped
                and not _WILDCARDS.intersection(pattern.removesuffix("/*"))]
    # every variable a rule reads, an allow rule's too: each is a place, and an answer's input
    variables = Variables(tuple(sorted({name for rule in rules for pattern in expand(rule.deny or rule.allow or [], pipeline.paths)
                                        for name in anchor_names(pattern)})))
    values = variables.values()
    base = root.rstrip("/") + "/"
    judged_by = sha256_hex(msgspec.json.encode([rules, pipeline.paths, root, values]))[:20]  # (bytes as base64)
    found = Outside({}, {}, rules, pipeline.paths, {}, judged_by)
    for pattern in patterns:
        folder = pattern.endswith("/*")
        named = place(pattern.removesuffix("/*"))
        places = found.folders if folder else found.files
        if named is None or named in places or (named + "/").startswith(base) or base.startswith(named + "/"):
            continue  # the project's own files are the scan's
        # judged as write_denial judges a place outside the project: an earlier rule may say otherwise
        reason = found.reason(named + "/x" if folder else named, root)
        if reason:
            places[named] = reason
    if len(_outside) >= 16:
        _outside.clear()
    _outside[key] = (config, variables, values, found)
    return found
