#!/usr/bin/env bash
# Runs the project's pinned pnpm (package.json "packageManager"), whether or not pnpm is installed.
set -euo pipefail
# Node.js 24 from .local/node when setup.sh installed it (the machine's is older).
# shellcheck source=deploy/local/bin/node-env.sh
. "$(dirname "${BASH_SOURCE[0]}")/node-env.sh"
want=9.15.9
if command -v pnpm >/dev/null 2>&1 && [ "$(pnpm --version 2>/dev/null)" = "$want" ]; then
  exec pnpm "$@"
fi
exec npx -y "pnpm@$want" "$@"
