# The two commands a learner needs:
#   make lab    set everything up (first time only) and open JupyterLab on the lessons
#   make test   set everything up, run the unit tests and every lesson in every language
#               in quick mode
# Everything installs into .venv from requirements.txt, the one file that holds the pins.
#
# CI runs `make ci`: `make test`, then `make test-colab`, which executes the English
# lessons on a Colab-like stack (TensorFlow 2.20, Keras 3 with tf-keras, no Reverb) in
# .venv-colab, where the lessons' own set-up cell installs tf-agents as on Colab.

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: lab test test-unit test-notebooks test-colab ci run lock setup clean

lab: setup
	$(BIN)/course lab

test: setup
	$(BIN)/python -m pytest tests notebooks

test-unit: setup
	$(BIN)/python -m pytest -m unit tests

# tests/ is always named so that tests/conftest.py loads (quick mode, markers).
test-notebooks: setup
	$(BIN)/python -m pytest -m notebook tests notebooks

ci: test test-colab

# The Colab-like profile. COURSE_RUNTIME=colab makes course.setup() act as on Colab:
# the first lesson's set-up cell pip-installs what the base lacks (tf-agents with
# --no-deps, gym, gin-config), lesson 3's adds pybullet. tests/ is not collected: its
# unit tests are for the pinned stack.
# COLAB_PYTHON=python3.12 rehearses Colab's own Python: pybullet then compiles from source.
COLAB_PYTHON ?= $(PYTHON)
COLAB_VENV   ?= .venv-colab
COLAB_STAMP  := $(COLAB_VENV)/.installed

test-colab: $(COLAB_STAMP)
	COURSE_RUNTIME=colab COURSE_QUICK=1 MPLBACKEND=Agg \
	  $(COLAB_VENV)/bin/python -m pytest -p no:cacheprovider notebooks/en

$(COLAB_STAMP): ci/colab/requirements.txt pyproject.toml
	@$(COLAB_PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] < (3, 11))' 2>/dev/null || { \
	  echo "The Colab-like profile needs Python 3.11 or newer: make test-colab COLAB_PYTHON=..."; exit 1; }
	rm -rf $(COLAB_VENV)
	$(COLAB_PYTHON) -m venv $(COLAB_VENV)
	$(COLAB_VENV)/bin/python -m pip install --quiet uv
	$(COLAB_VENV)/bin/uv pip install --python $(COLAB_VENV)/bin/python -r ci/colab/requirements.txt
	$(COLAB_VENV)/bin/uv pip install --python $(COLAB_VENV)/bin/python --no-deps -e .
	@touch $(COLAB_STAMP)

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
	rm -rf $(VENV) $(COLAB_VENV) runs
