# An engine pod's readiness on Kubernetes (components/kubernetes/weights-readiness.ts): it serves,
# and not the base model while the fleet's other engines serve a trainer's update. The kubelet
# restarts a crashed engine container with the base weights; without this it would pass /health and
# count as Ready. It stays not Ready, naming both versions, until the trainer's next update reaches
# it (the fleet's admin URLs name each pod, Ready or not). Runs in the engine's image (its python3),
# after engine-version.py (get, weight_version).
# argv: PORT VERSION_ROUTE BASE_VERSION PEERS_HOST PEER_PORT...
# PEERS_HOST: the island's headless engine Service, which resolves to every engine pod of the fleet's
# service (components/kubernetes/workloads.ts engineService).
import socket
import sys

port, route, base, peers_host = sys.argv[1:5]
peer_ports = sys.argv[5:]
# The peers asked at most (each within a second), so the check ends within its timeout.
MOST = 8


def version(host, p):
    return weight_version(f"http://{host}:{p}{route}", 1)  # from engine-version.py


try:
    get(f"http://127.0.0.1:{port}/health", 1)  # from engine-version.py
except Exception as e:
    print(f"/health on port {port}: {e}")
    sys.exit(1)
mine = version("127.0.0.1", port)
# Updated (or reporting no version: nothing to compare): Ready.
if mine != base:
    sys.exit(0)
try:
    own = {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None)}
except OSError:
    own = set()
try:
    peers = sorted({a[4][0] for a in socket.getaddrinfo(peers_host, None, proto=socket.IPPROTO_TCP)} - own)
except OSError:
    sys.exit(0)
for ip in peers[:MOST]:
    for p in peer_ports:
        theirs = version(ip, p)
        if theirs is None:
            continue
        if theirs != base:
            print(
                f"serves the base weights (weight version {base}) while {ip}:{p} serves {theirs}: "
                "not Ready until the trainer's next update (Fleet.update_weights) reaches it"
            )
            sys.exit(1)
        break
sys.exit(0)
