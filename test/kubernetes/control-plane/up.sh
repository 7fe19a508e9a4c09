#!/usr/bin/env bash
# Starts a real Kubernetes control plane on loopback for tests: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, the CRDs the fleet renders (and those LWS needs), the LWS
# controller with its webhooks, and kwok with fake GPU nodes. Binaries come from build.sh (built
# once, cached). Everything it starts is recorded in the state dir; down.sh stops exactly that.
#
# Usage: up.sh [STATE_DIR]     (default $CP_STATE_DIR or /tmp/vllm-fleet-k8s-control-plane)
# Env:   CP_PORT_BASE (26400): ports BASE..BASE+8 on 127.0.0.1
#        CP_FAKE_NODES (4): kwok nodes, each nvidia.com/gpu "8"
#        CP_NO_BUILD=1: do not build, fail (exit 3) when the binaries are not cached
#        FLEET_SHARED_TOOLS (<repo>/../shared/tools): where lws-controller-v0.10.0.tar.xz is
# Out:   STATE_DIR/kubeconfig (admin, token), STATE_DIR/env (KUBECONFIG=, CP_BIN=), logs/*.log
# Exit:  0 all up; 3 no toolchain/binaries (*** SKIPPED printed, nothing left running);
#        4 up WITHOUT the LWS controller and its webhooks (*** SKIPPED printed; run down.sh);
#        other: failed (whatever started is stopped again).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
# shellcheck source=versions.sh disable=SC1091
. "$here/versions.sh"

state=${1:-${CP_STATE_DIR:-/tmp/vllm-fleet-k8s-control-plane}}
# Below Linux's ephemeral range (32768-60999 by default), from which every outgoing connection of a
# busy machine draws its local port: at 46400 the controller-manager's port was once taken that way
# between the check below and its bind, while the end-to-end suite ran beside it.
base=${CP_PORT_BASE:-26400}
nodes=${CP_FAKE_NODES:-4}
tools=${FLEET_SHARED_TOOLS:-$repo/../shared/tools}
crd_dirs=("$repo/test/fixtures/upstream/crds" "$repo/test/fixtures/upstream/control-plane-crds")

P_ETCD=$base P_ETCD_PEER=$((base + 1)) P_API=$((base + 2)) P_KCM=$((base + 3)) P_SCHED=$((base + 4))
P_KWOK=$((base + 5)) P_LWS_HOOK=$((base + 6)) P_LWS_METRICS=$((base + 7)) P_LWS_HEALTH=$((base + 8))

t0=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
step_t=$t0
step() { # step NAME: closes the previous step's timing, opens NAME's
  if [[ -n "${step_name:-}" ]]; then
    echo "$step_name $(since "$step_t")" >> "$state/timings"
    echo "[up $(since "$t0")s] $step_name done in $(since "$step_t")s" >&2
  fi
  step_name=$1 step_t=$(date +%s.%N)
}

# 0. The binaries.
if [[ "${CP_NO_BUILD:-}" == 1 ]]; then
  out=$(cp_cache_dir)
  if [[ ! -f "$out/COMPLETE" ]]; then
    echo "*** SKIPPED: the test control plane is not built ($out); run test/kubernetes/control-plane/build.sh" >&2
    exit 3
  fi
else
  rc=0
  out=$("$here/build.sh") || rc=$?
  if ((rc != 0)); then
    if ((rc == 3)); then exit 3; fi
    echo "up.sh: build.sh failed ($rc)" >&2
    exit "$rc"
  fi
fi
bin=$out/bin

if [[ -d "$state/pids" ]] && compgen -G "$state/pids/*" >/dev/null; then
  echo "up.sh: $state holds a running control plane (pids/); run down.sh $state first" >&2
  exit 1
fi
for p in $(seq "$base" $((base + 8))); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    echo "up.sh: 127.0.0.1:$p is in use (set CP_PORT_BASE)" >&2
    exit 1
  fi
