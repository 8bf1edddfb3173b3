#!/usr/bin/env bash
# Runs the real infrastructure for tests and the local stack on 127.0.0.1, from binaries that
# deploy/local/bin/setup.sh installed into .local/ (nothing is downloaded here):
#   FerretDB v1.24 (MongoDB wire protocol, SQLite backend)  127.0.0.1:27027   data .local/data/ferretdb
#   Apache Kafka 3.9 (KRaft, broker+controller in one JVM)  127.0.0.1:9094/9095 data .local/kafka/data
#   Redis (Debian's redis-server)                           127.0.0.1:6390    data .local/data/redis
#
# Usage: bash deploy/local/bin/infra.sh up|down|status|env [service...]
#   up      start what does not answer yet (a server already answering on its port is left alone),
#           wait until each answers a real request, then print exactly three lines on stdout:
#             MONGO_URL=mongodb://127.0.0.1:27027/
#             KAFKA_BROKERS=127.0.0.1:9094
#             REDIS_URL=redis://127.0.0.1:6390
#   down    stop what `up` started (pid files in .local/run/); never touches other processes.
#           Data stays in .local/ (rm -rf .local/data .local/kafka/data for a clean slate).
#   status  one line per service; exit 0 when all three answer, 3 otherwise
#   env     print the three lines above without starting anything
# Services: mongo, kafka, redis (default: all). Progress goes to stderr, logs to .local/logs/.
#
# A private set of servers (the fault suite, bench/faults.ts, stops and kills its own): set
# AIGW_INFRA_DIR to a folder that takes .local/'s run/, logs/ and data/ (Kafka's data too), and
# AIGW_MONGO_PORT, AIGW_KAFKA_PORT, AIGW_KAFKA_CONTROLLER_PORT, AIGW_REDIS_PORT to other ports.
# AIGW_MONGO_BACKEND=postgresql runs FerretDB on a PostgreSQL cluster of its own instead of SQLite
# (Debian's postgresql package; data in data/ferretdb-pg): the benchmarks' store comparison.
# up/down/status then only ever see the servers of that folder. Unset: the defaults above.
# AIGW_MONGO_DEBUG_ADDR=host:port opens FerretDB's debug handler there (Prometheus metrics per
# command at /debug/metrics, Go profiles at /debug/pprof): how the benchmarks count store commands.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
LOCAL="$ROOT/.local"
INFRA="$ROOT/deploy/local/infra"
RUN="${AIGW_INFRA_DIR:-$LOCAL}/run"
LOGS="${AIGW_INFRA_DIR:-$LOCAL}/logs"
DATA="${AIGW_INFRA_DIR:-$LOCAL}/data"
# Kafka's configuration and data (its libraries stay in .local/kafka).
KAFKA_DIR="$LOCAL/kafka"
if [ -n "${AIGW_INFRA_DIR:-}" ]; then KAFKA_DIR="$AIGW_INFRA_DIR/kafka"; fi

HOST=127.0.0.1
MONGO_PORT="${AIGW_MONGO_PORT:-27027}"
KAFKA_PORT="${AIGW_KAFKA_PORT:-9094}"
KAFKA_CONTROLLER_PORT="${AIGW_KAFKA_CONTROLLER_PORT:-9095}"
REDIS_PORT="${AIGW_REDIS_PORT:-6390}"
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms128m -Xmx512m}"
# C1 only (TieredStopAtLevel=1): the broker answers in ~7 s instead of ~12 s on 2 cores, and the
# C2 compiler threads do not compete with the tests; plenty fast for test/dev traffic.
KAFKA_JVM_OPTS="${KAFKA_JVM_OPTS:--XX:TieredStopAtLevel=1 -XX:+UseG1GC -XX:MaxGCPauseMillis=20}"
# Seconds to wait for a server to answer after starting it.
WAIT_MONGO=30
WAIT_KAFKA=120
WAIT_REDIS=20

ALL_SERVICES=(mongo kafka redis)

log() { printf '[infra] %s\n' "$*" >&2; }

print_env() {
  echo "MONGO_URL=mongodb://$HOST:$MONGO_PORT/"
  echo "KAFKA_BROKERS=$HOST:$KAFKA_PORT"
  echo "REDIS_URL=redis://$HOST:$REDIS_PORT"
}

port_of() {
  case "$1" in
    mongo) echo "$MONGO_PORT" ;;
    kafka) echo "$KAFKA_PORT" ;;
    redis) echo "$REDIS_PORT" ;;
  esac
}

# A word that must appear in the command line of the process a pid file names, so that a
# recycled pid is never mistaken for ours.
marker_of() {
  case "$1" in
    mongo) echo ".local/bin/ferretdb" ;;
    kafka) echo "kafka.Kafka" ;;
    redis) echo "redis-server" ;;
  esac
}

