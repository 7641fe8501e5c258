# Every target bootstraps .venv itself, so a fresh clone needs nothing but python3.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test demo bench bench-report screenshots clean

DEMO_DIR ?= $(VENV)/demo

$(BIN)/python:
	@$(PYTHON) -m venv $(VENV)

# One line on the terminal; pip's and setuptools' output goes to install.log, shown only if installing fails.
$(STAMP): $(BIN)/python pyproject.toml
	@echo "perun: installing perun and its dependencies into $(VENV)"
	@{ $(BIN)/python -m pip install --upgrade pip && \
	   $(BIN)/python -m pip install -e '.[test]' --config-settings editable_mode=compat; } \
	   > $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; \
	   echo "perun: installing failed; the output above is kept in $(VENV)/install.log" >&2; exit 1; }
	@touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest

# one line per phase: installing (once), building the demo (once), opening it
demo: $(STAMP)
	@$(BIN)/python -m perun_core.cli.demo "$(DEMO_DIR)"
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
