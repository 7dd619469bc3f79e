#!/bin/sh
# The image's entry point: checks that NETAGENT_HOME (the volume /data: the signing key and
# the SQLite database) is writable by the uid the agent runs as, then runs the command.
# A named volume is (the image creates /data owned by that uid); a bind-mounted host folder
# must be made writable by it first: chown 10001 ./data (docs/operations.md, Docker).
set -e
home="${NETAGENT_HOME:-/data}"
mkdir -p "$home" 2>/dev/null || true
if [ ! -w "$home" ]; then
    echo "error: NETAGENT_HOME $home is not writable by uid $(id -u) (gid $(id -g)), which runs the agent" >&2
    echo "  a bind-mounted folder must be writable by that uid: on the host, chown $(id -u) <folder>" >&2
    echo "  (or run the container with --user set to the folder's owner)" >&2
    exit 2
fi
exec "$@"
