#!/usr/bin/env bash
# Installs everything the project needs on a fresh Debian machine, from package registries only:
#   - Debian packages: redis-server, chromium (apt-get update only when needed)
#   - Node.js 24 from the npm registry -> .local/node, when the machine's Node.js is older
#   - Apache Kafka 3.9.x jars from Maven Central      -> .local/kafka/libs/
#   - FerretDB v1.24.0 built from the Go module proxy -> .local/bin/ferretdb
#   - the pnpm workspace (npx -y pnpm@9.15.9 install at the repo root)
#   - schemathesis from PyPI (python3 -m pip), for the /api fuzzing test
#   - helm, kubeconform and kustomize from the Go module proxy -> .local/bin, and JSON schemas
#     of Kubernetes objects -> .local/k8s-schemas (the chart test)
# Idempotent and fast when everything is already in place (stamps in .local/stamps/).
# Nothing is downloaded at run time: deploy/local/bin/infra.sh only runs what this installs.
#
# Usage: bash deploy/local/bin/setup.sh [--infra-only]
#   --infra-only   skip apt's chromium and the pnpm install (used by infra.sh when a binary is missing)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
LOCAL="$ROOT/.local"
INFRA="$ROOT/deploy/local/infra"
STAMPS="$LOCAL/stamps"
FERRETDB_VERSION="v1.24.0"
PNPM="npx -y pnpm@9.15.9"

INFRA_ONLY=0
for arg in "$@"; do
  case "$arg" in
    --infra-only) INFRA_ONLY=1 ;;
    -h | --help)
      sed -n '2,17p' "$0"
      exit 0
      ;;
    *)
      echo "setup: unknown argument $arg" >&2
      exit 2
      ;;
  esac
done

log() { printf '[setup] %s\n' "$*" >&2; }
now() { date +%s; }
START=$(now)
mkdir -p "$LOCAL/bin" "$STAMPS"

# One setup at a time (infra.sh and test scripts may call it in parallel).
exec 8>"$LOCAL/.setup.lock"
if ! flock -n 8; then
  log "another setup.sh is running; waiting for it"
  flock -w 1800 8
fi

# sha256 of the given files, used to decide whether an install is still current.
fingerprint() { cat "$@" | sha256sum | cut -d' ' -f1; }

# ---------------------------------------------------------------------------------------------
# 1. Debian packages
# ---------------------------------------------------------------------------------------------
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
APT_UPDATED=0
apt_update_if_needed() {
  if [ "$APT_UPDATED" = 1 ]; then return; fi
  # Lists missing (fresh machine) or older than a day: refresh them once.
  if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mtime -1 2>/dev/null | head -1)" ]; then
    log "apt-get update"
    $SUDO apt-get update -qq >&2
  fi
  APT_UPDATED=1
}
apt_install() {
  apt_update_if_needed
  log "apt-get install -y $*"
  if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >&2; then
    # Stale lists can point at packages that are gone: refresh and retry once.
    log "apt-get install failed; apt-get update and retry"
    $SUDO apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >&2
  fi
}

want=()
command -v redis-server >/dev/null 2>&1 || want+=(redis-server)
if [ "$INFRA_ONLY" = 0 ] && [ ! -x /usr/bin/chromium ]; then want+=(chromium); fi
# A Chinese font, so that the browser tests' screenshots show the console's text instead of boxes.
if [ "$INFRA_ONLY" = 0 ] && ! dpkg -s fonts-wqy-microhei >/dev/null 2>&1; then want+=(fonts-wqy-microhei); fi
# Toolchains used below; present on the project's machines, installed from Debian otherwise.
command -v java >/dev/null 2>&1 || want+=(default-jre-headless)
command -v mvn >/dev/null 2>&1 || want+=(maven)
command -v go >/dev/null 2>&1 || want+=(golang-go)
command -v flock >/dev/null 2>&1 || want+=(util-linux)
command -v patch >/dev/null 2>&1 || want+=(patch)
command -v node >/dev/null 2>&1 || want+=(nodejs npm)
if [ "${#want[@]}" -gt 0 ]; then
  apt_install "${want[@]}"