done
rm -rf "$state"
mkdir -p "$state"/{pids,logs,pki,etcd,lws-certs}
state=$(cd "$state" && pwd)
: > "$state/timings"

started_ok=0
# shellcheck disable=SC2317 # invoked by the EXIT trap
on_exit() {
  if ((started_ok == 0)); then
    echo "up.sh: failed; stopping what it started (logs kept in $state/logs)" >&2
    "$here/down.sh" --keep "$state" || true
  fi
}
trap on_exit EXIT

# start NAME BINARY ARGS...: runs it in the background, its pid in pids/NN-NAME (down.sh stops in reverse)
n_started=0
start() {
  local name=$1
  shift
  "$@" > "$state/logs/$name.log" 2>&1 &
  local pid=$!
  n_started=$((n_started + 1))
  printf '%s %s\n' "$pid" "$1" > "$state/pids/$(printf %02d "$n_started")-$name"
}
# wait_for WHAT SECONDS CMD...: polls CMD until it succeeds
wait_for() {
  local what=$1 secs=$2
  shift 2
  local deadline=$(($(date +%s) + secs))
  until "$@" > /dev/null 2>&1; do
    if (($(date +%s) > deadline)); then
      echo "up.sh: $what not ready after ${secs}s; last log lines:" >&2
      tail -n 20 "$state/logs/"*"$what"*.log >&2 2>/dev/null || true
      exit 1
    fi
    sleep 0.3
  done
}

# 1. Certificates: a CA, the apiserver's serving cert, LWS's webhook serving cert, the SA key pair.
step certs
pki=$state/pki
ossl() { openssl "$@" 2>/dev/null; }
ossl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=vllm-fleet-test-ca" \
  -keyout "$pki/ca.key" -out "$pki/ca.crt"
