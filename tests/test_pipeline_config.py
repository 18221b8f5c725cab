"""The pipeline's config: the godot preset equals seed 000, `.hookgate/config.toml` changes any
part of it, and an invalid config is an error naming the file and the field."""

import pytest

from hookgate.config.load import load_config
from hookgate.errors import ConfigError
from hookgate.engine_builder import build_engine


def load(tmp_path, text):
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_config(path)


# config text, the field the error must name, and what it must say
INVALID = [
    ('[pipeline.stage_schemas.build]\nchecks = ["plan_all_verifed"]\n',
     "$.pipeline.stage_schemas.build.checks[0]", "unknown check 'plan_all_verifed'"),
    ('[pipeline.stage_schemas.build]\nfile = ["PLAN.md"]\n', "$.pipeline.stage_schemas.build", "unknown field `file`"),
    ('[pipeline.stage_schemas.deploy]\nfiles = ["out.zip"]\n', "$.pipeline.role_next", "missing: ['deploy']"),
    ('[pipeline.role_next]\ndeploy = "/gm-ship"\n', "$.pipeline.role_next", "not a stage role: ['deploy']"),
    ('[pipeline.role_next]\nbuild = 3\n', "$.pipeline.role_next.build", "Expected `str`"),
    ('[pipeline.prerequisites.build]\nafter = "design"\n', "$.pipeline.prerequisites.build.after", "unknown stage role 'design'"),
    ('[pipeline.prerequisites.verify]\nafter = "build"\n', "$.pipeline.prerequisites", "exactly the worker_dispatch_roles"),
    ('[pipeline.prerequisites.build]\nfiles = ["project.godot"]\nafter = "gdd"\nextra = 1\n',
     "$.pipeline.prerequisites.build", "unknown field `extra`"),
    ('[pipeline.role_prefixes]\ndesigner = ["designer:"]\n', "$.pipeline.role_prefixes", "unknown subagent role 'designer'"),
    ('[pipeline.completion]\nrequires = ["verifier", "tester"]\n', "$.pipeline.completion", "unknown subagent role 'tester'"),
    ('[pipeline.asset_read]\nfolders = ["@art"]\n', "$.pipeline.asset_read.folders", "unknown path class 'art'"),
    ('[pipeline.asset_read]\nextension = [".png"]\n', "$.pipeline.asset_read", "unknown field `extension`"),
    ('[gates.check_completion]\nblock_limit = 9\n', "$.gates.check_completion", "below Claude Code's own cap of 8"),
    ('[pipeline.reports.worker]\nchecks = ["test_substance", "lint"]\n', "$.pipeline.reports.worker.checks[1]",
     "unknown report check 'lint'"),
    ('[pipeline.reports.worker]\npattern = "#{1,4}(Report"\n', "$.pipeline.reports.worker.pattern",
     "invalid regular expression"),
    ('[pipeline.reports.worker]\nsections = [{ name = "Status", pattern = "[" }]\n',
     "$.pipeline.reports.worker.sections[0].pattern", "invalid regular expression"),
    ('[pipeline.reports.worker]\nsections = [{ name = "Status" }]\n', "$.pipeline.reports.worker.sections[0]",
     "missing required field `pattern`"),
    ('[pipeline.reports.reviewer]\nsubstantive_sections = ["Verdict"]\n', "$.pipeline.reports.reviewer.substantive_sections",
     "unknown section 'Verdict'"),
    ('[pipeline.reports.tester]\nmarker = "## Test Report:"\n', "$.pipeline.reports", "unknown subagent role 'tester'"),
    ('[pipeline.report_checks]\nunit_test = "(unit"\n', "$.pipeline.report_checks.unit_test", "invalid regular expression"),
    ('[pipeline]\ndiagnosed_roles = ["lead"]\n', "$.pipeline.diagnosed_roles", "unknown subagent role 'lead'"),
    ('[gates.check_worker_report]\nblock_limit = 0\n', "$.gates.check_worker_report", "at least 1"),
]


@pytest.mark.parametrize("text, field, message", INVALID)
def test_invalid_config_names_the_field(tmp_path, text, field, message):
    with pytest.raises(ConfigError) as caught:
        build_engine(load(tmp_path, text))
    error = str(caught.value)
    assert f"`{field}" in error and message in error, error
    assert str(tmp_path / "config.toml") in error or "$.gates" in field


def test_the_preset_is_seed_000(tmp_path):
    pipeline = load(tmp_path, "").pipeline
    assert pipeline.worker_dispatch_roles == ["build", "fixgap"]
    assert pipeline.known_subagent_roles == ["worker", "verifier", "reviewer", "analyst", "asset-producer"]
    assert {role: (s.files, s.checks) for role, s in pipeline.stage_schemas.items()} == {
        "scaffold": (["project.godot"], []),
        "gdd": (["GDD.md", "PLAN.md", "STRUCTURE.md"], []),
        "asset": ([], []),
        "build": ([], ["plan_all_verified"]),
        "verify": ([], []),
        "evaluate": ([".hookgate/evaluation.json"], ["evaluation_playable_unit"]),
        "fixgap": ([], ["gap_archived"]),
        "accept": ([], []),
        "finalize": ([".hookgate/final_report.json"], ["tag_archived"]),
        "rescue": ([], []),
    }
    assert pipeline.role_next["evaluate"] == "/gm-accept (if approved) or /gm-fixgap (if rejected)"
    assert {r: (p.after, p.files) for r, p in pipeline.prerequisites.items()} == {
        "build": ("gdd", ["project.godot"]), "fixgap": ("evaluate", [])}
    assert pipeline.asset_read.extensions == [".png", ".jpg", ".jpeg", ".svg", ".webp", ".gif", ".bmp", ".tga"]
    engine = build_engine(load(tmp_path, ""))
    limits = {g.id: (g.block_limit.per, g.block_limit.limit) for g in engine.gates if g.block_limit}
    assert limits == {"check_worker_report": ("agent", 2), "check_completion": ("session", 5)}
    assert {r: [s.name for s in f.sections] for r, f in pipeline.reports.items()} == {
        "worker": ["Status", "Files Changed", "Tests", "Build"],
        "verifier": ["Overall", "Results", "Adversarial Probes"],
        "reviewer": ["Reviewers Matched", "ECS Review", "Issues Found", "Summary"],
        "analyst": ["Status", "Asset Summary", "Art Style Summary", "Files Generated"],
        "asset-producer": ["Status", "Production Unit", "Outputs", "Tools", "Validation", "Handoff"],
    }
    assert [r for r, f in pipeline.reports.items() if f.outcome_block] == ["asset-producer"]
    assert pipeline.reports["reviewer"].min_section_chars == 50


def test_config_changes_one_part_and_keeps_the_rest(tmp_path):
    config = load(tmp_path, '[pipeline.stage_schemas.asset]\nfiles = ["ASSETS.md"]\n'
                            '[pipeline.role_next]\nfinalize = "ship it"\n')
    assert config.pipeline.stage_schemas["asset"].files == ["ASSETS.md"]
    assert config.pipeline.stage_schemas["gdd"].files == ["GDD.md", "PLAN.md", "STRUCTURE.md"]
    assert config.pipeline.role_next["finalize"] == "ship it" and config.pipeline.role_next["gdd"] == "/gm-asset"