else
  log "apt: redis-server, chromium, a Chinese font, java, mvn, go already installed"
fi

# ---------------------------------------------------------------------------------------------
# 1b. Node.js 24 (npm registry) when the machine's Node.js is older
# ---------------------------------------------------------------------------------------------
# The services, the images (node:24-slim) and the test command run on Node.js 24 (an LTS line;
# Node.js 20 reached its end of life in April 2026). Where the machine's node is older, the
# official Linux build published on the npm registry as node-linux-<arch> (what the `node`
# package installs; `npm pack` checks it against the registry's integrity hash) is unpacked into
# .local/node, and deploy/local/bin/node-env.sh (sourced by pnpm.sh and start.sh) puts it first
# in PATH. System npm and npx keep working under it.
NODE_VERSION="24.21.0"
NODE_MIN_MAJOR=24
NODE_DIR="$LOCAL/node"
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(node_major node)" -ge "$NODE_MIN_MAJOR" ]; then
  rm -rf "$NODE_DIR"
  log "node: $(node -v) from PATH"
elif [ -x "$NODE_DIR/bin/node" ] && [ "$("$NODE_DIR/bin/node" -v)" = "v$NODE_VERSION" ]; then
  log "node: v$NODE_VERSION already at .local/node (the machine's is $(node -v))"
else
  t=$(now)
  case "$(uname -m)" in
    x86_64) node_arch=x64 ;;
    aarch64 | arm64) node_arch=arm64 ;;
    *) node_arch="$(uname -m)" ;;
  esac
  log "node: the machine's is $(node -v): npm pack node-linux-$node_arch@$NODE_VERSION -> .local/node"
  tmp="$LOCAL/node.tmp"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  (cd "$tmp" && npm pack --silent "node-linux-$node_arch@$NODE_VERSION" >/dev/null)
  tar -xzf "$tmp"/node-linux-*.tgz -C "$tmp"
  "$tmp/package/bin/node" -v >/dev/null
  rm -rf "$NODE_DIR"
  mv "$tmp/package" "$NODE_DIR"
  rm -rf "$tmp"
  log "node: $("$NODE_DIR/bin/node" -v) in $(($(now) - t)) s"
fi
# shellcheck source=deploy/local/bin/node-env.sh
. "$ROOT/deploy/local/bin/node-env.sh"

# ---------------------------------------------------------------------------------------------
# 2. Apache Kafka jars (Maven Central, through deploy/local/infra/kafka/pom.xml)
# ---------------------------------------------------------------------------------------------
KAFKA_LIBS="$LOCAL/kafka/libs"
kafka_fp="$(fingerprint "$INFRA/kafka/pom.xml")"
if [ -f "$STAMPS/kafka" ] && [ "$(cat "$STAMPS/kafka")" = "$kafka_fp" ] && ls "$KAFKA_LIBS"/kafka_2.13-*.jar >/dev/null 2>&1; then
  log "kafka: jars already in .local/kafka/libs ($(find "$KAFKA_LIBS" -name "*.jar" | wc -l) jars)"
else
  t=$(now)
  log "kafka: mvn dependency:copy-dependencies (pom deploy/local/infra/kafka/pom.xml) -> .local/kafka/libs"
  tmp="$LOCAL/kafka/libs.tmp"
  rm -rf "$tmp"
  mkdir -p "$LOCAL/kafka"
  # (sed: Maven prints colour resets even in batch mode)
  mvn -B -q -Dstyle.color=never -f "$INFRA/kafka/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$tmp" -DincludeScope=runtime 2>&1 | sed -e 's/\x1b\[[0-9;]*m//g' -e '/^$/d' >&2
  rm -rf "$KAFKA_LIBS"
  mv "$tmp" "$KAFKA_LIBS"
  echo "$kafka_fp" >"$STAMPS/kafka"
  log "kafka: $(find "$KAFKA_LIBS" -name "*.jar" | wc -l) jars in $(($(now) - t)) s"
