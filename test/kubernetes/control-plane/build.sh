#!/usr/bin/env bash
# Builds the binaries of the test control plane from the Go module proxy, once: etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok (plus kwok's stage
# YAMLs). The result is cached under /var/cache/vllm-fleet/k8s-<versions-key>/ and reused; the Go
# module and build caches live in a temporary GOPATH that is deleted afterwards (they are ~GBs).
# Where the shared tools folder holds the same binaries prebuilt (k8s-control-plane-<version>.tar.xz,
# built by this script), they are unpacked instead of built (seconds instead of 13 minutes); only
# kwok's stage YAMLs, which the archive lacks, come from kwok's module source.
#
# Usage: build.sh            prints the cache dir (builds first if it is not there)
# Env:   CP_GO_PARALLEL=N     go build -p (default 2); the build runs under nice -n 19.
#        FLEET_SHARED_TOOLS (<repo>/../shared/tools): where k8s-control-plane-<version>.tar.xz is
#        CP_NO_PREBUILT=1     build even where the prebuilt archive is present
# Exit:  0 built/cached, 3 no Go toolchain, other: the build failed.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
# shellcheck source=versions.sh disable=SC1091
. "$here/versions.sh"
tools=${FLEET_SHARED_TOOLS:-$repo/../shared/tools}
prebuilt=$tools/k8s/k8s-control-plane-$K8S_VERSION.tar.xz

if ! command -v go >/dev/null 2>&1; then
  echo "*** SKIPPED: no Go toolchain on PATH, cannot build the test control plane" >&2
  exit 3
fi

out=$(cp_cache_dir)
if [[ -f "$out/COMPLETE" ]]; then
  echo "$out"
  exit 0
fi

par=${CP_GO_PARALLEL:-2}
mkdir -p "$CP_CACHE_ROOT"
tmp=$(mktemp -d "$CP_CACHE_ROOT/.k8s-build.XXXXXX")
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
  # the module cache is read-only unless -modcacherw; make sure it can go either way
  chmod -R u+w "$tmp" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

export GOPATH="$tmp/gopath" GOCACHE="$tmp/gocache" GOMODCACHE="$tmp/gopath/pkg/mod"
export GOFLAGS="-modcacherw -buildvcs=false -mod=mod" GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off
stage="$tmp/out"
mkdir -p "$stage/bin" "$tmp/mod"
t0=$(date +%s)
log() { echo "[build $(( $(date +%s) - t0 ))s] $*" >&2; }

# kwok's stage YAMLs (kwok exits with "no stages found" without them), from its module source.
kwok_stages() {
  local src
  src=$(go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  [[ -d "$src/kustomize/stage" ]] || { echo "build.sh: no kustomize/stage in sigs.k8s.io/kwok@$KWOK_VERSION" >&2; exit 1; }
  cp -r "$src/kustomize/stage" "$stage/kwok-stage"
  chmod -R u+w,go+rX "$stage/kwok-stage"
}

# The result goes in place whole, or not at all.
finish() {
  touch "$stage/COMPLETE"
  rm -rf "$out"
  mv "$stage" "$out"
  log "done: $out"
  echo "$out"
  exit 0
}

# 0. The prebuilt archive, where the shared tools folder has one of exactly these versions.
if [[ -f "$prebuilt" && "${CP_NO_PREBUILT:-}" != 1 ]]; then
  log "unpacking $prebuilt"
  tar -xJf "$prebuilt" -C "$stage"
  want=$(printf 'kubernetes %s (staging %s)\netcd %s\nkwok %s' "$K8S_VERSION" "$K8S_STAGING_VERSION" "$ETCD_VERSION" "$KWOK_VERSION")
  if [[ "$(head -n 3 "$stage/VERSIONS" 2>/dev/null)" != "$want" ]]; then
    echo "build.sh: $prebuilt holds other versions than versions.sh names:" >&2
    cat "$stage/VERSIONS" >&2 || true
    exit 1
  fi
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
    [[ -x "$stage/bin/$b" ]] || { echo "build.sh: $prebuilt has no bin/$b" >&2; exit 1; }
  done
  log "fetching kwok $KWOK_VERSION's stages"
  (cd "$tmp/mod" && kwok_stages)
  echo "unpacked from $prebuilt $(date -u +%FT%TZ) in $(( $(date +%s) - t0 ))s wall" >> "$stage/VERSIONS"
  finish
fi

# 1. The scratch module: k8s.io/kubernetes with its ./staging replaces pointed at published modules.
cd "$tmp/mod"
cat > go.mod <<MOD
module vllm-fleet.test/k8s-control-plane

go 1.26
MOD
log "resolving k8s.io/kubernetes@$K8S_VERSION"
kmod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
[[ -f "$kmod" ]] || { echo "build.sh: no go.mod for k8s.io/kubernetes@$K8S_VERSION" >&2; exit 1; }
staging=$(awk '$0 ~ /=> \.\/staging\// { for (i = 1; i <= NF; i++) if ($i ~ /^k8s\.io\//) { print $i; break } }' "$kmod" \
  | grep -v -e '^k8s.io/sample-cli-plugin$' -e '^k8s.io/sample-controller$' | sort -u)
[[ -n "$staging" ]] || { echo "build.sh: found no ./staging replaces in kubernetes' go.mod" >&2; exit 1; }
pinned_etcd=$(awk '$1 == "go.etcd.io/etcd/server/v3" { print $2; exit }' "$kmod")
if [[ "$pinned_etcd" != "$ETCD_VERSION" ]]; then
  echo "build.sh: kubernetes $K8S_VERSION pins etcd server $pinned_etcd, versions.sh says $ETCD_VERSION" >&2
  exit 1
fi
{
  echo
  echo "require ("
  echo "	k8s.io/kubernetes $K8S_VERSION"
  echo "	go.etcd.io/etcd/server/v3 $ETCD_VERSION"
  echo ")"
  echo
  echo "replace ("
  for m in $staging; do echo "	$m => $m $K8S_STAGING_VERSION"; done
  echo ")"
} >> go.mod
log "$(echo "$staging" | wc -l) staging modules replaced by their $K8S_STAGING_VERSION"

# 2. The kubernetes binaries and etcd, version-stamped like a release build.
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ld="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1"
ld+=" -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
ld+=" -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1"
ld+=" -X k8s.io/client-go/pkg/version.gitMinor=$minor"
for cmd in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  log "building $cmd"
  nice -n 19 go build -p "$par" -trimpath -ldflags "$ld" -o "$stage/bin/$cmd" "k8s.io/kubernetes/cmd/$cmd"
done
log "building etcd $ETCD_VERSION"
nice -n 19 go build -p "$par" -trimpath -ldflags "-s -w" -o "$stage/bin/etcd" go.etcd.io/etcd/server/v3

# 3. kwok and its stages (kwok exits with "no stages found" without them).
log "building kwok $KWOK_VERSION"
GOFLAGS="-modcacherw -buildvcs=false" GOBIN="$stage/bin" nice -n 19 \
  go install -p "$par" -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
kwok_stages

cat > "$stage/VERSIONS" <<V
kubernetes $K8S_VERSION (staging $K8S_STAGING_VERSION)
etcd $ETCD_VERSION
kwok $KWOK_VERSION
$(go env GOVERSION) $(go env GOOS)/$(go env GOARCH)
built $(date -u +%FT%TZ) in $(( $(date +%s) - t0 ))s wall
V
finish
