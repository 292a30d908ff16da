# azml-gpu: everything a fresh machine needs, from nothing. `make preview [STACK=prod]` runs the gate on a stack,
# `make test` runs every test; `make check` is the fast loop (Python only, docs/testing.md).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STACK  ?= dev
# The policy pack runs in its own virtualenv, as under `pulumi preview --policy-pack policies`.
PACK_VENV := policies/.venv

.PHONY: test check preview smoke lint setup constraints fuse-check hostname-check pack-catalog engine docs

# Azurite (Azure Storage emulator) for the local Azure ML control plane, pinned in doubles/localml/package-lock.json.
AZURITE := doubles/localml/node_modules/.installed

setup: $(VENV)/.installed $(PACK_VENV)/.installed $(AZURITE)

# A virtualenv; Debian's python3 lacks ensurepip without python3-venv (`python3 -m venv` fails and leaves a
# half-made folder): installed with apt-get as root or through passwordless sudo, like fuse3, else named.
# APT_GET is overridden only by tests/repo/test_repo_bare_machine.py.
APT_GET ?= apt-get
VENV_FIX := sudo apt-get install -y python3-venv
define make_venv
{ $(PYTHON) -m venv $(1) >/dev/null 2>&1 || { rm -rf $(1); \
  if [ "$$(id -u)" = 0 ]; then as=""; elif sudo -n true >/dev/null 2>&1; then as="sudo -n"; else \
    echo "make: $(PYTHON) -m venv failed: on Debian/Ubuntu run \`$(VENV_FIX)\`, then make again" >&2; exit 2; fi; \
  echo "make: $(PYTHON) -m venv needs Debian's python3-venv (ensurepip): $${as:+$$as }$(APT_GET) install -y python3-venv" >&2; \
  export DEBIAN_FRONTEND=noninteractive; \
  $$as $(APT_GET) install -y -q python3-venv >/dev/null 2>&1 || { $$as $(APT_GET) update -q >/dev/null && $$as $(APT_GET) install -y -q python3-venv >/dev/null; } \
    || { echo "make: \`$(APT_GET) install -y python3-venv\` failed; install it by hand, then make again" >&2; exit 2; }; \
  $(PYTHON) -m venv $(1) || { rm -rf $(1); echo "make: $(PYTHON) -m venv still fails after installing python3-venv" >&2; exit 2; }; }; }
endef

# Reinstall only when the pinned requirements (or the transitive constraints) change.
$(VENV)/.installed: requirements.txt constraints.txt
	@test -x $(PY) || $(call make_venv,$(VENV))
	@# pip 23 (Python 3.11's bundled one) fails on this dependency graph (InconsistentCandidate on opentelemetry).
	$(PY) -m pip install --quiet --disable-pip-version-check pip==26.3
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -c constraints.txt
	@touch $@