fi

# ---------------------------------------------------------------------------------------------
# 3. FerretDB (Go module proxy, through deploy/local/infra/ferretdb/{go.mod,go.sum,tools.go})
# ---------------------------------------------------------------------------------------------
# `go install github.com/FerretDB/FerretDB/cmd/ferretdb@v1.24.0` does not work here, so a tiny
# module pins FerretDB in go.mod/go.sum. A plain `go build` of cmd/ferretdb from the module
# cache panics at start ("Invalid build/version/version.txt"): that file is generated by
# FerretDB's release tooling and is not part of the module zip. So we build from a copy of the
# module (verified against go.sum on download) with version.txt added, through a `replace`.
# The copy also gets the small patches in deploy/local/infra/ferretdb/*.patch (see
# docs/adr/0001-mongodb-compatible-server.md): serialize-writes.patch (FerretDB v1 runs
# update/findAndModify/delete as read-modify-write, so concurrent conditional $inc lost updates;
# writes of one database run one at a time), id-index.patch (lookups by _id use the _id index
# instead of scanning the table), group-accumulators.patch (in a $group, only the first
# accumulator saw any document) and update-close-iterators.patch (an update command with 100 or
# more matching statements waited forever for a SQLite connection).
FERRETDB_BIN="$LOCAL/bin/ferretdb"
# Bump FERRETDB_RECIPE when the build steps below change, to force a rebuild.
FERRETDB_RECIPE=2
ferret_fp="$( (echo "$FERRETDB_RECIPE $FERRETDB_VERSION"; cat "$INFRA/ferretdb/go.mod" "$INFRA/ferretdb/go.sum" \
  "$INFRA/ferretdb/tools.go" "$INFRA"/ferretdb/*.patch) | sha256sum | cut -d' ' -f1)"
if [ -x "$FERRETDB_BIN" ] && [ -f "$STAMPS/ferretdb" ] && [ "$(cat "$STAMPS/ferretdb")" = "$ferret_fp" ]; then
  log "ferretdb: $($FERRETDB_BIN --version 2>/dev/null | head -1) already at .local/bin/ferretdb"
