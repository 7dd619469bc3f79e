# netops-agent: the agent on its embedded defaults (SQLite in /data, seeded demo inventory).
#   docker build -t netops-agent .
#   docker run -p 8000:8000 -v netagent:/data netops-agent
# For PostgreSQL set NETAGENT_DATABASE_URL=postgresql+asyncpg://user:pw@host/db.
FROM python:3.11-slim

RUN useradd --create-home --uid 10001 netagent && mkdir /data && chown netagent /data
WORKDIR /app
COPY pyproject.toml README.md ./
COPY agent agent
COPY skills skills
COPY schemas schemas
COPY db db
COPY netops netops
# Editable install: the code and its files (agent/_schemas links to schemas/) run from /app.
RUN pip install --no-cache-dir -e .

USER netagent
ENV NETAGENT_HOME=/data \
    NETAGENT_HOST=0.0.0.0 \
    NETAGENT_PORT=8000 \
    NETAGENT_PUBLIC_URL=http://localhost:8000
VOLUME /data
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz').status != 200)"
CMD ["netagent", "serve"]
