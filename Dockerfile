# netops-agent: the agent on its embedded defaults (SQLite in /data, seeded demo inventory).
#   docker build -t netops-agent .
#   docker run --name netagent -p 8000:8000 -p 50051:50051 -v netagent:/data netops-agent
#   docker exec netagent netagent token --subject alice --tenant acme --scope inventory.read
# The demo tokens are not printed into the container's logs (NETAGENT_PRINT_TOKENS=off below):
# make one with `netagent token` as above, or run with -e NETAGENT_PRINT_TOKENS=on.
# For PostgreSQL set NETAGENT_DATABASE_URL=postgresql+asyncpg://user:pw@host/db (and
# NETAGENT_SEED=off to keep the demo inventory out of it); two replicas on PostgreSQL:
# compose.yaml. What is and is not checked without a Docker engine:
# docs/operations.md (Docker) and tests/test_docker.py.

# The base image by version and by digest (the multi-platform index of
# python:3.11.16-slim-bookworm): the same Python, Debian and pip on every build.
ARG PYTHON_IMAGE=python:3.11.16-slim-bookworm@sha256:c425d915a89a6dcd3183b1797ad9bd8878caff5a417f6371c8df93c8ea8b727f

# Stage 1: the agent's wheel, built with the setuptools tests/test_wheel.py builds with. Its
# files (agent/_schemas links to schemas/) go into the wheel; the sources stay in this stage.
FROM ${PYTHON_IMAGE} AS wheel
WORKDIR /src
RUN pip install --no-cache-dir --disable-pip-version-check --root-user-action=ignore setuptools==84.2.1
COPY pyproject.toml README.md ./
COPY agent agent
COPY skills skills
COPY schemas schemas
COPY db db
COPY netops netops
RUN pip wheel --no-cache-dir --disable-pip-version-check --no-deps --no-build-isolation --wheel-dir /wheel .

# Stage 2: the image.
FROM ${PYTHON_IMAGE}

# The uid the agent runs as: a bind-mounted /data must be writable by it (chown 10001 DIR).
# `docker run --rm netops-agent id -u` prints it; --build-arg NETAGENT_UID=... changes it.
ARG NETAGENT_UID=10001
LABEL org.netops-agent.uid=$NETAGENT_UID
RUN useradd --create-home --uid "$NETAGENT_UID" netagent && mkdir /data && chown netagent /data
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore

# The dependencies first, exactly as docker/requirements.lock pins them (scripts/lock_image.py
# writes it), compiled to bytecode: a layer that a code edit reuses (only a new lock reinstalls).
COPY docker/requirements.lock /tmp/requirements.lock
RUN pip install --no-deps --compile --requirement /tmp/requirements.lock \
    && rm /tmp/requirements.lock

# Then the agent from its wheel, not editable, compiled; pip check refuses a lock that misses
# or contradicts a dependency pyproject.toml declares, and `netagent --help` that it imports.
COPY --from=wheel /wheel /tmp/wheel
RUN pip install --no-deps --compile /tmp/wheel/*.whl \
    && pip check \
    && netagent --help > /dev/null \
    && rm -rf /tmp/wheel
COPY docker/entrypoint.sh /usr/local/bin/netagent-entrypoint

USER netagent
WORKDIR /home/netagent
# The trained routing model is kept in the volume: a new container (an upgrade, a second
# replica on the same volume) reads it instead of training again.
ENV NETAGENT_HOME=/data \
    NETAGENT_MODEL_CACHE=/data/models \
    NETAGENT_HOST=0.0.0.0 \
    NETAGENT_PORT=8000 \
    NETAGENT_GRPC_PORT=50051 \
    NETAGENT_PUBLIC_URL=http://localhost:8000 \
    NETAGENT_PRINT_TOKENS=off
VOLUME /data
# HTTP (JSON-RPC, REST, the console) and the gRPC binding.
EXPOSE 8000 50051
# The first start migrates and seeds the database before it listens: give it a minute.
HEALTHCHECK --interval=30s --timeout=3s --start-period=60s --retries=3 \
    CMD python -c "import os, sys, urllib.request; sys.exit(urllib.request.urlopen(f\"http://127.0.0.1:{os.environ.get('NETAGENT_PORT', '8000')}/healthz\", timeout=3).status != 200)"
ENTRYPOINT ["sh", "/usr/local/bin/netagent-entrypoint"]
CMD ["netagent", "serve"]
