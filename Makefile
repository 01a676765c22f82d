# make demo · make test · make perf · make lint — each creates .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# An editable install of this checkout. setuptools ends every editable install of a flat layout
# (the packages at the top of the checkout, as here) with an advisory to mind folders of the
# same name; it says nothing about this project, so it is not shown.
INSTALL := PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install --quiet -e

.PHONY: demo test perf lint format clean browser screenshots catalogs messages pi-check

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Reinstalled whenever pyproject.toml or setup.py changes (dependencies, entry points, the build).
$(STAMP): pyproject.toml setup.py | $(PY)
	$(INSTALL) '.[dev,web]'
	touch $(STAMP)

# The compiled catalogs (i18n/locale/*/LC_MESSAGES/*.mo) of this checkout, never committed; the
# package build compiles its own with the same compiler (i18n/msgfmt.py, run by setup.py).
# `make messages` brings the .po files in line with the code.
PO := $(wildcard i18n/locale/*/LC_MESSAGES/*.po)
MO := $(PO:.po=.mo)

catalogs: $(MO)

%.mo: %.po | $(STAMP)
	$(PY) -m i18n.messages compile $<

messages: $(STAMP)
	$(PY) -m i18n.messages update

$(VENV)/.perf: $(STAMP)
	$(INSTALL) '.[dev,web,perf]'
	touch $(VENV)/.perf

demo: $(STAMP) catalogs
	$(VENV)/bin/unoattack demo

# The web tests drive the system Chromium through Playwright (which never downloads a browser
# here): install the distribution's package when it is missing, or say how.
browser:
	@if [ -n "$$UNOATTACK_CHROMIUM" ] || command -v chromium >/dev/null 2>&1 \
		|| command -v chromium-browser >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get update -qq && apt-get install -y -qq chromium; \
	else \
		echo "make: the browser tests need Chromium: sudo apt-get install -y chromium" \
			"(or set UNOATTACK_CHROMIUM to its path)" >&2; exit 1; \
	fi
	@# Thai and Chinese glyphs, so the pages in those languages are laid out (and checked for
	@# overflow) with their real widths, not with empty boxes.
	@if command -v fc-list >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
		&& { [ -z "$$(fc-list :lang=th)" ] || [ -z "$$(fc-list :lang=zh-tw)" ]; }; then \
		apt-get install -y -qq fonts-thai-tlwg fonts-wqy-microhei; \
	fi

# The long tests run first (tests/conftest.py) and an idle worker takes half of the other's
# queue (worksteal): both workers end together. Bytecode is cached even where the shell sets
# PYTHONDONTWRITEBYTECODE: each worker would rewrite every test module's asserts again, and
# every `python -m` child a test starts would compile the project anew (__pycache__ is ignored).
test: $(STAMP) catalogs browser
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -n 2 --dist worksteal -q

# The browser tests save their screenshots in a temporary folder; this keeps the docs' ones.
SCREENSHOT_TESTS := tests/engine/web/test_browser.py tests/engine/web/test_phone.py \
	tests/engine/web/test_languages.py
screenshots: $(STAMP) catalogs browser
	UNOATTACK_SCREENSHOTS=docs/images $(PY) -m pytest -q -n 2 $(SCREENSHOT_TESTS)

perf: $(VENV)/.perf catalogs
	@for f in tests/perf/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

# The box on an emulated Raspberry Pi: arm64 and armhf Debian 12 under qemu-user, installed by
# systemd/install.sh as a box owner installs it, then driven as systemd and the owner would
# (hardware/pi-setup.md). Root only; the Debian images are cached in $$PI_CHECK_CACHE
# (/var/cache/unoattack-pi-check). Stdlib Python: it needs no venv.
pi-check:
	$(PYTHON) tools/pi_check.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) build dist *.egg-info
