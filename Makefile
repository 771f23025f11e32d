# The two commands a learner needs:
#   make lab    set everything up (first time only) and open JupyterLab on the lessons
#   make test   set everything up, run the unit tests and every lesson in every language
#               in quick mode
# Everything installs into .venv from requirements.txt, the one file that holds the pins.

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: lab test test-unit test-notebooks run lock setup clean

lab: setup
	$(BIN)/course lab

test: setup
	$(BIN)/python -m pytest tests notebooks

test-unit: setup
	$(BIN)/python -m pytest -m unit tests

# tests/ is always named so that tests/conftest.py loads (quick mode, markers).
test-notebooks: setup
	$(BIN)/python -m pytest -m notebook tests notebooks

# Headless run of one lesson: make run LESSON=02_dqn_cartpole [QUICK=1]
run: setup
	$(BIN)/course run $(LESSON) $(if $(QUICK),--quick)

setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null || { \
	  echo "Python 3.11 is needed (dm-reverb has no wheels for newer versions)."; \
	  echo "Install it, or pass its path: make PYTHON=/path/to/python3.11 ..."; \
	  echo "With conda: conda env create -f environment.yml"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip uv
	$(BIN)/uv pip install --python $(BIN)/python -r requirements.txt -e .
	@touch $(STAMP)

# Re-resolve the pins after editing requirements.in (needs the set-up done once).
lock: setup
	$(BIN)/uv pip compile --quiet --python-version 3.11 --universal --no-header \
	  --annotation-style line requirements.in -o requirements.txt

clean:
	rm -rf $(VENV) runs
