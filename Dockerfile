# syntax=docker/dockerfile:1
# paperwatch's container image: `paperwatch run` as an unprivileged user, the exact hash-checked
# dependencies of requirements/lock.txt, the SQLite file (when no PostgreSQL URL is set) in the
# volume /var/lib/paperwatch, and a HEALTHCHECK on the ops endpoint's /healthz.
#
#   docker build -t paperwatch:local .
#
# Not built in CI (no container runtime runs there): tests/unit/test_deploy_files.py checks
# what can be checked without one (README, "Deploying").
#
# The base is pinned by its exact tag. The lock is resolved for CPython 3.11 on Linux x86_64
# (linux/amd64); to pin by digest too, write the tag as python:3.11.14-slim-bookworm@sha256:...
# with the digest `docker buildx imagetools inspect python:3.11.14-slim-bookworm` prints.

FROM python:3.11.14-slim-bookworm AS build

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1
# A C compiler, for a pinned package that has no wheel for the platform; the image that runs
# paperwatch (below) has none.
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential \
    && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/paperwatch
ENV PATH=/opt/paperwatch/bin:$PATH
WORKDIR /src
# The pins first, so that a change to the code alone reuses this layer.
COPY requirements/ requirements/
RUN pip install --require-hashes --no-deps -r requirements/bootstrap.txt \
    && pip install --require-hashes -r requirements/lock.txt
COPY pyproject.toml README.md LICENSE ./
COPY bot/ bot/
COPY handlers/ handlers/
COPY storage/ storage/
# The project itself, its dependencies already there (as dev.py installs it, not editable).
RUN pip install --no-deps --no-build-isolation . \
    && pip check

FROM python:3.11.14-slim-bookworm

RUN groupadd --system --gid 10001 paperwatch \
    && useradd --system --uid 10001 --gid paperwatch --no-create-home \
       --home-dir /var/lib/paperwatch --shell /usr/sbin/nologin paperwatch \
    && mkdir -p /var/lib/paperwatch \
    && chown paperwatch:paperwatch /var/lib/paperwatch
COPY --from=build /opt/paperwatch /opt/paperwatch
# The working directory holds the SQLite file by default (paperwatch.db); mount a volume there.
# The ops endpoint listens on all of the container's interfaces, so that a published port and
# Prometheus can reach it; publish it to the host's loopback only (compose.yaml does).
ENV PATH=/opt/paperwatch/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PAPERWATCH_OPS_PORT=8080 \
    PAPERWATCH_OPS_HOST=0.0.0.0
WORKDIR /var/lib/paperwatch
VOLUME ["/var/lib/paperwatch"]
USER paperwatch
EXPOSE 8080
# 200 while the event loop and the scheduler are alive; not failed by arXiv or a chat
# platform being down. urlopen raises on 503 or no answer, and the check fails.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ['PAPERWATCH_OPS_PORT'] + '/healthz', timeout=4)"]
CMD ["paperwatch", "run"]
