#!/usr/bin/env bash
# Fails when proto/gen is not exactly what the .proto files generate, when buf lint or buf
# format complain, or when an aigw .proto uses a 64-bit integer type (they become bigint in
# protobuf-es v2; we use whole-number doubles instead, see README.md).
set -euo pipefail
cd "$(dirname "$0")"
BUF=./node_modules/.bin/buf

status=0

echo "buf lint"
"$BUF" lint || status=1

echo "buf format"
"$BUF" format --diff --exit-code || status=1

echo "no 64-bit integers in aigw contracts"
if grep -rnE '^\s*(repeated |optional )?(u?int64|s?fixed64|sint64)\b|map<[^>]*64' \
  --include='*.proto' --exclude-dir=node_modules --exclude-dir=gen --exclude-dir=grpc .; then
  echo "64-bit integer fields found above: use double holding a whole number" >&2
  status=1
fi

echo "generated code is up to date"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$BUF" generate --output "$tmp"
if ! diff -ru gen "$tmp/gen"; then
  echo "proto/gen drifted from the .proto files: run 'pnpm proto:gen' and commit" >&2
  status=1
fi

exit "$status"