answers() { node "$INFRA/probe.mjs" "$1" "$HOST:$(port_of "$1")" 2>/dev/null; }

pidfile() { echo "$RUN/$1.pid"; }

# Prints the pid recorded for a service if that process is alive and is ours.
our_pid() {
  local f pid
  f="$(pidfile "$1")"
  [ -f "$f" ] || return 1
  pid="$(cat "$f")"
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$(marker_of "$1")" || return 1
  echo "$pid"
}

rotate_log() {
  local f="$LOGS/$1.log"
  if [ -f "$f" ]; then mv -f "$f" "$f.1"; fi
}

# Starts "$@" detached (own session, no stdin) with output to .local/logs/<service>.log.
launch() {
  local svc="$1"
  shift
  rotate_log "$svc"
  # 9>&-: the server must not inherit (and so hold) the lock of .local/run/.lock.
  setsid "$@" >"$LOGS/$svc.log" 2>&1 </dev/null 9>&- &
  echo $! >"$(pidfile "$svc")"
}

ensure_installed() {
  local missing=()
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  ls "$LOCAL/kafka/libs"/kafka_2.13-*.jar >/dev/null 2>&1 || missing+=(kafka)
  [ -x "$LOCAL/bin/ferretdb" ] || missing+=(ferretdb)
  if [ "${#missing[@]}" -gt 0 ]; then
    log "missing: ${missing[*]}; running setup.sh --infra-only"
    bash "$ROOT/deploy/local/bin/setup.sh" --infra-only >&2
  fi
}

start_mongo() {
  if [ "${AIGW_MONGO_BACKEND:-sqlite}" = postgresql ]; then
    # The benchmarks' comparison (ADR 0001): FerretDB on a private PostgreSQL cluster. SIGTERM
    # stops both; SIGKILL to the recorded pid would leave them running, so the fault suite does
    # not use it.
    mkdir -p "$DATA/ferretdb-pg"
    launch mongo bash "$INFRA/ferretdb/on-postgresql.sh" "$LOCAL/bin/ferretdb" "$DATA/ferretdb-pg" "$HOST:$MONGO_PORT"
    return
  fi
  mkdir -p "$DATA/ferretdb"
  # Log level error: warn would dump every error reply (duplicate keys, ...) into the log.
  launch mongo "$LOCAL/bin/ferretdb" \
    --handler=sqlite \
    --sqlite-url="file:$DATA/ferretdb/" \
    --listen-addr="$HOST:$MONGO_PORT" \
    --state-dir="$DATA/ferretdb" \
    --debug-addr="${AIGW_MONGO_DEBUG_ADDR:--}" \
    --telemetry=disable \
    --log-level=error
}

start_kafka() {
  local dir="$KAFKA_DIR" cp
  mkdir -p "$dir/data"
  sed -e "s#@LOG_DIRS@#$dir/data#" \
    -e "s#127.0.0.1:9094#$HOST:$KAFKA_PORT#g" \
    -e "s#127.0.0.1:9095#$HOST:$KAFKA_CONTROLLER_PORT#g" \
    "$INFRA/kafka/server.properties" >"$dir/server.properties"
  cp="$LOCAL/kafka/libs/*"
  local jvm=(-Djava.awt.headless=true "-Dlog4j.configuration=file:$INFRA/kafka/log4j.properties" "-Dkafka.logs.dir=$LOGS")
  if [ ! -f "$dir/data/meta.properties" ]; then
    local id="-"
    # A cluster id as `kafka-storage.sh random-uuid` makes it: 16 random bytes, base64url, no
    # padding, not starting with '-'.
    while [ "${id#-}" != "$id" ]; do
      id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c1-22)"
    done
    log "kafka: formatting storage ${dir#"$ROOT"/}/data (cluster id $id)"
    java -Xmx256m -XX:TieredStopAtLevel=1 "${jvm[@]}" -cp "$cp" kafka.tools.StorageTool format -t "$id" -c "$dir/server.properties" \
      >"$LOGS/kafka-format.log" 2>&1 || {
      tail -20 "$LOGS/kafka-format.log" >&2
      return 1
    }
  fi
  # shellcheck disable=SC2086 # KAFKA_HEAP_OPTS and KAFKA_JVM_OPTS are lists of JVM flags
  launch kafka java $KAFKA_HEAP_OPTS $KAFKA_JVM_OPTS \
    -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent \
    "${jvm[@]}" -cp "$cp" kafka.Kafka "$dir/server.properties"
}

start_redis() {
  mkdir -p "$DATA/redis"
  launch redis redis-server \
    --bind "$HOST" \
    --port "$REDIS_PORT" \
    --daemonize no \
    --dir "$DATA/redis" \
    --dbfilename dump.rdb \
    --save "60 1000" \
    --appendonly no \
    --logfile ""
}