serving() { # serving NAME SAN
  ossl req -newkey rsa:2048 -nodes -subj "/CN=$1" -keyout "$pki/$1.key" -out "$pki/$1.csr"
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n' "$2" > "$pki/$1.ext"
  ossl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 2 \
    -extfile "$pki/$1.ext" -out "$pki/$1.crt"
}
serving apiserver "IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
serving lws-webhook "IP:127.0.0.1,DNS:localhost"
cp "$pki/lws-webhook.crt" "$state/lws-certs/tls.crt"
cp "$pki/lws-webhook.key" "$state/lws-certs/tls.key"
ossl genrsa -out "$pki/sa.key" 2048
ossl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
token=$(openssl rand -hex 24)
echo "$token,admin,admin,system:masters" > "$pki/tokens.csv"
chmod 600 "$pki"/*.key "$pki/tokens.csv"

kubeconfig=$state/kubeconfig
cat > "$kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: https://127.0.0.1:$P_API
    certificate-authority: $pki/ca.crt
users:
- name: admin
  user:
    token: $token
contexts:
- name: test
  context: {cluster: test, user: admin}
current-context: test
KC
chmod 600 "$kubeconfig"
kubectl() { "$bin/kubectl" --kubeconfig "$kubeconfig" "$@"; }

# 2. etcd (the one kubernetes pins, not a distribution's: watches need RequestWatchProgress).
step etcd
start etcd "$bin/etcd" --name test --data-dir "$state/etcd" --unsafe-no-fsync \
  --listen-client-urls "http://127.0.0.1:$P_ETCD" --advertise-client-urls "http://127.0.0.1:$P_ETCD" \
  --listen-peer-urls "http://127.0.0.1:$P_ETCD_PEER" --initial-advertise-peer-urls "http://127.0.0.1:$P_ETCD_PEER" \
  --initial-cluster "test=http://127.0.0.1:$P_ETCD_PEER" --log-level warn
wait_for etcd 60 curl -sf "http://127.0.0.1:$P_ETCD/health"

# 3. kube-apiserver. Pod Security admission enforces CP_POD_SECURITY (baseline) in a namespace
# without labels, as hardened clusters do (issue 31: the fleet's namespace must say what it needs);
# CP_POD_SECURITY=privileged gives Kubernetes' own default.
step kube-apiserver
pod_security=${CP_POD_SECURITY:-baseline}
cat > "$state/admission.yaml" <<ADM
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults: {enforce: $pod_security, enforce-version: latest, warn: $pod_security, warn-version: latest, audit: $pod_security, audit-version: latest}
    exemptions: {usernames: [], runtimeClasses: [], namespaces: [kube-system]}
ADM
start kube-apiserver "$bin/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$P_ETCD" \
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$P_API" \
  --endpoint-reconciler-type none \
  --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
  --client-ca-file "$pki/ca.crt" --token-auth-file "$pki/tokens.csv" \
  --authorization-mode Node,RBAC \
  --service-cluster-ip-range 10.96.0.0/16 \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
  --enable-admission-plugins NamespaceLifecycle,LimitRanger,ServiceAccount,DefaultStorageClass,DefaultTolerationSeconds,PodSecurity,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ResourceQuota,StorageObjectInUseProtection,PersistentVolumeClaimResize \
  --admission-control-config-file "$state/admission.yaml" \
  --allow-privileged=true --profiling=false
# shellcheck disable=SC2317 # invoked through wait_for
api_ready() { curl -sf --cacert "$pki/ca.crt" -H "Authorization: Bearer $token" "https://127.0.0.1:$P_API/readyz"; }
wait_for kube-apiserver 120 api_ready

# 4. controller-manager and scheduler (no leader election: one of each).
step controllers
start kube-controller-manager "$bin/kube-controller-manager" \
  --kubeconfig "$kubeconfig" --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$P_KCM" --leader-elect=false \
  --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
  --service-cluster-ip-range 10.96.0.0/16 --profiling=false
start kube-scheduler "$bin/kube-scheduler" \
  --kubeconfig "$kubeconfig" --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$P_SCHED" --leader-elect=false --profiling=false
wait_for kube-controller-manager 60 curl -sfk "https://127.0.0.1:$P_KCM/healthz"
wait_for kube-scheduler 60 curl -sfk "https://127.0.0.1:$P_SCHED/healthz"

# 5. CRDs, Established before anything uses them.
step crds
for d in "${crd_dirs[@]}"; do
  for f in "$d"/*.json; do kubectl apply --server-side -f "$f" > /dev/null; done
done
# Again until it holds: kubectl wait fails at once on a CRD the API server has not given conditions
# yet (".status.conditions accessor error: <nil>"), seen once on a loaded machine.
wait_for crds 60 kubectl wait --for condition=Established --timeout 10s crd --all

# 6. LWS and its webhooks, before any LeaderWorkerSet exists (its defaults come only from the webhook).
step lws
lws_tar=$tools/k8s/lws-controller-$LWS_VERSION.tar.xz
lws_rc=0
if [[ ! -f "$lws_tar" ]]; then
  echo "*** SKIPPED: the LWS $LWS_VERSION controller and its webhooks (no $lws_tar): LeaderWorkerSets get no defaults or validation" >&2
  lws_rc=4
else
  lws_dir=$out/lws-$LWS_VERSION
  if [[ ! -x "$lws_dir/lws-controller" ]]; then
    mkdir -p "$lws_dir.tmp"
    tar -xJf "$lws_tar" -C "$lws_dir.tmp"
    rm -rf "$lws_dir"
    mv "$lws_dir.tmp" "$lws_dir"
  fi
  cat > "$state/lws-config.yaml" <<CFG
apiVersion: config.lws.x-k8s.io/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: $P_LWS_HOOK
  certDir: $state/lws-certs
metrics:
  bindAddress: 127.0.0.1:$P_LWS_METRICS
health:
  healthProbeBindAddress: 127.0.0.1:$P_LWS_HEALTH
CFG
  start lws-controller "$lws_dir/lws-controller" --config "$state/lws-config.yaml" \
    --kubeconfig "$kubeconfig" --leader-elect=false --zap-devel=false
  wait_for lws-controller 60 curl -sf "http://127.0.0.1:$P_LWS_HEALTH/readyz"
  ca_b64=$(base64 -w0 < "$pki/ca.crt")
  hook() { # hook NAME PATH GROUP RESOURCE OPERATIONS
    cat <<H
- name: $1
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  clientConfig: {url: "https://127.0.0.1:$P_LWS_HOOK$2", caBundle: "$ca_b64"}
  rules: [{apiGroups: ["$3"], apiVersions: [v1], operations: [$5], resources: [$4]}]
H
  }
  {
    echo "apiVersion: admissionregistration.k8s.io/v1"
    echo "kind: MutatingWebhookConfiguration"
    echo "metadata: {name: lws-mutating-webhook-configuration}"
    echo "webhooks:"
    hook mleaderworkerset.kb.io /mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset leaderworkerset.x-k8s.io leaderworkersets "CREATE, UPDATE"
    hook mpod.kb.io /mutate--v1-pod "" pods CREATE
    echo "---"
    echo "apiVersion: admissionregistration.k8s.io/v1"
    echo "kind: ValidatingWebhookConfiguration"
    echo "metadata: {name: lws-validating-webhook-configuration}"
    echo "webhooks:"
    hook vleaderworkerset.kb.io /validate-leaderworkerset-x-k8s-io-v1-leaderworkerset leaderworkerset.x-k8s.io leaderworkersets "CREATE, UPDATE"
    hook vpod.kb.io /validate--v1-pod "" pods "CREATE, UPDATE"
  } > "$state/lws-webhooks.yaml"
  kubectl apply --server-side -f "$state/lws-webhooks.yaml" > /dev/null
fi

# 7. kwok and the fake GPU nodes it keeps Ready.
step kwok
stages=$out/kwok-stage
start kwok "$bin/kwok" --kubeconfig "$kubeconfig" \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
  --node-lease-duration-seconds 40 --cidr 10.0.0.1/16 --node-ip 127.0.0.1 \
  --server-address "127.0.0.1:$P_KWOK" \
  -c "$stages/node/fast/node-initialize.yaml" -c "$stages/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml" \
  -c "$stages/pod/fast/pod-ready.yaml" -c "$stages/pod/fast/pod-complete.yaml" -c "$stages/pod/fast/pod-delete.yaml"
{
  for i in $(seq 0 $((nodes - 1))); do
    cat <<NODE
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-$i
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: gpu-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok, nvidia.com/gpu.present: "true"}
status:
  allocatable: {cpu: "96", memory: 1Ti, pods: "110", ephemeral-storage: 2Ti, nvidia.com/gpu: "8", rdma/ib: "8"}
  capacity: {cpu: "96", memory: 1Ti, pods: "110", ephemeral-storage: 2Ti, nvidia.com/gpu: "8", rdma/ib: "8"}
NODE
  done
} > "$state/nodes.yaml"
kubectl create -f "$state/nodes.yaml" > /dev/null
wait_for nodes 60 kubectl wait --for condition=Ready --timeout 10s node --all

step finished
cat > "$state/env" <<ENV
KUBECONFIG=$kubeconfig
CP_BIN=$bin
CP_STATE_DIR=$state
CP_API=https://127.0.0.1:$P_API
CP_LWS=$([[ $lws_rc == 0 ]] && echo 1 || echo 0)
ENV
started_ok=1
echo "[up $(since "$t0")s] control plane up: KUBECONFIG=$kubeconfig (stop: $here/down.sh $state)" >&2
echo "total $(since "$t0")" >> "$state/timings"
exit "$lws_rc"