else
  t=$(now)
  export GOFLAGS="-buildvcs=false"
  log "ferretdb: go mod download (module deploy/local/infra/ferretdb)"
  (cd "$INFRA/ferretdb" && go mod download github.com/FerretDB/FerretDB)
  moddir="$(cd "$INFRA/ferretdb" && go list -m -f '{{.Dir}}' github.com/FerretDB/FerretDB)"
  build="$LOCAL/build/ferretdb"
  rm -rf "$build"
  mkdir -p "$build"
  cp "$INFRA/ferretdb/go.mod" "$INFRA/ferretdb/go.sum" "$INFRA/ferretdb/tools.go" "$build/"
  cp -r "$moddir" "$build/FerretDB"
  chmod -R u+w "$build/FerretDB"
  echo "$FERRETDB_VERSION" >"$build/FerretDB/build/version/version.txt"
  echo "local" >"$build/FerretDB/build/version/package.txt"
  for p in "$INFRA"/ferretdb/*.patch; do
    log "ferretdb: applying deploy/local/infra/ferretdb/$(basename "$p")"
    patch -s -p1 -d "$build/FerretDB" <"$p" >&2
  done
  (cd "$build" && go mod edit -replace "github.com/FerretDB/FerretDB=./FerretDB")
  log "ferretdb: go build -o .local/bin/ferretdb github.com/FerretDB/FerretDB/cmd/ferretdb (~6 min with empty Go caches on 2 cores, ~20 s warm)"
  (cd "$build" && go build -trimpath -o "$FERRETDB_BIN.tmp" github.com/FerretDB/FerretDB/cmd/ferretdb)
  mv "$FERRETDB_BIN.tmp" "$FERRETDB_BIN"
  rm -rf "$build"
  echo "$ferret_fp" >"$STAMPS/ferretdb"
  log "ferretdb: built $($FERRETDB_BIN --version | head -1) in $(($(now) - t)) s"
fi

# ---------------------------------------------------------------------------------------------
# 4. Node workspace
# ---------------------------------------------------------------------------------------------
# Skipped when the lockfile, the workspace file and every package.json are as at the last
# successful install (SETUP_FORCE_PNPM=1 forces it).
pnpm_fp() {
  (
    cd "$ROOT"
    cat pnpm-lock.yaml pnpm-workspace.yaml 2>/dev/null
    find . -name package.json -not -path '*/node_modules/*' -not -path './.local/*' -print0 | sort -z | xargs -0 cat
  ) | sha256sum | cut -d' ' -f1
}
if [ "$INFRA_ONLY" = 0 ]; then
  fp="$(pnpm_fp)"
  if [ "${SETUP_FORCE_PNPM:-0}" != 1 ] && [ -f "$ROOT/node_modules/.modules.yaml" ] &&
    [ -f "$STAMPS/pnpm" ] && [ "$(cat "$STAMPS/pnpm")" = "$fp" ]; then
    log "pnpm: workspace already installed (lockfile and package.json files unchanged)"
  else
    t=$(now)
    log "pnpm install (repo root)"
    if ! (cd "$ROOT" && $PNPM install >&2); then
      # Another engineer's install may hold the store lock: wait and retry once.
      log "pnpm install failed; retrying in 5 s"
      sleep 5
      (cd "$ROOT" && $PNPM install >&2)
    fi
    pnpm_fp >"$STAMPS/pnpm"
    log "pnpm install done in $(($(now) - t)) s"
  fi
fi

# ---------------------------------------------------------------------------------------------
# 5. schemathesis (PyPI): fuzzes /api/openapi.json in services/gateway/test/hardening-schemathesis
# ---------------------------------------------------------------------------------------------
SCHEMATHESIS_VERSION="4.32.5"
if [ "$INFRA_ONLY" = 0 ] && ! st --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
  log "pip install schemathesis==$SCHEMATHESIS_VERSION"
  python3 -m pip install -q --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" >&2 ||
    python3 -m pip install -q --disable-pip-version-check --break-system-packages "schemathesis==$SCHEMATHESIS_VERSION" >&2
fi

# ---------------------------------------------------------------------------------------------
# 6. Kubernetes tools (Go module proxy): helm, kubeconform, kustomize -> .local/bin; JSON schemas
#    of Kubernetes objects -> .local/k8s-schemas (deploy/local/test/chart.test.ts works offline)
# ---------------------------------------------------------------------------------------------
# helm is built with the Kubernetes version its capabilities default to (the chart needs >= 1.27;
# a plain `go install` would claim 1.20) and its own version string. The schemas: the OpenAPI spec
# of a Kubernetes release (module k8s.io/kubernetes, api/openapi-spec/swagger.json) and the CRDs
# of prometheus-operator (ServiceMonitor, PrometheusRule) and KEDA (ScaledObject), turned into
# strict JSON schemas by deploy/local/bin/k8s-schemas.mjs (after the pnpm install: it needs yaml).
# A machine without Go or the proxy gets a warning, and the chart test says it was skipped.
HELM_VERSION="v3.18.6"
KUBECONFORM_VERSION="v0.7.0"
KUSTOMIZE_VERSION="v5.5.0"
K8S_SCHEMA_VERSION="v1.31.4"
PROM_OPERATOR_VERSION="v0.78.2"
KEDA_VERSION="v2.16.1"
K8S_TOOLS_RECIPE=1
k8s_fp="$( (echo "$K8S_TOOLS_RECIPE $HELM_VERSION $KUBECONFORM_VERSION $KUSTOMIZE_VERSION $K8S_SCHEMA_VERSION" \
  "$PROM_OPERATOR_VERSION $KEDA_VERSION"; cat "$ROOT/deploy/local/bin/k8s-schemas.mjs") | sha256sum | cut -d' ' -f1)"
k8s_tools_ok() {
  [ -x "$LOCAL/bin/helm" ] && [ -x "$LOCAL/bin/kubeconform" ] && [ -x "$LOCAL/bin/kustomize" ] &&
    [ -f "$LOCAL/k8s-schemas/apps/deployment_v1.json" ]
}
install_k8s_tools() {
  export GOFLAGS="-buildvcs=false"
  local minor="${K8S_SCHEMA_VERSION#v1.}"
  minor="${minor%%.*}"
  log "k8s tools: go install helm $HELM_VERSION, kubeconform $KUBECONFORM_VERSION, kustomize $KUSTOMIZE_VERSION -> .local/bin (~5 min with empty Go caches on 2 cores)"
  GOBIN="$LOCAL/bin" go install -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
    -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2 || return 1
  GOBIN="$LOCAL/bin" go install -trimpath -ldflags "-s -w" \
    "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION" >&2 || return 1
  GOBIN="$LOCAL/bin" go install -trimpath -ldflags "-s -w" \
    "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" >&2 || return 1
  log "k8s tools: go mod download k8s.io/kubernetes@$K8S_SCHEMA_VERSION, prometheus-operator $PROM_OPERATOR_VERSION, keda $KEDA_VERSION (OpenAPI spec, CRDs)"
  local k8s prom keda
  k8s="$(go mod download -json "k8s.io/kubernetes@$K8S_SCHEMA_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  prom="$(go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROM_OPERATOR_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  keda="$(go mod download -json "github.com/kedacore/keda/v2@$KEDA_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [ -n "$k8s" ] && [ -n "$prom" ] && [ -n "$keda" ] || return 1
  rm -rf "$LOCAL/k8s-schemas.tmp"
  node "$ROOT/deploy/local/bin/k8s-schemas.mjs" --out "$LOCAL/k8s-schemas.tmp" \
    --swagger "$k8s/api/openapi-spec/swagger.json" \
    --crd "$prom/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" \
    --crd "$prom/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml" \
    --crd "$keda/config/crd/bases/keda.sh_scaledobjects.yaml" >&2 || return 1
  rm -rf "$LOCAL/k8s-schemas"
  mv "$LOCAL/k8s-schemas.tmp" "$LOCAL/k8s-schemas"
}
if [ "$INFRA_ONLY" = 0 ]; then
  if k8s_tools_ok && [ -f "$STAMPS/k8s-tools" ] && [ "$(cat "$STAMPS/k8s-tools")" = "$k8s_fp" ]; then
    log "k8s tools: helm, kubeconform, kustomize and the Kubernetes schemas already in .local"
  elif ! command -v go >/dev/null 2>&1; then
    # The chart test reads the reason from this file and says it skipped (otherwise it fails).
    echo "no Go toolchain (apt-get install golang-go)" >"$STAMPS/k8s-tools.skipped"
    log "WARNING k8s tools: no Go toolchain; the chart test (deploy/local/test/chart.test.ts) will be skipped"
  else
    t=$(now)
    if install_k8s_tools; then
      echo "$k8s_fp" >"$STAMPS/k8s-tools"
      rm -f "$STAMPS/k8s-tools.skipped"
      log "k8s tools: installed in $(($(now) - t)) s ($(find "$LOCAL/k8s-schemas" -name '*.json' | wc -l) schemas)"
    else
      echo "go install / go mod download from the Go module proxy failed ($(date -u +%FT%TZ))" >"$STAMPS/k8s-tools.skipped"
      log "WARNING k8s tools: installing from the Go module proxy failed (see above); the chart test will be skipped"
    fi
  fi
fi

log "done in $(($(now) - START)) s"
