#!/usr/bin/env bash
# FerretDB on its own PostgreSQL cluster (Debian's `postgresql` package): the embedded store the
# benchmarks compare with FerretDB on SQLite (ADR 0001). infra.sh runs it in place of the SQLite
# server when AIGW_MONGO_BACKEND=postgresql:
#
#   on-postgresql.sh <ferretdb binary> <data folder> <listen address>
#
# The cluster lives in <data folder>/pg (created on first start, PostgreSQL's defaults: fsync and
# synchronous commit on, as durable as the SQLite server), listens only on a Unix socket in
# <data folder>/pg-sock, and is stopped (fast shutdown) when FerretDB exits or this script gets
# SIGTERM. PostgreSQL refuses to run as root: as root it runs as the `postgres` user (setpriv
# execs, so the signals reach the server itself).
set -euo pipefail

ferretdb="$1"
data="$2"
listen="$3"

bin="$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -1)"
if [ -z "$bin" ] || [ ! -x "$bin/postgres" ]; then
  echo "on-postgresql.sh: PostgreSQL is not installed (apt-get install postgresql)" >&2
  exit 1
fi
pgdata="$data/pg"
sock="$data/pg-sock"
mkdir -p "$pgdata" "$sock"
as_pg=()
if [ "$(id -u)" = 0 ]; then
  # The postgres user must reach its folders (a private infra folder is made mode 700).
  d="$data"
  while [ "$d" != / ]; do
    [ "$(stat -c %a "$d" | cut -c3)" = 0 ] && chmod o+x "$d"
    d="$(dirname "$d")"
  done
  chown postgres: "$pgdata" "$sock"
  chmod 700 "$pgdata"
  as_pg=(setpriv --reuid=postgres --regid=postgres --init-groups --)
fi
if [ ! -f "$pgdata/PG_VERSION" ]; then
  "${as_pg[@]}" "$bin/initdb" -D "$pgdata" -U postgres --auth=trust -E UTF8 >"$data/pg-initdb.log" 2>&1
fi
# No TCP listener: only this host's Unix socket, in the data folder.
"${as_pg[@]}" "$bin/postgres" -D "$pgdata" -c listen_addresses= -c unix_socket_directories="$sock" \
  -c max_connections=200 -c logging_collector=off >"$data/pg.log" 2>&1 &
pg=$!

stop_pg() {
  kill -INT "$pg" 2>/dev/null || true
  wait "$pg" 2>/dev/null || true
}
ferret=""
on_term() {
  if [ -n "$ferret" ]; then
    kill -TERM "$ferret" 2>/dev/null || true
    wait "$ferret" 2>/dev/null || true
  fi
  stop_pg
  exit 0
}
trap on_term TERM INT

for _ in $(seq 1 150); do
  "$bin/pg_isready" -q -h "$sock" -U postgres && break
  sleep 0.2
done
"$bin/psql" -h "$sock" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'ferretdb'" | grep -q 1 ||
  "$bin/createdb" -h "$sock" -U postgres ferretdb

"$ferretdb" \
  --handler=postgresql \
  --postgresql-url="postgres://postgres@/ferretdb?host=$sock" \
  --listen-addr="$listen" \
  --state-dir="$data" \
  --debug-addr=- \
  --telemetry=disable \
  --log-level=error &
ferret=$!
set +e
wait "$ferret"
code=$?
set -e
stop_pg
exit "$code"
