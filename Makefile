# Every target bootstraps .venv itself, so a fresh clone needs nothing but python3.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check
# perun and what it needs to run (demo, screenshots, benchmarks); the test extras come on top for `make test`
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
# pytest-xdist workers: two per core, as the tests wait much of the time (on subprocesses, compilers, tmux, timeouts)
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) * 2 )))

.PHONY: test demo bench bench-report screenshots clean

DEMO_DIR ?= $(VENV)/demo

$(BIN)/python:
	@$(PYTHON) -m venv $(VENV)

# One line on the terminal; pip's and setuptools' output goes to install.log, shown only if installing fails.
# pip is upgraded only when older than 23 (Python 3.11's own pip does); --no-compile: the modules a command
# imports are compiled when first imported, instead of all of numpy's and scipy's files at install time.
$(STAMP): $(BIN)/python pyproject.toml
	@echo "perun: installing perun and its dependencies into $(VENV)"
	@{ { $(BIN)/python -c 'import pip, sys; sys.exit(int(pip.__version__.split(".")[0]) < 23)' || \
	     $(PIP) install --upgrade pip; } && \
	   $(PIP) install --no-compile -e . --config-settings editable_mode=compat; } \
	   > $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; \
	   echo "perun: installing failed; the output above is kept in $(VENV)/install.log" >&2; exit 1; }
	@touch $(STAMP)

$(TEST_STAMP): $(STAMP) pyproject.toml
	@echo "perun: installing the test extras into $(VENV)"
	@$(PIP) install --no-compile -e '.[test]' --config-settings editable_mode=compat > $(VENV)/install-test.log 2>&1 || \
	   { cat $(VENV)/install-test.log; \
	     echo "perun: installing failed; the output above is kept in $(VENV)/install-test.log" >&2; exit 1; }
	@touch $(TEST_STAMP)

# Where PYTHONDONTWRITEBYTECODE is set, every worker would compile its modules anew (pytest rewrites the 250
# test modules in each: 8 of the 11 s CPU it takes to collect), and so would every perun subprocess; the
# tests keep their bytecode under $(VENV) then, so the source tree still gets no __pycache__.
ifneq ($(PYTHONDONTWRITEBYTECODE),)
test: export PYTHONDONTWRITEBYTECODE :=
test: export PYTHONPYCACHEPREFIX := $(abspath $(VENV))/pycache
endif

# the tests spread over TEST_WORKERS processes (tests/conftest.py keeps busy tests and TUI snapshots apart and
# a module-scoped fixture on one worker, and orders the longest tests first: xdist keeps that order); the 20
# slowest are listed at the end
test: $(TEST_STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder --durations=20

# one line per phase: installing (once), then perun-tui, which builds the demo the first time while it shows it:
# the history opens as soon as it is written and the commits get their profiles as they are measured
demo: $(STAMP)
	@echo "perun: opening the demo in perun-tui (q quits)"
	@$(BIN)/perun-tui --demo "$(DEMO_DIR)"

# SVG pictures of every screen at 80x24 and 120x40, into screenshots/ (README shows them)
screenshots: $(STAMP)
	$(BIN)/python screenshots/make_screenshots.py

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

# every figure README.md and benchmarks/README.md state, measured again: benchmarks/report.json and REPORT.md
# (commit, date, load per run), and the marked figures of the READMEs rewritten; about an hour on 2 cores
bench-report: $(STAMP)
	$(BIN)/python benchmarks/report.py

clean:
	rm -rf $(VENV) build *.egg-info