wait_for() {
  local svc="$1" limit pid t0
  case "$svc" in
    mongo) limit=$WAIT_MONGO ;;
    kafka) limit=$WAIT_KAFKA ;;
    redis) limit=$WAIT_REDIS ;;
  esac
  t0=$(date +%s)
  until answers "$svc"; do
    if ! pid="$(our_pid "$svc")"; then
      log "$svc: process exited before answering; last lines of .local/logs/$svc.log:"
      tail -25 "$LOGS/$svc.log" >&2 || true
      rm -f "$(pidfile "$svc")"
      return 1
    fi
    if [ $(($(date +%s) - t0)) -ge "$limit" ]; then
      log "$svc: no answer on $HOST:$(port_of "$svc") after ${limit}s; see .local/logs/$svc.log"
      return 1
    fi
    sleep 0.3
  done
  log "$svc: answering on $HOST:$(port_of "$svc") (pid $(our_pid "$svc" || echo '?'), $(($(date +%s) - t0)) s)"
}

cmd_up() {
  local started=() svc pid
  ensure_installed
  for svc in "$@"; do
    if answers "$svc"; then
      if pid="$(our_pid "$svc")" && [[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == *" (deleted)" ]]; then
        # setup.sh rebuilt the binary (a new FerretDB patch): run the new one on the same data.
        log "$svc: pid $pid runs a binary that setup.sh has since replaced; restarting it"
        cmd_down "$svc"
      elif pid="$(our_pid "$svc")"; then
        log "$svc: already running (pid $pid, started by infra.sh)"
        continue
      else
        log "$svc: a server already answers on $HOST:$(port_of "$svc"); leaving it alone"
        continue
      fi
    fi
    if pid="$(our_pid "$svc")"; then
      log "$svc: pid $pid is ours but does not answer yet; waiting for it"
      started+=("$svc")
      continue
    fi
    log "$svc: starting on $HOST:$(port_of "$svc")"
    "start_$svc"
    started+=("$svc")
  done
  for svc in "${started[@]}"; do
    wait_for "$svc"
  done
  print_env
}

cmd_down() {
  local svc pid
  for svc in "$@"; do
    if pid="$(our_pid "$svc")"; then
      log "$svc: stopping pid $pid"
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 300); do
        [ -d "/proc/$pid" ] || break
        # A zombie (already exited, not yet reaped) counts as gone.
        [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = Z ] && break
        sleep 0.1
      done
      if [ -d "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]; then
        log "$svc: still alive after 30 s; SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
      fi
      log "$svc: stopped"
    elif answers "$svc"; then
      log "$svc: answers on $HOST:$(port_of "$svc") but was not started by infra.sh; leaving it"
    else
      log "$svc: not running"
    fi
    rm -f "$(pidfile "$svc")"
  done
}

cmd_status() {
  local svc pid all=0
  for svc in "$@"; do
    if answers "$svc"; then
      if pid="$(our_pid "$svc")"; then
        printf '%-6s %s:%-6s up (pid %s, started by infra.sh)\n' "$svc" "$HOST" "$(port_of "$svc")" "$pid"
      else
        printf '%-6s %s:%-6s up (not started by infra.sh)\n' "$svc" "$HOST" "$(port_of "$svc")"
      fi
    elif pid="$(our_pid "$svc")"; then
      printf '%-6s %s:%-6s starting or stuck (pid %s, not answering)\n' "$svc" "$HOST" "$(port_of "$svc")" "$pid"
      all=3
    else
      printf '%-6s %s:%-6s down\n' "$svc" "$HOST" "$(port_of "$svc")"
      all=3
    fi
  done
  return $all
}

main() {
  local cmd="${1:-}"
  shift || true
  local services=("$@")
  if [ "${#services[@]}" -eq 0 ]; then services=("${ALL_SERVICES[@]}"); fi
  for svc in "${services[@]}"; do
    case "$svc" in
      mongo | kafka | redis) ;;
      *)
        echo "infra.sh: unknown service '$svc' (mongo, kafka, redis)" >&2
        exit 2
        ;;
    esac
  done
  mkdir -p "$RUN" "$LOGS" "$DATA"
  case "$cmd" in
    up | down)
      # One up/down at a time (parallel test workers may all call `up`).
      exec 9>"$RUN/.lock"
      flock -w 300 9 || {
        log "another infra.sh up/down holds .local/run/.lock"
        exit 1
      }
      "cmd_$cmd" "${services[@]}"
      ;;
    status) cmd_status "${services[@]}" ;;
    env) print_env ;;
    *)
      sed -n '2,21p' "$0" >&2
      exit 2
      ;;
  esac
}

main "$@"
