# Casebook: `make dev` sets up and starts the app with demo data (`make dev PORT=8123` on
# another port); `make test` runs every test
# (`make test-fast`: all but the browser and pipeline tests);
# `make stack` starts the production-like stack (gunicorn, Celery workers, beat) on PostgreSQL
# and Redis, with the demo data (bin/stack says which environment variables it reads).
VENV ?= .venv
PY := $(VENV)/bin/python
# Where `make dev` serves (make dev PORT=8123).
PORT ?= 8000

.PHONY: dev stack test test-fast lint bench

$(VENV)/.installed: requirements.txt requirements-dev.txt requirements-nodeps.txt environments/casebook_bfcl/pyproject.toml
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -r requirements-dev.txt
	$(VENV)/bin/pip install --quiet --no-deps -r requirements-nodeps.txt
	touch $@

dev: $(VENV)/.installed
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo --address http://127.0.0.1:$(PORT)/
	$(PY) manage.py runserver 127.0.0.1:$(PORT)

stack: $(VENV)/.installed
	$(PY) bin/stack --demo

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(PY) manage.py makemigrations --check --dry-run

test: lint
	$(PY) -m pytest

# The edit loop: every test but the browser's and those that start real services.
test-fast: $(VENV)/.installed
	$(PY) -m pytest -m "not e2e and not pipeline and not stack"

bench: $(VENV)/.installed
	$(PY) bench/matcher.py
