# Casebook: `make dev` sets up and starts the app with demo data; `make test` runs every test.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: dev test lint bench

$(VENV)/.installed: requirements.txt requirements-dev.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -r requirements-dev.txt
	touch $@

dev: $(VENV)/.installed
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo
	$(PY) manage.py runserver 127.0.0.1:8000

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: lint
	$(PY) -m pytest

bench: $(VENV)/.installed
	$(PY) bench/matcher.py
