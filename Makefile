# gozero: `make run` and `make test` do all set-up on a fresh machine (Python >= 3.11 on PATH).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run lint docs test test-fast test-system bench clean

# Re-install only when the dependency lists change. The constraints file pins every version
# verified together (torch CPU build, prefect 3.8.8 with fastapi<0.151, mlflow 3.17.2).
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/gozero run

# Style, the layer contracts (flows -> tasks -> {storage, gocore}; gocore: rules <- nn <- search <- play),
# and the docs (mkdocs.yml): --strict fails on a broken link or anchor, or a page left out of the nav.
lint: install
	$(BIN)/ruff check .
	PYTHONPATH=$(CURDIR) $(BIN)/lint-imports
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The docs on http://127.0.0.1:8000, rebuilt on every save.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# Tiers (tests/conftest.py): test-fast for the edit-test loop, test-system for real processes,
# test for all of them after lint (the README's test command, which .ci/run calls). Each runs on
# TEST_WORKERS processes (pytest-xdist), a test file per process at a time: `make test TEST_WORKERS=0`
# runs in one process.
TEST_WORKERS ?= 2
XDIST = $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

test: lint
	$(BIN)/python -m pytest -q --durations=25 $(XDIST)

test-fast: install
	$(BIN)/python -m pytest -q -m "not system and not slow and not gnugo" --durations=25 $(XDIST)

test-system: install
	$(BIN)/python -m pytest -q -m "system or slow or gnugo" --durations=25 $(XDIST)

bench: install
	$(BIN)/python -m benchmarks.rules
	$(BIN)/python -m benchmarks.baghchal_rules
	$(BIN)/python -m benchmarks.ingest
	$(BIN)/python -m benchmarks.train
	$(BIN)/python -m benchmarks.selfplay
	$(BIN)/python -m benchmarks.contention
	$(BIN)/python -m benchmarks.loop
	$(BIN)/python -m benchmarks.gnugo_games
	$(BIN)/python -m benchmarks.rollout
	$(BIN)/python -m benchmarks.alphago_rl
	$(BIN)/python -m benchmarks.loop --memory-only --games 200 --sims 32
	$(BIN)/python -m benchmarks.learning_curve --png docs/results/learning_curve.png
	$(BIN)/python -m benchmarks.fixed_costs
	$(BIN)/python -m benchmarks.pool_start
	$(BIN)/python -m benchmarks.loader
	$(BIN)/python -m benchmarks.conv_paths

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build site *.egg-info
