"""Pipeline reports as a well-behaved worker, verifier and reviewer write them (seed 000's
required sections, a test run with real pass/fail counts, reviewer sections of substance), shared
by the scenario table and the real tests."""

WORKER_REPORT = """## Report: M1 Player movement
### Status: DONE
### Files Changed
- `src/player.gd`: movement
### Tests
test_player.gd (gdunit): 5 tests -- 5 passed, 0 failed
### Build
build OK
"""
INCOMPLETE_WORKER_REPORT = WORKER_REPORT.split("### Tests")[0]  # no Tests, no Build

VERIFIER_REPORT = """## Verification Report: M1
### Overall: PASS
### Results
build, unit tests and e2e pass
### Adversarial Probes
jumped while falling: no double jump
"""

_REVIEW = "Components hold data only and the movement system owns the behaviour; nothing stateful in nodes."
REVIEWER_REPORT = f"""## Review Report: M1
### Reviewers Matched
ecs
### ECS Review
{_REVIEW}
### Issues Found
{_REVIEW}
### Summary
approve
"""
