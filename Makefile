# Everything starts from a fresh clone: `make test` and `make demo` create
# .venv, install the package with its dependencies, then do their work.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install install-ray lint test test-fast demo pools bench bench-ray proto kits clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,server]'
	touch $(STAMP)

# The optional Ray extra (`--executor ray`, docs/scaling.md): about 240 MB, so not part of
# `install`; CI installs it (.ci/run) and its tests may not skip there.
install-ray: install
	$(BIN)/python -m pip install --quiet -e '.[dev,server,ray]'
	$(BIN)/python -m pip check

# The linter and the type checker (pyproject.toml: [tool.ruff], [tool.mypy]); .ci/run runs it before the suite.
lint: install
	$(BIN)/ruff check referee tests sample_bots tools
	$(BIN)/mypy

# The whole suite on two workers (pytest-xdist); it prints its 25 slowest tests, so a CI log shows
# where the time goes (the budget: under 10 minutes on 2 cores).
test: install
	$(BIN)/python -m pytest -q -n 2 --durations=25

# The starter kits (docs/writing-a-bot.md, "Another language"): C++, Go and the C stdio bot built,
# the Node bot's packages installed, each in its directory (examples/kits.toml plays them there;
# the generated C++ and Go code is compiled once and kept under build/). Each kit also builds
# alone, from a copy outside the repository (its README): tests/test_kits.py builds and plays such copies.
kits: sample_bots/node/node_modules/.package-lock.json
	$(MAKE) -C sample_bots/stdio_c
	$(MAKE) -C sample_bots/cpp -j2
	$(MAKE) -C sample_bots/go

sample_bots/node/node_modules/.package-lock.json: sample_bots/node/package-lock.json
	cd sample_bots/node && npm ci --no-audit --no-fund

# The fast loop, on two workers: the suite without the end-to-end tests (marked e2e: bot processes,
# the gRPC server, tournaments through the CLI) and the slow statistics (marked slow: calibrations,
# error rates and coverage over many simulated tournaments, long random-play property runs, the sample
# bots' strength; a quick version of each such property stays in). `make test` runs both markers too.
# 51 s on two workers, 1496 tests, an idle machine (`time make test-fast`: pytest says 43 s); its tests'
# CPU on one worker 50 s (77 s before). How to measure it, and what left it: tests/README.md, "The fast loop".
test-fast: install
	$(BIN)/python -m pytest -q -n 2 -m "not e2e and not slow"

# A real tournament of the sample bots (random, heuristic, search) in each game,
# through the gRPC referee with launched bot processes: about two minutes.
# Results land in out/; running it again prints the stored tables. Then the HTML reports
# (standings, every match's replay): the last lines printed are their paths.
demo: install
	$(BIN)/referee tournament examples/aegis.toml
	$(BIN)/referee tournament examples/confirmation.toml
	@echo "reports (open in a browser):"
	@$(BIN)/referee view out/aegis
	@$(BIN)/referee view out/confirmation

# The reference pools the project ships (docs/pool.md): each game's house pool plays its round robin at the
# examples' setting (their options, 1000 ms a decision, 10 s bank) and is fitted into referee/pools/GAME.pool.json.
# Results in out/pools/GAME: interrupted, the same command resumes. Remake them when a sample bot's code
# changes (tests/test_pool_make.py says so). 26 min (Aegis) and 28 min (Confirmation), made side by side on a busy
# 2-core machine (docs/pool.md, "The shipped pools").
pools: install
	$(BIN)/referee pool make aegis -o promise=table --deal-sets 100 --seed 2026 --concurrency 3 \
		--output referee/pools/aegis.pool.json --results out/pools/aegis
	$(BIN)/referee pool make confirmation -o rounds=2 -o trump=dealer-card --deal-sets 60 --seed 2026 --concurrency 3 \
		--output referee/pools/confirmation.pool.json --results out/pools/confirmation

proto: install
	$(BIN)/python tools/gen_proto.py

bench: install
	$(BIN)/python -m referee.bench --json bench.json

# The Ray executor against the local one: per-match overhead, throughput on one and two nodes.
bench-ray: install-ray
	$(BIN)/python -m referee.bench.ray

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
