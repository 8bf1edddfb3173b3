#!/usr/bin/env bash
# Runs the project's pinned pnpm (package.json "packageManager"), whether or not pnpm is installed.
set -euo pipefail
want=9.15.9
if command -v pnpm >/dev/null 2>&1 && [ "$(pnpm --version 2>/dev/null)" = "$want" ]; then
  exec pnpm "$@"
fi
exec npx -y "pnpm@$want" "$@"
