#!/usr/bin/env bash
# The README's test command: installs what is missing, starts the test servers (unless
# MONGO_URL, KAFKA_BROKERS and REDIS_URL are given), then runs every check: generated-code drift,
# lint, typecheck, build, all Vitest projects (unit, integration, console, e2e), then the fault
# suite (bench/faults.ts: its own private Kafka, Redis and FerretDB, which it stops and kills;
# at most 10 minutes; skipped when arguments select tests, or with SKIP_FAULTS=1).
set -euo pipefail
cd "$(dirname "$0")/../../.."
pnpm=(bash deploy/local/bin/pnpm.sh)
start=$(date +%s)

bash deploy/local/bin/setup.sh

started_infra=0
if [ -z "${MONGO_URL:-}" ] || [ -z "${KAFKA_BROKERS:-}" ] || [ -z "${REDIS_URL:-}" ]; then
  bash deploy/local/bin/infra.sh status >/dev/null 2>&1 || started_infra=1
  env_lines=$(bash deploy/local/bin/infra.sh up | grep -E '^(MONGO_URL|KAFKA_BROKERS|REDIS_URL)=')
  while IFS= read -r line; do export "${line?}"; done <<<"$env_lines"
fi
cleanup() {
  if [ "$started_infra" = 1 ] && [ "${KEEP_INFRA:-0}" != 1 ]; then bash deploy/local/bin/infra.sh down >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

"${pnpm[@]}" run proto:check
"${pnpm[@]}" run lint
"${pnpm[@]}" run typecheck
"${pnpm[@]}" run build
# Browser tests serve the console just built instead of building their own copy.
export E2E_CONSOLE_DIR="$PWD/console/dist"
vitest_start=$(date +%s)
"${pnpm[@]}" exec vitest run --reporter=default --reporter=./deploy/local/stack/durations-reporter.ts "$@"
echo "vitest finished in $(( $(date +%s) - vitest_start )) s (every file's time: .local/test-durations.json)"
if [ "$#" -eq 0 ] && [ "${SKIP_FAULTS:-0}" != 1 ]; then
  faults_start=$(date +%s)
  "${pnpm[@]}" run test:faults
  echo "fault suite finished in $(( $(date +%s) - faults_start )) s"
fi
echo "test command finished in $(( $(date +%s) - start )) s"
