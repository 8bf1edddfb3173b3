#!/usr/bin/env bash
# The README's test command: installs what is missing, starts the test servers (unless
# MONGO_URL, KAFKA_BROKERS and REDIS_URL are given), then runs every check: generated-code drift,
# lint, typecheck, build, all Vitest projects (unit, integration, console, e2e), and beside them
# the fault suite (bench/faults.ts: its own private Kafka, Redis and FerretDB, which it stops and
# kills; at most 10 minutes; skipped when arguments select tests, or with SKIP_FAULTS=1). The
# fault suite spends much of its time waiting (for restarts, Kafka sessions, drains), so it runs
# in the background from the start and its report is printed after Vitest's; run one after the
# other the two took about 5 minutes longer (1,101 s against 790-848 s on a fresh clone).
set -euo pipefail
cd "$(dirname "$0")/../../.."
pnpm=(bash deploy/local/bin/pnpm.sh)
start=$(date +%s)

bash deploy/local/bin/setup.sh

faults_pid=''
faults_log=.local/test-faults.log
if [ "$#" -eq 0 ] && [ "${SKIP_FAULTS:-0}" != 1 ]; then
  mkdir -p .local
  faults_start=$(date +%s)
  echo "==> fault suite started in the background (its own servers; report after Vitest's, log $faults_log)"
  # Its own session, so that a failing check can stop it with everything it started.
  setsid "${pnpm[@]}" run test:faults >"$faults_log" 2>&1 </dev/null &
  faults_pid=$!
fi

started_infra=0
if [ -z "${MONGO_URL:-}" ] || [ -z "${KAFKA_BROKERS:-}" ] || [ -z "${REDIS_URL:-}" ]; then
  bash deploy/local/bin/infra.sh status >/dev/null 2>&1 || started_infra=1
  env_lines=$(bash deploy/local/bin/infra.sh up | grep -E '^(MONGO_URL|KAFKA_BROKERS|REDIS_URL)=')
  while IFS= read -r line; do export "${line?}"; done <<<"$env_lines"
fi
cleanup() {
  if [ -n "$faults_pid" ] && kill -0 "$faults_pid" 2>/dev/null; then
    kill -TERM -- "-$faults_pid" 2>/dev/null || true
    wait "$faults_pid" 2>/dev/null || true
  fi
  if [ "$started_infra" = 1 ] && [ "${KEEP_INFRA:-0}" != 1 ]; then bash deploy/local/bin/infra.sh down >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

"${pnpm[@]}" run proto:check
"${pnpm[@]}" run lint
"${pnpm[@]}" run typecheck
# The console's build type-checks it first; the typecheck step above just did (console and e2e):
# bundle it without a second tsc run (about 11 s of CPU).
"${pnpm[@]}" -r --filter '!@aigw/console' --if-present run build
"${pnpm[@]}" --filter @aigw/console run bundle
# Browser tests serve the console just built instead of building their own copy.
export E2E_CONSOLE_DIR="$PWD/console/dist"
vitest_start=$(date +%s)
vitest_rc=0
rm -f .local/test-outcome.txt
"${pnpm[@]}" exec vitest run --reporter=default --reporter=./deploy/local/stack/durations-reporter.ts "$@" || vitest_rc=$?
echo "vitest finished in $(( $(date +%s) - vitest_start )) s (every file's time: .local/test-durations.json)"
faults_rc=0
if [ -n "$faults_pid" ]; then
  wait "$faults_pid" || faults_rc=$?
  faults_pid=''
  cat "$faults_log"
  echo "fault suite finished in $(( $(date +%s) - faults_start )) s after its start (exit $faults_rc)"
fi
# Last, so that the tail of a long log names what failed (the fault suite's report is long).
if [ -f .local/test-outcome.txt ]; then cat .local/test-outcome.txt; fi
echo "vitest exit $vitest_rc; fault suite exit $faults_rc"
echo "test command finished in $(( $(date +%s) - start )) s"
if [ "$vitest_rc" != 0 ] || [ "$faults_rc" != 0 ]; then exit 1; fi
