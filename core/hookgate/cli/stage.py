"""`hookgate stage complete ROLE [--project DIR]`: the validated way to record that a pipeline
role completed. The role's stage schema is checked first (its files exist, its programmatic checks
pass); only then is {"role", "ts"} appended to .hookgate/stage.jsonl.

Exit codes: 0 recorded, 1 the role's outputs do not validate (nothing recorded), 2 usage or an
invalid config / stage_schemas.json (nothing recorded)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hookgate.config.load import load_config, project_at
from hookgate.effect import note_allowed
from hookgate.errors import ConfigError
from hookgate.pipeline.stages import next_step, refusal, stage_log_name, stage_schemas, validate_stage


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hookgate stage", description="pipeline stages")
    parser.add_argument("--project", type=Path, default=None, help="project directory (default: found from cwd)")
    sub = parser.add_subparsers(dest="action", required=True)
    complete = sub.add_parser("complete", help="validate ROLE's outputs, then record its completion")
    complete.add_argument("role")
    ns = parser.parse_args(args[1:])
    project = project_at(ns.project)
    try:
        pipeline = load_config(project.config_path, project.layout.dir).pipeline
        schemas = stage_schemas(project, pipeline)
    except ConfigError as exc:
        print(f"hookgate stage: {exc}", file=sys.stderr)
        return 2
    if ns.role not in schemas:
        print(f"hookgate stage: unknown role {ns.role!r}; stage roles: {', '.join(schemas)}", file=sys.stderr)
        return 2
    issues = validate_stage(project, schemas[ns.role])
    if issues:
        print(refusal([ns.role], issues, stage_log_name(project)), file=sys.stderr)
        return 1
    entry = project.append_stage(ns.role)
    note_allowed([project.stage_path], project.root)  # no effect check reverts it
    print(f"recorded {ns.role} complete at {entry['ts']} in {stage_log_name(project)}")
    hint = next_step(pipeline, ns.role)
    if hint:
        print(hint)
    return 0
