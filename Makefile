# azml-gpu: everything a fresh machine needs, from nothing. `make test`, `make preview [STACK=prod]`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STACK  ?= dev
# The policy pack runs in its own virtualenv, as under `pulumi preview --policy-pack policies`.
PACK_VENV := policies/.venv

.PHONY: test preview smoke lint setup constraints fuse-check engine engine-preview engine-up

# Azurite (Azure Storage emulator) for the local Azure ML control plane, pinned in localml/package-lock.json.
AZURITE := localml/node_modules/.installed

setup: $(VENV)/.installed $(PACK_VENV)/.installed $(AZURITE)

# Reinstall only when the pinned requirements (or the transitive constraints) change.
$(VENV)/.installed: requirements.txt constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@# pip 23 (Python 3.11's bundled one) fails on this dependency graph (InconsistentCandidate on opentelemetry).
	$(PY) -m pip install --quiet --disable-pip-version-check pip==26.3
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -c constraints.txt
	@touch $@

$(PACK_VENV)/.installed: policies/requirements.txt
	@test -x $(PACK_VENV)/bin/python || $(PYTHON) -m venv $(PACK_VENV)
	$(PACK_VENV)/bin/python -m pip install --quiet --disable-pip-version-check pip==26.3
	$(PACK_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r policies/requirements.txt
	@touch $@

$(AZURITE): localml/package.json localml/package-lock.json
	npm ci --prefix localml --no-audit --no-fund --loglevel=error
	@touch $@

# The end-to-end and checkpoint tests mount localml's blob file system (FUSE 3): say what is missing up front.
fuse-check:
	@command -v fusermount3 >/dev/null 2>&1 || { echo "make: fusermount3 not found: install Debian's fuse3 (apt-get install -y fuse3), needed by localml's rw_mount (localml/blobfs.py)" >&2; exit 2; }
	@test -r /dev/fuse -a -w /dev/fuse || { echo "make: /dev/fuse is missing or not usable by this user: the blob-mount tests need FUSE (a container needs --device /dev/fuse --cap-add SYS_ADMIN)" >&2; exit 2; }

# The Pulumi CLI built from Pulumi's Go modules (engine/go), cached outside the checkout by version
# (~/.cache/azml-gpu/engine): about 10 minutes the first time on 2 cores, seconds after (docs/engine.md).
engine: $(VENV)/.installed
	$(PY) -m engine build

# The real `pulumi preview --diff --policy-pack policies --policy-pack-config policies/config/$(STACK).json`.
engine-preview: $(VENV)/.installed $(PACK_VENV)/.installed engine
	$(PY) -m engine preview $(STACK)

# The real `pulumi up` against the local Azure ML control plane, check-deploy, the smoke job, `pulumi destroy`.
engine-up: setup fuse-check engine
	$(PY) -m engine up $(STACK)

test: setup fuse-check engine
	$(PY) -m pytest

preview: $(VENV)/.installed $(PACK_VENV)/.installed
	$(PY) -m preflight $(STACK)

smoke: setup fuse-check
	$(PY) -m localml smoke

lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# After changing requirements.txt: record every transitive version that was installed and tested.
constraints: $(VENV)/.installed
	{ sed -n '1,3p' constraints.txt; $(PY) -m pip freeze --exclude-editable | grep -v '^torch=='; } > constraints.txt.new
	mv constraints.txt.new constraints.txt
