# The two commands a learner needs:
#   make lab    set everything up (first time only) and open JupyterLab on the lessons
#   make test   set everything up, run the unit tests and every lesson in every language
#               in quick mode
# Everything installs into .venv from requirements.txt, the one file that holds the pins.
#
# CI runs `make ci`: `make lint`, `make test`, then `make test-colab`, which executes the lessons in
# French and English on a Colab-like stack (Python 3.13, TensorFlow 2.21, Keras 3 with
# tf-keras, no Reverb) in .venv-colab-3.13, where the lessons' own set-up cells install
# tf-agents and compile pybullet as on Colab; then the same in English on Colab's older
# runtime (Python 3.12, TensorFlow 2.20) in .venv-colab-3.12.

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: lab lint test test-unit test-notebooks test-doctests test-colab test-site site ci run lock lock-colab setup clean

lab: setup
	$(BIN)/course lab

# nbval executes the translated lessons cell by cell; the English ones are executed by
# tests/test_lessons_run_twice.py (twice in one kernel, blank exercises checked), so they
# are not run a third time here.
# (every folder of notebooks/ but en; the languages are defined in src/course_helpers/languages.py)
TRANSLATED := $(sort $(filter-out notebooks/en,$(wildcard notebooks/*)))

test: setup test-doctests
	$(BIN)/python -m pytest -m "not site" tests $(TRANSLATED)

# About a minute on two cores: the unit tests, then the docstrings' examples.
test-unit: setup test-doctests
	$(BIN)/python -m pytest -m unit tests

# The examples in the packages' docstrings, run as doctests (a second pytest run, so that
# tests/ is not imported as doctest modules too).
test-doctests: setup
	$(BIN)/python -m pytest -p no:cacheprovider --doctest-modules src

# Lint and format (ruff), types (mypy), and the import contracts between the learner's
# runtime and the course's tooling (import-linter); settings in pyproject.toml. The same
# checks run before each commit once `.venv/bin/pre-commit install` has been run.
lint: setup
	$(BIN)/ruff check src tests benchmarks site
	$(BIN)/ruff format --check src tests benchmarks site
	$(BIN)/mypy
	$(BIN)/lint-imports

# tests/ is always named so that tests/conftest.py loads (quick mode, markers).
test-notebooks: setup
	$(BIN)/python -m pytest -m notebook tests $(TRANSLATED)

# The website: `make site` builds _build/site/html (docs/en/maintainers.md, "The course as a website"),
# running lessons 1 and 2 in full in every language and taking lesson 3 from its stored
# runs in site/executions/; SITE_OPTIONS=--quick runs every lesson in quick mode instead.
# MathJax and axe-core come from npm (site/package-lock.json).
SITE_OPTIONS ?=
SITE_NPM := site/node_modules/.installed

site: setup $(SITE_NPM)
	$(BIN)/course site build $(SITE_OPTIONS)

$(SITE_NPM): site/package.json site/package-lock.json
	npm ci --prefix site --no-audit --no-fund
	@touch $(SITE_NPM)

# The site in headless Chromium (Debian's chromium and chromium-driver): links, language
# switcher, math, images, videos, launch buttons, axe-core, page weight; screenshots in
# _build/site/screenshots/.
test-site: site
	COURSE_SITE_REQUIRED=1 $(BIN)/python -m pytest -p no:cacheprovider -m site tests/test_site.py

# Both Colab-like profiles: 3.13 in French and English, 3.12 in English (the localized
# set-up output is already checked on 3.13). 3 to 5 minutes each on two cores.
# Then the website as it is published (lessons 1 and 2 run in full in every language,
# lesson 3 from its stored runs), in the browser test.
ci: lint test
	$(MAKE) test-colab COLAB_PYTHON=3.13
	$(MAKE) test-colab COLAB_PYTHON=3.12 COLAB_LANGUAGES=en
	$(MAKE) test-site

# The Colab-like profiles: Python 3.13 (Colab's default runtime since August 2026) or
# 3.12 (its older runtime versions), each from its own lock, ci/colab/requirements-X.Y.txt.
# COURSE_RUNTIME=colab makes course.setup() act as on Colab: the first lesson's set-up
# cell pip-installs what the base lacks (tf-agents with --no-deps, gym, gin-config),
# lesson 3's compiles pybullet, which has no wheel after Python 3.11 (about 4 minutes;
# the wheel is kept in ~/.cache/course_helpers/wheels, so later runs on the same machine
# reuse it). The lessons run in French, then in English, so that the set-up cell's
# installs speak French and its summary is checked in both. tests/ is not collected:
# its unit tests are for the pinned stack.
#   make test-colab                     Python 3.13
#   make test-colab COLAB_PYTHON=3.12   Colab's older runtime (CI runs both)
COLAB_PYTHON    ?= 3.13
COLAB_LANGUAGES ?= fr en
COLAB_VENV      ?= .venv-colab-$(COLAB_PYTHON)
COLAB_LOCK      := ci/colab/requirements-$(COLAB_PYTHON).txt
COLAB_STAMP     := $(COLAB_VENV)/.installed
# An interpreter of that version: found by ci/find-python (PATH, then pyenv) unless named.
COLAB_INTERPRETER ?=

# Lesson 3 keeps its runs in a fresh folder ($COURSE_RUNS), so that each profile trains from
# the start instead of resuming the run another profile left in runs/.
test-colab: $(COLAB_STAMP)
	COURSE_RUNTIME=colab COURSE_QUICK=1 MPLBACKEND=Agg COURSE_RUNS=$$(mktemp -d) \
	  $(COLAB_VENV)/bin/python -m pytest -p no:cacheprovider \
	  $(addprefix notebooks/,$(COLAB_LANGUAGES))

$(COLAB_STAMP): $(COLAB_LOCK) pyproject.toml
	@test -f $(COLAB_LOCK) || { echo "No lock for Python $(COLAB_PYTHON): $(COLAB_LOCK). Profiles: 3.13, 3.12."; exit 1; }
	rm -rf $(COLAB_VENV)
	python="$(COLAB_INTERPRETER)"; [ -n "$$python" ] || python=$$(ci/find-python $(COLAB_PYTHON)); \
	  "$$python" -m venv $(COLAB_VENV)
	$(COLAB_VENV)/bin/python -m pip install --quiet --disable-pip-version-check uv
	$(COLAB_VENV)/bin/uv pip install --python $(COLAB_VENV)/bin/python -r $(COLAB_LOCK)
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

# Re-resolve both Colab-like profiles after editing ci/colab/requirements.in.
lock-colab: setup
	for version in 3.13 3.12; do \
	  $(BIN)/uv pip compile --quiet --python-version $$version --no-header \
	    --annotation-style line ci/colab/requirements.in -o ci/colab/requirements-$$version.txt; \
	done

clean:
	rm -rf $(VENV) .venv-colab* runs _build site/node_modules
