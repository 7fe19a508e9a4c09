# shellcheck shell=bash disable=SC2034
# The versions the test control plane is built at. Sourced by build.sh, up.sh and down.sh.
# The cache key is derived from these (and the Go toolchain), so changing one rebuilds.
K8S_VERSION=v1.37.2          # kube-apiserver, kube-controller-manager, kube-scheduler, kubectl
K8S_STAGING_VERSION=v0.37.2  # the published k8s.io/* modules that replace ./staging
ETCD_VERSION=v3.7.0          # go.etcd.io/etcd/server/v3 as kubernetes ${K8S_VERSION} pins it (build.sh checks)
KWOK_VERSION=v0.8.0          # sigs.k8s.io/kwok
LWS_VERSION=v0.10.0          # ../shared/tools/k8s/lws-controller-${LWS_VERSION}.tar.xz (no registry serves it)

CP_CACHE_ROOT=${CP_CACHE_ROOT:-/var/cache/vllm-fleet}

cp_versions_key() {
  local go_v
  go_v=$(go env GOVERSION 2>/dev/null || echo nogo)
  printf 'k8s=%s staging=%s etcd=%s kwok=%s go=%s arch=%s\n' \
    "$K8S_VERSION" "$K8S_STAGING_VERSION" "$ETCD_VERSION" "$KWOK_VERSION" "$go_v" "$(uname -m)" \
    | sha256sum | cut -c1-16
}

cp_cache_dir() { printf '%s/k8s-%s\n' "$CP_CACHE_ROOT" "$(cp_versions_key)"; }
