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

# Secrets of this installation: session signing and the keys that encrypt channel and token keys
# at rest. Made at random on the first start into the git-ignored .local/secrets.env (mode 600) and
# read from there afterwards, so that no two installations share them. A data folder from before
# this file existed was encrypted with the fixed values earlier versions used: those are kept for
# it (with a warning), or its keys could not be read any more.
secrets=.local/secrets.env
if [ ! -f "$secrets" ]; then
  mkdir -p .local
  (
    umask 077
    if [ -d .local/data/ferretdb ] && [ -n "$(ls -A .local/data/ferretdb 2>/dev/null)" ]; then
      echo "==> WARNING: .local/data predates .local/secrets.env: keeping the fixed secrets earlier versions used (remove .local/data for new random ones)" >&2
      {
        echo "SESSION_SECRET=local-dev-session-secret-change-me"
        echo "CHANNEL_KEY_SECRET=0000000000000000000000000000000000000000000000000000000000000001"
        echo "TOKEN_KEY_SECRET=0000000000000000000000000000000000000000000000000000000000000002"
      } >"$secrets.tmp"
    else
      node -e 'const r = (n) => require("node:crypto").randomBytes(n).toString("hex");
        console.log(`SESSION_SECRET=${r(32)}\nCHANNEL_KEY_SECRET=${r(32)}\nTOKEN_KEY_SECRET=${r(32)}`)' >"$secrets.tmp"
    fi
    mv "$secrets.tmp" "$secrets"
  )
  echo "==> secrets of this installation written to $secrets"
fi
# Secrets added after the file was made (TOTP_KEY_SECRET: 2FA secrets at rest) are appended once.
if ! grep -q '^TOTP_KEY_SECRET=' "$secrets"; then
  (umask 077 && node -e 'console.log(`TOTP_KEY_SECRET=${require("node:crypto").randomBytes(32).toString("hex")}`)' >>"$secrets")
fi
# Values given in the environment win over the file.
while IFS='=' read -r name value; do
  case "$name" in
    SESSION_SECRET | CHANNEL_KEY_SECRET | TOKEN_KEY_SECRET | TOTP_KEY_SECRET) [ -n "${!name:-}" ] || export "$name=$value" ;;
  esac
done <"$secrets"
export CONSOLE_DIR="$root/console/dist"
node --import tsx deploy/local/stack/start.ts
