# azml-gpu: everything a fresh machine needs, from nothing. `make test`, `make preview [STACK=prod]`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STACK  ?= dev
# The policy pack runs in its own virtualenv, as under `pulumi preview --policy-pack policies`.
PACK_VENV := policies/.venv

.PHONY: test preview lint setup

setup: $(VENV)/.installed $(PACK_VENV)/.installed

# Reinstall only when the pinned requirements change.
$(VENV)/.installed: requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@# pip 23 (Python 3.11's bundled one) fails on this dependency graph (InconsistentCandidate on opentelemetry).
	$(PY) -m pip install --quiet --disable-pip-version-check pip==26.3
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

$(PACK_VENV)/.installed: policies/requirements.txt
	@test -x $(PACK_VENV)/bin/python || $(PYTHON) -m venv $(PACK_VENV)
	$(PACK_VENV)/bin/python -m pip install --quiet --disable-pip-version-check pip==26.3
	$(PACK_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r policies/requirements.txt
	@touch $@

test: setup
	$(PY) -m pytest

preview: setup
	$(PY) -m preflight $(STACK)

lint: $(VENV)/.installed
	$(PY) -m ruff check .
