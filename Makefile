# Everything a fresh machine needs is set up by the targets themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIMES := parity-tests/runtimes

.PHONY: demo test unit real bench runtimes venv chromium strace multiplexers clean js js-test js-build

demo: venv                      ## the main job: a scripted pipeline session, gates firing
	$(BIN)/hookgate demo

test: venv runtimes chromium strace multiplexers js-test  ## the whole suite: unit tests, the plugin's tests, both parity tiers
	$(BIN)/python -m pytest

unit: venv                      ## fast tests only (no real runtime binaries, no slow suite)
	$(BIN)/python -m pytest -m "not real and not slow"

bench: venv runtimes            ## benchmarks (ratios against same-run baselines)
	$(BIN)/python benchmarks/run.py

venv: $(BIN)/.installed

$(BIN)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@

runtimes: $(RUNTIMES)/node_modules/.installed

# `npm install`, not `npm ci`: the registry here serves only this platform's binaries of
# opencode-ai, so the lock cannot list the others and `npm ci` refuses it; versions stay pinned.
$(RUNTIMES)/node_modules/.installed: $(RUNTIMES)/package.json $(RUNTIMES)/package-lock.json
	cd $(RUNTIMES) && npm install --no-audit --no-fund
	touch $@

chromium:                       ## Debian's Chromium, to check that the parity page renders
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

strace:                         ## Debian's strace, to check that the benchmark's syscall floor makes hookgate's calls
	command -v strace >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace)

multiplexers:                   ## Debian's tmux and screen: the shell corpus measures the jobs they leave running
	command -v tmux >/dev/null && command -v screen >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux screen)

js: node_modules/.installed

node_modules/.installed: package.json package-lock.json adapters/opencode-plugin/package.json
	npm ci --no-audit --no-fund
	touch $@

js-test: venv js                ## the OpenCode plugin's own tests: tsc --noEmit, then node --test against this checkout's core
	# hookgate's state outside the projects (effect stores, pins) in a folder of the run's own, not the user's home
	state=$$(mktemp -d) && HOOKGATE_COMMAND=$(CURDIR)/$(BIN)/hookgate XDG_STATE_HOME=$$state npm test --workspaces; \
	  rc=$$?; rm -rf "$$state"; exit $$rc

# the compiled plugin is committed (a checkout installs and runs it without TypeScript):
# rebuild it after editing adapters/opencode-plugin/src, and commit the result
js-build: js                    ## compile the OpenCode plugin (src/*.ts -> index.js, lib/*.js, types/)
	npm run build --workspaces

clean:
	rm -rf $(VENV) $(RUNTIMES)/node_modules benchmarks/.venv node_modules
