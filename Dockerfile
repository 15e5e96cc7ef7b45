# The bot in a container: slim, non-root, every Python package at the version requirements.lock
# pins. Build: `docker build -t memory-bot .`; run it beside LightRAG with deploy/docker-compose.yml
# (docs/DEPLOYMENT.md). The base image is pinned by tag and by digest, so a rebuild gets the
# same bytes; bump both together.
ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm@sha256:86adf8dbadc3d6e82ee5dd2c74bec2e1c2467cdad47886280501df722372d2e1

# -- build: a virtualenv with the bot and its dependencies; only the venv leaves this stage ----
FROM ${PYTHON_IMAGE} AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore
WORKDIR /src
COPY requirements.lock pyproject.toml README.md ./
COPY bot ./bot
# The runtime dependencies only (no test or lint tools), each constrained to its locked
# version; then every installed package is checked against the lock, so nothing unpinned or
# at another version gets in. Every dependency ships a wheel: no compiler is needed.
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip install --constraint requirements.lock . \
    && /opt/venv/bin/pip check \
    && /opt/venv/bin/pip freeze --exclude-editable | grep -v '^memory-bot==' > /tmp/installed \
    && if grep -vxFf requirements.lock /tmp/installed; then \
         echo "installed but not pinned in requirements.lock (above)" >&2; exit 1; \
       fi

# -- runtime: the venv, the shipped preferences, a non-root user and a private data dir -------
FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="memory-bot" \
      org.opencontainers.image.description="A Telegram assistant with long-term memory" \
      org.opencontainers.image.licenses="MIT"
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    BOT_DATA_DIR=/data \
    BOT_RUNTIME_CONFIG=/app/preferences/runtime-config.json \
    BOT_PROMPTS_DIR=/app/preferences/prompts \
    BOT_SKILLS_DIR=/app/preferences/skills \
    HTTP_PORT=8080 \
    HTTP_LISTEN=0.0.0.0
RUN groupadd --system --gid 10001 bot \
    && useradd --system --uid 10001 --gid bot --home-dir /app --shell /usr/sbin/nologin bot \
    && install -d -o bot -g bot -m 0700 /data
COPY --from=build /opt/venv /opt/venv
COPY preferences /app/preferences
WORKDIR /app
USER 10001:10001
# Sessions, memory, the inbox and the index queue: a named volume starts as this folder
# (owned by the bot, 0700).
VOLUME ["/data"]
# /healthz, /readyz, /metrics (HTTP_PORT); a webhook, when set, listens on its own port.
EXPOSE 8080
# SIGTERM: stop taking updates, let turns in progress finish (25 s), drain the index queue
# (rag.shutdownDrainSeconds), save; give it `stop_grace_period: 40s` or `docker stop -t 40`.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["python", "-m", "bot.ops.probe", "readyz"]
ENTRYPOINT ["python", "-m", "bot"]
CMD ["--channel", "auto"]
