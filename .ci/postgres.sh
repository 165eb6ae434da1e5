#!/usr/bin/env bash
# Start a throwaway PostgreSQL server on loopback for the store tests and print its URL.
#
#   export PODIUM_TEST_POSTGRES_URL="$(.ci/postgres.sh)"
#
# Installs the Debian package `postgresql` when no server binaries are found (needs
# root or sudo, and the network), initialises a cluster under $PODIUM_PG_DIR (default
# /tmp/podium-pg), starts it on 127.0.0.1:$PODIUM_PG_PORT (default 54329, trust
# authentication, fsync off: test data only), creates the database podium_test and prints
#   postgresql://postgres@127.0.0.1:PORT/podium_test
# on stdout (everything else goes to stderr).  Running it again reuses a running server.
# Stop the server with:  pg_ctl -D "$PODIUM_PG_DIR/data" stop   (as the cluster's owner)
set -euo pipefail

DIR="${PODIUM_PG_DIR:-/tmp/podium-pg}"
PORT="${PODIUM_PG_PORT:-54329}"
DB="${PODIUM_PG_DB:-podium_test}"

log() { echo "postgres.sh: $*" >&2; }

find_bindir() {
    local d
    d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    if [ -n "$d" ] && [ -x "$d/initdb" ]; then echo "$d"; return 0; fi
    if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return 0; fi
    return 1
}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi
}

BIN="$(find_bindir || true)"
if [ -z "$BIN" ]; then
    log "no PostgreSQL server binaries found; installing the Debian package postgresql"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    BIN="$(find_bindir)"
fi
log "using $BIN"

# initdb/postgres refuse to run as root: run the cluster as the `postgres` OS user then.
RUN=()
if [ "$(id -u)" -eq 0 ]; then
    if ! id postgres >/dev/null 2>&1; then
        useradd --system --home-dir "$DIR" --shell /bin/sh postgres
    fi
    if command -v runuser >/dev/null 2>&1; then
        RUN=(runuser -u postgres --)
    else
        RUN=(su postgres -s /bin/sh -c)
    fi
fi
run() {
    if [ "${#RUN[@]}" -eq 0 ]; then "$@";
    elif [ "${RUN[0]}" = "su" ]; then "${RUN[@]}" "$(printf '%q ' "$@")";
    else "${RUN[@]}" "$@"; fi
}

mkdir -p "$DIR"
if [ "$(id -u)" -eq 0 ]; then chown postgres "$DIR"; fi
DATA="$DIR/data"

if [ ! -f "$DATA/PG_VERSION" ]; then
    log "initialising a cluster in $DATA"
    run "$BIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 >"$DIR/initdb.log" 2>&1 || {
        cat "$DIR/initdb.log" >&2; exit 1; }
fi

if run "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    log "server already running"
else
    log "starting the server on 127.0.0.1:$PORT"
    run "$BIN/pg_ctl" -D "$DATA" -w -t 60 -l "$DIR/server.log" \
        -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c fsync=off \
            -c synchronous_commit=off -c full_page_writes=off -c max_connections=100" \
        start >&2 || { cat "$DIR/server.log" >&2; exit 1; }
fi

PSQL=("$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -v ON_ERROR_STOP=1 -qtA)
for _ in $(seq 1 30); do
    if "${PSQL[@]}" -d postgres -c "SELECT 1" >/dev/null 2>&1; then break; fi
    sleep 1
done
if [ "$("${PSQL[@]}" -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != "1" ]; then
    "${PSQL[@]}" -d postgres -c "CREATE DATABASE $DB" >&2
fi
echo "postgresql://postgres@127.0.0.1:$PORT/$DB"
