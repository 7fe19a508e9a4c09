# The island's activity monitor on Kubernetes (components/kubernetes/activity-monitor.ts): a Deployment
# of its own, always running, as the host targets' monitor (templates/host/activity.sh.mustache) is:
# every EVERY seconds it reads each serving engine's own /metrics and pause route and records one state
# (busy, paused, idle, unseen: docs/idle-release.md) in the island's activity ledger, the ConfigMap
# key "activity" in the format of components/host/activity-ledger.ts (`<epoch seconds> <state>`, on a
# change and at least every HEARTBEAT seconds). With idle_release_after set, once the state has stayed
# idle that long it writes the release mark (key "idle-released": `<released epoch> <idle-since
# epoch>`) and scales the island's engine workloads to zero through their scale subresource. A
# released island is brought back by `fleet wake` or `pulumi up`; once its workloads are back at their
# planned replicas the monitor clears the mark, and its idle clock starts again from the engines.
# A restarted monitor (the kubelet restarts it) takes the idle clock back from the ledger.
# Runs in the engine image (its python3), after engine-version.py (get: the fleet's API key on every
# call where the pod holds it). It talks to the API server as its ServiceAccount, whose Role allows
# only get and patch of its own ConfigMap and of its island's workloads' scale.
# argv: CONFIG (JSON: namespace, configMap, idleS (0: off), heartbeatS, workloads [{path, replicas}],
# engines [{url, metrics, running, waiting, finished, paused}]).
import ssl
import sys
import time
import urllib.error

CONFIG = json.loads(sys.argv[1])
EVERY = float(os.environ.get("FLEET_ACTIVITY_EVERY_S") or 5)
HEARTBEAT = int(CONFIG["heartbeatS"])
IDLE_S = int(CONFIG["idleS"])
# The ledger's longest length in lines (a ConfigMap holds at most 1 MiB): the oldest lines go first.
MAX_LINES = 20000
LEDGER, MARKER = "activity", "idle-released"
# The pod's ServiceAccount (the kubelet mounts it there) and the API server's in-cluster address.
SA = os.environ.get("FLEET_SERVICEACCOUNT_DIR") or "/var/run/secrets/kubernetes.io/serviceaccount"
API = f"https://{os.environ['KUBERNETES_SERVICE_HOST']}:{os.environ.get('KUBERNETES_SERVICE_PORT', '443')}"
TLS = ssl.create_default_context(cafile=f"{SA}/ca.crt")
CM_PATH = f"/api/v1/namespaces/{CONFIG['namespace']}/configmaps/{CONFIG['configMap']}"


def log(text):
    print(f"[fleet] activity monitor: {text}", flush=True)


def api(method, path, body=None):
    """The API server's JSON answer; raises urllib's HTTPError for 400 and above, OSError when it did not answer."""
    with open(f"{SA}/token") as f:  # read on every call: the kubelet rotates the token
        token = f.read().strip()
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    data = None
    if body is not None:
        headers["Content-Type"] = "application/merge-patch+json"
        data = json.dumps(body).encode()
    request = urllib.request.Request(API + path, data=data, headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=10, context=TLS) as r:
        return json.loads(r.read() or b"{}")


def scrape(done):
    """The island's state now, from every engine's /metrics and pause route; `done` keeps each
    engine's finished-requests count (a request that started and ended between two scrapes is busy)."""
    busy = paused = seen = False
    for k, e in enumerate(CONFIG["engines"]):
        try:
            text = get(e["url"] + e["metrics"], 3).decode(errors="replace")  # from engine-version.py
        except Exception:
            continue
        seen = True
        finished = 0.0
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            name = line.split("{", 1)[0].split(" ", 1)[0]
            try:
                value = float(line.rsplit(" ", 1)[-1])
            except ValueError:
                continue
            if name in (e["running"], e["waiting"]) and value > 0:
                busy = True
            elif name == e["finished"]:
                finished += value
        if k in done and done[k] != finished:
            busy = True
        done[k] = finished
        # An engine without the route (vLLM outside dev mode: 404) is not paused.
        if e["paused"]:
            try:
                paused = paused or json.loads(get(e["url"] + e["paused"], 3)).get("is_paused") is True
            except Exception:
                pass
    return "busy" if busy else "paused" if paused else "idle" if seen else "unseen"


def idle_since(lines, now):
    """The start of the ledger's last run of idle lines, if its last line is recent (a restart)."""
    since = None
    last = None
    for line in lines:
        parts = line.split()
        if len(parts) != 2:
            continue
        at, state = float(parts[0]), parts[1]
        since = (since if since is not None else at) if state == "idle" else None
        last = at
    return since if since is not None and last is not None and now - last <= 2 * HEARTBEAT else None


def scales():
    """Each workload's spec.replicas now, through its scale subresource."""
    return [api("GET", w["path"] + "/scale").get("spec", {}).get("replicas", 0) for w in CONFIG["workloads"]]


def main():
    data = {}
    while True:
        try:
            data = api("GET", CM_PATH).get("data") or {}
            break
        except Exception as e:
            log(f"cannot read ConfigMap {CONFIG['configMap']} yet ({e}); again in {EVERY} s")
            time.sleep(EVERY)
    lines = [line for line in (data.get(LEDGER) or "").splitlines() if line.strip()]
    released = data.get(MARKER) or None
    now = int(time.time())
    since = idle_since(lines, now)
    if since is not None:
        log(f"idle since {int(since)} (from the ledger)")
    last = "idle" if since is not None else None
    wrote = 0
    pending = []  # workloads whose scale to zero has not gone through yet
    done = {}
    dirty = False
    log(
        f"{len(CONFIG['engines'])} engine(s), idle_release_after "
        + (f"{IDLE_S} s" if IDLE_S else "off")
        + (f"; released at {released}" if released else "")
    )
    while True:
        state = scrape(done)
        now = int(time.time())
        if state != last or now - wrote >= HEARTBEAT:
            lines = (lines + [f"{now} {state}"])[-MAX_LINES:]
            wrote = now
            dirty = True
        since = (since or now) if state == "idle" else None
        last = state
        patch = {}
        if released is None and IDLE_S > 0 and since is not None and now - since >= IDLE_S:
            log(
                f"island idle since {int(since)}: no request for {now - int(since)} s, "
                f"idle_release_after = {IDLE_S} s: scaling its engine workloads to zero"
            )
            released = f"{now} {int(since)}"
            patch[MARKER] = released
            pending = list(CONFIG["workloads"])
        elif released is not None and not pending:
            try:
                if all(r >= w["replicas"] for r, w in zip(scales(), CONFIG["workloads"])):
                    log("the island's workloads are back at their planned replicas: the release mark is cleared")
                    released = None
                    since = None
                    patch[MARKER] = None
            except Exception as e:
                log(f"cannot read the workloads' scale: {e}")
        if dirty or patch:
            try:
                api("PATCH", CM_PATH, {"data": {**patch, LEDGER: "\n".join(lines) + "\n"}})
                dirty = False
            except Exception as e:
                log(f"cannot write ConfigMap {CONFIG['configMap']}: {e}")
                if MARKER in patch and patch[MARKER] is not None:
                    released, pending, since = None, [], now  # not marked: not released; the clock starts again
        for w in list(pending):
            try:
                api("PATCH", w["path"] + "/scale", {"spec": {"replicas": 0}})
                pending.remove(w)
                log(f"{w['path'].rsplit('/', 1)[-1]} scaled to 0 replicas")
            except Exception as e:
                log(f"scaling {w['path']} to 0 failed ({e}); again in {EVERY} s")
        time.sleep(EVERY)


main()
