#!/usr/bin/env bash
# Starts (or finds running) a private PostgreSQL 15 cluster for the tests, on 127.0.0.1 and a free
# port, and prints its URL as the one line on stdout:
#
#   ENTITY_GIT_PG_URL=postgres://entity_git:<password>@127.0.0.1:<port>/entity_git
#
# so `export "$(scripts/start-postgres.sh)"` sets it; the URL is also in $ENTITY_GIT_PG_DIR/url.
# Everything else goes to stderr. Idempotent: a second run finds the cluster and prints the same
# URL; concurrent runs (parallel test workers) wait on a lock and agree on one cluster.
#
# As root on a fresh Debian machine it installs the server (apt-get) when the binaries are missing
# and runs the cluster as the `postgres` user; as any other user it runs the cluster as that user
# and expects the binaries to be there.
#
#   scripts/start-postgres.sh          start, or print the running cluster's URL
#   scripts/start-postgres.sh --stop   stop the cluster (the data directory stays, for a restart)
#
# Environment: ENTITY_GIT_PG_DIR (default /tmp/entity-git-pg), PG_BIN (default
# /usr/lib/postgresql/15/bin).
#
# The cluster is for tests: fsync and synchronous_commit are off (a crash may lose it; start
# again), and it listens on 127.0.0.1 only, with a random password.
set -euo pipefail

BASE="${ENTITY_GIT_PG_DIR:-/tmp/entity-git-pg}"
PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
DATA="$BASE/data"
SOCK="$BASE/sock"
LOG="$BASE/log/server.log"
DB=entity_git
ROLE=entity_git

log() { echo "[start-postgres] $*" >&2; }

if [ "$(id -u)" = 0 ]; then
  RUN_AS=postgres
else
  RUN_AS="$(id -un)"
fi
as_owner() {
  if [ "$(id -un)" = "$RUN_AS" ]; then "$@"; else runuser -u "$RUN_AS" -- "$@"; fi
}

install_server() {
  if [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ] && [ -x "$PG_BIN/postgres" ]; then return; fi
  if [ "$(id -u)" != 0 ]; then
    log "PostgreSQL server binaries are missing under $PG_BIN and only root may install them (apt-get install postgresql)"
    exit 1
  fi
  log "installing PostgreSQL (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update >&2
  apt-get install -y postgresql >&2
  if [ ! -x "$PG_BIN/initdb" ]; then
    log "apt-get installed no $PG_BIN/initdb (is this Debian 12 with PostgreSQL 15?)"
    exit 1
  fi
}

running() { [ -f "$DATA/postmaster.pid" ] && as_owner "$PG_BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pick_port() {
  local port
  if [ -f "$BASE/port" ] && port_free "$(cat "$BASE/port")"; then cat "$BASE/port"; return; fi
  for _ in $(seq 1 200); do
    port=$(( 20000 + RANDOM % 40000 ))
    if port_free "$port"; then echo "$port"; return; fi
  done
  log "found no free port"
  exit 1
}

psql_admin() {
  as_owner "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$(cat "$BASE/port")" -U postgres -d postgres "$@"
}

url() { echo "postgres://$ROLE:$(cat "$BASE/password")@127.0.0.1:$(cat "$BASE/port")/$DB"; }

stop() {
  if running; then as_owner "$PG_BIN/pg_ctl" -D "$DATA" -m fast -w stop >&2; else log "not running"; fi
}

start() {
  install_server
  if running && [ -f "$BASE/url" ]; then
    cat "$BASE/url" | sed 's/^/ENTITY_GIT_PG_URL=/'
    return
  fi
  if [ ! -f "$DATA/PG_VERSION" ]; then
    log "creating a cluster in $DATA"
    rm -rf "$DATA" "$SOCK"
    mkdir -p "$DATA" "$SOCK" "$BASE/log"
    od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > "$BASE/password"
    chmod 600 "$BASE/password"
    chown -R "$RUN_AS" "$DATA" "$SOCK" "$BASE/log" "$BASE/password"
    chmod 700 "$DATA" "$SOCK"
    # Socket connections are trusted (the socket directory is the owner's alone); TCP needs the password.
    as_owner "$PG_BIN/initdb" -D "$DATA" -U postgres -E UTF8 --no-locale --no-sync \
      --auth-local=trust --auth-host=scram-sha-256 >&2
    rm -f "$BASE/url"
  fi
  if ! running; then
    pick_port > "$BASE/port.new"
    mv "$BASE/port.new" "$BASE/port"
    log "starting on 127.0.0.1:$(cat "$BASE/port")"
    # 9>&-: the server must not inherit our lock, or it would hold it for as long as it runs.
    as_owner "$PG_BIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 start -o \
      "-p $(cat "$BASE/port") -k $SOCK -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" >&2 9>&-
  fi
  if ! psql_admin -tAc "select 1 from pg_roles where rolname = '$ROLE'" | grep -q 1; then
    # The role may create databases, so tests can each take a fresh one.
    psql_admin -c "create role $ROLE login createdb password '$(cat "$BASE/password")'"
  fi
  if ! psql_admin -tAc "select 1 from pg_database where datname = '$DB'" | grep -q 1; then
    psql_admin -c "create database $DB owner $ROLE"
  fi
  (umask 077 && url > "$BASE/url.new")
  mv "$BASE/url.new" "$BASE/url"
  echo "ENTITY_GIT_PG_URL=$(cat "$BASE/url")"
}

mkdir -p "$BASE"
chmod 755 "$BASE"
exec 9>"$BASE/lock"
flock 9

case "${1:-}" in
  --stop) stop ;;
  "") start ;;
  *) log "usage: $0 [--stop]"; exit 2 ;;
esac
