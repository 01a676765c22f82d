# make demo · make test · make perf · make lint — each creates .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test perf lint format clean catalogs messages

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Reinstalled whenever pyproject.toml changes (new dependencies, new entry points).
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The compiled catalogs (i18n/locale/*/LC_MESSAGES/*.mo): built here, shipped in the package,
# never committed. `make messages` brings the .po files in line with the code.
PO := $(wildcard i18n/locale/*/LC_MESSAGES/*.po)
MO := $(PO:.po=.mo)

catalogs: $(MO)

%.mo: %.po | $(STAMP)
	$(PY) -m i18n.messages compile $<

messages: $(STAMP)
	$(PY) -m i18n.messages update

$(VENV)/.perf: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,perf]'
	touch $(VENV)/.perf

demo: $(STAMP) catalogs
	$(VENV)/bin/unoattack demo

test: $(STAMP) catalogs
	$(PY) -m pytest -n 2 -q

perf: $(VENV)/.perf catalogs
	@for f in tests/perf/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) build *.egg-info
