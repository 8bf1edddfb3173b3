#!/usr/bin/env bash
# The README's start command: installs what is missing, starts MongoDB-compatible, Kafka and Redis
# servers, builds the console when its sources changed, then runs all seven services.
# Console and API: http://localhost:3000. Ctrl-C stops the services and the servers it started.
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$(pwd)
pnpm=(bash "$root/deploy/local/bin/pnpm.sh")

bash deploy/local/bin/setup.sh
# Node.js 24 from .local/node when setup.sh installed it (the machine's is older).
# shellcheck source=deploy/local/bin/node-env.sh
. deploy/local/bin/node-env.sh

stamp=.local/console.stamp
newest=$(find console/src console/index.html console/package.json -type f -newer "$stamp" 2>/dev/null | head -n 1 || true)
if [ ! -f console/dist/index.html ] || [ ! -f "$stamp" ] || [ -n "$newest" ]; then
  echo "==> building the console"
  "${pnpm[@]}" --filter @aigw/console run build
  mkdir -p .local && touch "$stamp"
fi

already_up=0
bash deploy/local/bin/infra.sh status >/dev/null 2>&1 && already_up=1
env_lines=$(bash deploy/local/bin/infra.sh up | grep -E '^(MONGO_URL|KAFKA_BROKERS|REDIS_URL)=')
while IFS= read -r line; do export "${line?}"; done <<<"$env_lines"
cleanup() {
  if [ "$already_up" = 0 ] && [ "${KEEP_INFRA:-0}" != 1 ]; then bash deploy/local/bin/infra.sh down || true; fi
}
trap cleanup EXIT

export SESSION_SECRET=${SESSION_SECRET:-local-dev-session-secret-change-me}
export CHANNEL_KEY_SECRET=${CHANNEL_KEY_SECRET:-0000000000000000000000000000000000000000000000000000000000000001}
export TOKEN_KEY_SECRET=${TOKEN_KEY_SECRET:-0000000000000000000000000000000000000000000000000000000000000002}
export CONSOLE_DIR="$root/console/dist"
node --import tsx deploy/local/stack/start.ts
