#!/usr/bin/env bash
# Smoke-test the container where a Docker daemon runs: check the compose file, build the image,
# then run the container tests (tests/system/test_container.py): non-root, private /data, no
# compiler, a reply in Telegram (emulated) through the real image, /readyz, HEALTHCHECK
# healthy, and a clean stop on SIGTERM. Usage: deploy/smoke.sh   (from anywhere)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}

# The compose file as Compose reads it; the example env files stand in for missing ones.
made=()
trap 'rm -f ${made[@]+"${made[@]}"}' EXIT
for pair in "deploy/bot.env:deploy/bot.env.example" "deploy/lightrag.env:lightrag/.env.example"; do
    if [[ ! -e ${pair%%:*} ]]; then
        cp "${pair#*:}" "${pair%%:*}"
        made+=("${pair%%:*}")
    fi
done
if docker compose version >/dev/null 2>&1; then
    docker compose -f deploy/docker-compose.yml config --quiet
elif command -v docker-compose >/dev/null; then
    docker-compose -f deploy/docker-compose.yml config --quiet
fi
echo "smoke: compose file is valid"

if ! docker info >/dev/null 2>&1; then
    echo "smoke: no Docker daemon reachable (docker info failed): the image is not built" >&2
    exit 1
fi

MEMORY_BOT_IMAGE=${MEMORY_BOT_IMAGE:-memory-bot:smoke}
docker build --tag "$MEMORY_BOT_IMAGE" .
MEMORY_BOT_IMAGE="$MEMORY_BOT_IMAGE" "$PYTHON" -m pytest tests/system/test_container.py -v -rs
