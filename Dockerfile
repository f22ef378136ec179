# The supportgate service: `docker build -t supportgate .` (docker-compose.yml builds it too).
# The project is installed editable from /app because the service finds its policies
# (/app/policies) and migrations (/app/migrations) beside the `service` package.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN groupadd --system --gid 10001 supportgate \
 && useradd --system --uid 10001 --gid supportgate \
      --home-dir /var/lib/supportgate --create-home --shell /usr/sbin/nologin supportgate

WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY supportgate ./supportgate
COPY policies ./policies
COPY migrations ./migrations
RUN pip install --editable .

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
