#!/usr/bin/env bash
# Fetches mongo-java-server from Maven Central, compiles the launcher and runs it in the foreground
# (ADR 0001: a measurement beside FerretDB, not part of the local stack or setup.sh).
#
#   deploy/local/infra/mongo-java-server/run.sh [port] [h2|memory] [h2 file]
#   defaults: 27141 h2 /tmp/mongo-java-server-<port>.mv
#
# Everything it writes (jars, classes) stays in .local/mongo-java-server (gitignored); Maven's own
# cache is ~/.m2. Needs Java 17 and mvn.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
out="$root/.local/mongo-java-server"
port="${1:-27141}"
backend="${2:-h2}"
file="${3:-/tmp/mongo-java-server-$port.mv}"

# Refetch the jars when pom.xml changes (its hash is kept beside them).
stamp="$out/pom.sha256"
want="$(sha256sum < "$here/pom.xml" | cut -d' ' -f1)"
if [[ "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
  rm -rf "$out/lib"
  mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$out/lib" -DincludeScope=runtime
  echo "$want" > "$stamp"
fi
if [[ ! -f "$out/classes/Main.class" || "$here/Main.java" -nt "$out/classes/Main.class" ]]; then
  mkdir -p "$out/classes"
  javac -d "$out/classes" -cp "$out/lib/*" "$here/Main.java"
fi
case "$backend" in
  h2) exec java -Xmx2g -cp "$out/classes:$out/lib/*" Main "$port" h2 "$file" ;;
  memory) exec java -Xmx2g -cp "$out/classes:$out/lib/*" Main "$port" memory ;;
  *) echo "backend must be h2 or memory" >&2; exit 2 ;;
esac
