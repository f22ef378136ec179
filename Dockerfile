# The supportgate service: `docker build -t supportgate .` (docker-compose.yml builds it too).
# Two stages: the first builds supportgate's wheel (the package with its policies, default
# matrix, migrations and console files as package data); the image installs only that wheel,
# with no checkout and no build tools in it. tests/packaging/test_dockerfile.py checks that
# what is copied exists and suffices, and tests/packaging/test_wheel.py builds and runs the
# wheel from exactly these files.
FROM python:3.11-slim AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN pip install build==1.6.1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY supportgate ./supportgate
COPY policies ./policies
COPY migrations ./migrations
RUN python -m build --wheel --outdir /dist .

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN groupadd --system --gid 10001 supportgate \
 && useradd --system --uid 10001 --gid supportgate \
      --home-dir /var/lib/supportgate --create-home --shell /usr/sbin/nologin supportgate \
 && install -d -o supportgate -g supportgate -m 0700 /var/lib/supportgate/keys /var/lib/supportgate/opa
# keys/: where docker-compose.yml keeps the checkpoint and bundle signing keys, opa/: the
# credentials it shares with OPA (volumes made from these directories, so owned by the
# service's user)

COPY --from=build /dist/ /tmp/dist/
RUN pip install /tmp/dist/*.whl && rm -rf /tmp/dist

# Not root from here on. The working directory holds the SQLite file when no
# SUPPORTGATE_DATABASE_URL is given.
USER supportgate
WORKDIR /var/lib/supportgate
EXPOSE 8000

# /health/ready answers 200 only when the database and the policy engine both answer.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=5 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health/ready', timeout=4)"]

# --host 0.0.0.0: reachable from outside the container (the default, 127.0.0.1, is not).
CMD ["supportgate", "serve", "--host", "0.0.0.0", "--port", "8000"]
