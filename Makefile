# One command to run the bot, one to run every test. Both set up what they need first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint bench setup clean

run: $(VENV)/.installed  ## set up, then chat (Telegram if TELEGRAM_BOT_TOKEN is set, else the terminal)
	$(BIN)/python -m bot

test: $(VENV)/.installed  ## set up, then run the whole test suite
	$(BIN)/python -m pytest

lint: $(VENV)/.installed
	$(BIN)/ruff check bot tests bench
	$(BIN)/ruff format --check bot tests bench

bench: $(VENV)/.installed  ## every benchmark, figures as ratios to a same-run baseline
	$(BIN)/python -m bench

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
