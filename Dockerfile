# netops-agent: the agent on its embedded defaults (SQLite in /data, seeded demo inventory).
#   docker build -t netops-agent .
#   docker run -p 8000:8000 -v netagent:/data netops-agent
# For PostgreSQL set NETAGENT_DATABASE_URL=postgresql+asyncpg://user:pw@host/db; two replicas
# on PostgreSQL: compose.yaml. What is and is not checked without a Docker engine:
# docs/operations.md (Docker) and tests/test_docker.py.
FROM python:3.11-slim

# The uid the agent runs as: a bind-mounted /data must be writable by it (chown 10001 DIR).
# `docker run --rm netops-agent id -u` prints it; --build-arg NETAGENT_UID=... changes it.
ARG NETAGENT_UID=10001
LABEL org.netops-agent.uid=$NETAGENT_UID
RUN useradd --create-home --uid "$NETAGENT_UID" netagent && mkdir /data && chown netagent /data
WORKDIR /app

# The dependencies first, read from pyproject.toml alone, so that a code edit reuses this
# layer (only a change of pyproject.toml reinstalls them).
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
    && pip install --no-cache-dir -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# Then the code. Editable install without dependencies (installed above): the code and its
# files (agent/_schemas links to schemas/) run from /app.
COPY README.md ./
COPY agent agent
COPY skills skills
COPY schemas schemas
COPY db db
COPY netops netops
RUN pip install --no-cache-dir --no-deps -e .
COPY docker/entrypoint.sh /usr/local/bin/netagent-entrypoint

USER netagent
ENV NETAGENT_HOME=/data \
    NETAGENT_HOST=0.0.0.0 \
    NETAGENT_PORT=8000 \
    NETAGENT_GRPC_PORT=50051 \
    NETAGENT_PUBLIC_URL=http://localhost:8000
VOLUME /data
# HTTP (JSON-RPC, REST, the console) and the gRPC binding.
EXPOSE 8000 50051
# The first start migrates and seeds the database before it listens: give it a minute.
HEALTHCHECK --interval=30s --timeout=3s --start-period=60s --retries=3 \
    CMD python -c "import os, sys, urllib.request; sys.exit(urllib.request.urlopen(f\"http://127.0.0.1:{os.environ.get('NETAGENT_PORT', '8000')}/healthz\", timeout=3).status != 200)"
ENTRYPOINT ["sh", "/usr/local/bin/netagent-entrypoint"]
CMD ["netagent", "serve"]