# policies/ alone is the pack (what `pulumi policy publish` uploads): the repository packages it imports (the
# size catalog vmsizes/, azroles/, stackconfig/) reach its virtualenv as one wheel built from this checkout
# (packaging/pack-catalog), written into policies/vendor/ and named in policies/requirements.txt. Rebuilt, and
# reinstalled, whenever one of their files changes.
PACK_CATALOG := policies/vendor/azml_gpu_catalog-0.1.0-py3-none-any.whl
CATALOG_SOURCES := packaging/pack-catalog/pyproject.toml \
	$(wildcard vmsizes/*.py vmsizes/data/*.yaml azroles/*.py stackconfig/*.py)

pack-catalog: $(PACK_CATALOG)

# The pack's virtualenv itself, and its pip (the one that builds the catalog wheel, in an isolated build
# environment with the setuptools packaging/pack-catalog/pyproject.toml pins).
$(PACK_VENV)/bin/python:
	@$(call make_venv,$(PACK_VENV))
	$(PACK_VENV)/bin/python -m pip install --quiet --disable-pip-version-check pip==26.3

$(PACK_CATALOG): $(CATALOG_SOURCES) | $(PACK_VENV)/bin/python
	@rm -rf packaging/pack-catalog/build packaging/pack-catalog/*.egg-info policies/vendor/*.whl
	$(PACK_VENV)/bin/python -m pip wheel --quiet --disable-pip-version-check --no-deps -w policies/vendor packaging/pack-catalog
	@rm -rf packaging/pack-catalog/build packaging/pack-catalog/*.egg-info

$(PACK_VENV)/.installed: policies/requirements.txt $(PACK_CATALOG) | $(PACK_VENV)/bin/python
	@# From policies/, as the Pulumi CLI runs it (the wheel's path in requirements.txt is relative to it).
	cd policies && .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@# The same version with new content after an edit: replace it.
	cd policies && .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall vendor/$(notdir $(PACK_CATALOG))
	@touch $@

$(AZURITE): doubles/localml/package.json doubles/localml/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "make: npm not found: Azurite (doubles/localml/package-lock.json) needs Node.js 20+ with npm; on Debian/Ubuntu run \`sudo apt-get install -y nodejs npm\`, then make again" >&2; exit 2; }
	npm ci --prefix doubles/localml --no-audit --no-fund --loglevel=error
	@touch $@

# The end-to-end and checkpoint tests mount localml's blob file system (FUSE 3: fusermount3
# and libfuse3.so.3, both in Debian's fuse3). Installed like everything else here: with apt-get as root (or
# through passwordless sudo, as on GitHub's runners); otherwise the one command to run is printed.
# FUSE_DEV (and APT_GET, above) are overridden only by tests/repo/test_repo_bare_machine.py.
FUSE_DEV ?= /dev/fuse
FUSE_FIX := sudo apt-get install -y fuse3
fuse-check:
	@if ! command -v fusermount3 >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then as=""; elif sudo -n true >/dev/null 2>&1; then as="sudo -n"; else \
	    echo "make: fusermount3 not found and not root: run \`$(FUSE_FIX)\` (Debian/Ubuntu), then make again; localml's blob mount needs it (doubles/localml/mount.py)" >&2; exit 2; fi; \
	  echo "make: installing Debian's fuse3 (fusermount3, libfuse3.so.3) for localml's blob mount: $${as:+$$as }$(APT_GET) install -y fuse3" >&2; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  $$as $(APT_GET) install -y -q fuse3 >/dev/null 2>&1 || { $$as $(APT_GET) update -q >/dev/null && $$as $(APT_GET) install -y -q fuse3 >/dev/null; } \
	    || { echo "make: \`$(APT_GET) install -y fuse3\` failed (see above); install fuse3 by hand, then make again" >&2; exit 2; }; \
	  command -v fusermount3 >/dev/null 2>&1 || { echo "make: fuse3 installed but fusermount3 is still not on PATH ($$PATH)" >&2; exit 2; }; \
	fi
	@test -r $(FUSE_DEV) -a -w $(FUSE_DEV) || { echo "make: $(FUSE_DEV) is missing or not usable by this user: the blob-mount tests need FUSE (a container needs --device /dev/fuse --cap-add SYS_ADMIN)" >&2; exit 2; }

# The Pulumi CLI built from Pulumi's Go modules (doubles/pulumicli/go), cached outside the checkout by version
# (~/.cache/azml-gpu/engine): about 3 to 10 minutes the first time on 2 cores, seconds after (docs/engine.md).
# `make test` uses exactly this build; the gate itself prefers a supported CLI on PATH (preflight/pulumicli.py).
engine: $(VENV)/.installed
	$(PY) -m doubles.pulumicli build

# torchrun's rendezvous and Gloo resolve this machine's own name: where it does not resolve (a chroot or a
# container whose /etc/hosts lacks it) Gloo warns and falls back to loopback, and `torchrun --standalone`
# hangs until the test's timeout. Debian's installer writes `127.0.1.1 <hostname>`; say so up front.
# HOST_NAME is overridden only by tests/repo/test_repo_bare_machine.py.
HOST_NAME ?= $(shell hostname 2>/dev/null)
hostname-check:
	@getent hosts "$(HOST_NAME)" >/dev/null 2>&1 || { echo "make: this machine's name '$(HOST_NAME)' does not resolve; torchrun and Gloo (the job-script tests) need it: add \`127.0.1.1 $(HOST_NAME)\` to /etc/hosts (as Debian's installer does), then make again" >&2; exit 2; }

# Every test: the fast loop's and tests/integration/ (the real CLI, Azurite, FUSE, multi-process torch).
test: setup fuse-check hostname-check engine
	$(PY) -m pytest

# The fast loop: lint, then every test outside tests/integration/, with only Python (no Go, no Pulumi CLI, no
# Node.js, no FUSE, no torch in several processes: tests/conftest.py refuses them), in under 5 minutes.
check: lint $(PACK_VENV)/.installed
	AZML_GPU_CHECK=1 $(PY) -m pytest --ignore=tests/integration -q

# The components' argument tables in docs/components.md, rewritten from the `*Args` docstrings (components/argdocs.py).
docs: $(VENV)/.installed
	$(PY) -m components.argdocs --write

# The gate on one stack, offline: the Pulumi CLI on PATH when it is a supported one, else the one `make engine`
# builds (built here on first use).
preview: $(VENV)/.installed $(PACK_VENV)/.installed
	@$(PY) -m doubles.pulumicli ensure >/dev/null
	$(PY) -m preflight $(STACK)

# The deploy workflow on dev, offline: `pulumi up` into the local Azure ML control plane, check-deploy, the smoke
# job, `pulumi destroy` (docs/localml.md). The CLI: the one on PATH when supported, else make engine's build.
smoke: setup
	@$(PY) -m doubles.pulumicli ensure >/dev/null
	$(PY) -m doubles.localml smoke

lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# After changing requirements.txt: record every transitive version that was installed and tested.
constraints: $(VENV)/.installed
	{ sed -n '1,3p' constraints.txt; $(PY) -m pip freeze --exclude-editable | grep -v '^torch=='; } > constraints.txt.new
	mv constraints.txt.new constraints.txt
