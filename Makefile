# One command to run the bot, one to run every test. Both set up what they need first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
LIGHTRAG_VENV := lightrag/.venv

.PHONY: run test test-fast lint bench setup lock lightrag lightrag-setup postgres-binaries clean

run: $(VENV)/.installed  ## set up, then chat (Telegram if TELEGRAM_BOT_TOKEN is set, else the terminal)
	$(BIN)/python -m bot

test: $(VENV)/.installed $(LIGHTRAG_VENV)/.installed postgres-binaries  ## set up, then run the whole test suite
	$(BIN)/python -m pytest

# The fast loop: no server, every core (pytest-xdist), and the tests' compiled, assertion-
# rewritten modules cached in __pycache__ even where PYTHONDONTWRITEBYTECODE is set.
test-fast: $(VENV)/.installed  ## the unit tests and the file stores' contract tests, in seconds
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest tests/unit tests/contract -m "not postgres" -q -n auto

# The tests start their own PostgreSQL server (tests/fakes/postgres.py) from Debian's binaries;
# installed here when missing (as root, as CI runs; otherwise it says what to install).
postgres-binaries:
	@command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
	  { if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	    else echo "The tests need PostgreSQL's server binaries: sudo apt-get install postgresql" >&2; exit 1; fi; }

lint: $(VENV)/.installed  ## ruff, mypy and the layers' import contracts, as CI runs them
	$(BIN)/ruff check bot tests bench
	$(BIN)/ruff format --check bot tests bench
	$(BIN)/mypy bot
	$(BIN)/lint-imports --no-logo

bench: $(VENV)/.installed $(LIGHTRAG_VENV)/.installed  ## every benchmark, as same-run ratios
	$(BIN)/python -m bench

setup: $(VENV)/.installed

# Installs exactly the versions in requirements.lock, then the bot itself without resolving.
$(VENV)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

lock:  ## pin the newest versions pyproject.toml allows into requirements.lock (fresh venv)
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet --upgrade pip
	.venv-lock/bin/python -m pip install --quiet ".[dev]"
	( echo '# Every package `make` installs, pinned: regenerate with `make lock` after editing pyproject.toml.'; \
	  .venv-lock/bin/python -m pip freeze --exclude-editable | grep -v '^memory-bot' ) > requirements.lock
	rm -rf .venv-lock

lightrag: $(LIGHTRAG_VENV)/.installed  ## a LightRAG server on loopback from lightrag/.env, no Docker
	$(LIGHTRAG_VENV)/bin/python lightrag/serve.py

lightrag-setup: $(LIGHTRAG_VENV)/.installed

$(LIGHTRAG_VENV)/.installed: lightrag/requirements.txt lightrag/prepare_tiktoken.py
	$(PYTHON) -m venv $(LIGHTRAG_VENV)
	$(LIGHTRAG_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LIGHTRAG_VENV)/bin/python -m pip install --quiet -r lightrag/requirements.txt
	$(LIGHTRAG_VENV)/bin/python lightrag/prepare_tiktoken.py lightrag/tiktoken_cache
	touch $@

clean:
	rm -rf $(VENV) $(LIGHTRAG_VENV) lightrag/tiktoken_cache .pytest_cache .ruff_cache
