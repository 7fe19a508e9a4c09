# The router's follower on Kubernetes (components/kubernetes/router-follower.ts): a Deployment of its
# own that keeps vllm-router, through its Service, to the engines that serve the island's weights.
# The router checks only /health, so an engine container the kubelet restarted, back on the base
# model while its peers serve a trainer's update, would take requests until that update reached it.
# The follower takes such an engine out (POST /remove_worker), and one whose /health is refused or
# fails twice in a row, and tells it again (POST /add_worker) once it serves and its weights are
# current: the rule of the engines' readiness check (weights-ready.py), applied with the workers' own
# URLs. Runs in the router's image (its python3); a follower the kubelet restarts tells the router
# once what each worker should be.
# argv: ROUTER_URL VERSION_ROUTE BASE_VERSION WORKER_URL...
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

ROUTER, route, base = sys.argv[1:4]
workers = sys.argv[4:]
# Seconds between rounds; a worker that serves is taken out only after this many stale rounds in a
# row (an update reaches the engines one after the other), one that was out is checked at once.
TICK = 1
STALE_ROUNDS = 3
# Rounds between re-sending every removal (a router the kubelet restarted lists its workers again).
RESEND = 15


def log(text):
    print(f"[fleet] router follower: {text}", flush=True)


def health(url):
    """'ok', 'refused' (nothing listens) or the failure."""
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2):
            return "ok"
    except urllib.error.HTTPError as e:
        return f"HTTP {e.code}"
    except urllib.error.URLError as e:
        return "refused" if isinstance(e.reason, ConnectionRefusedError) else str(e.reason)
    except OSError as e:
        return str(e)


def version(url):
    """The weight version the engine reports, or None (no route, no answer: nothing to compare)."""
    try:
        with urllib.request.urlopen(f"{url}{route}", timeout=2) as r:
            v = json.loads(r.read()).get("weight_version")
    except Exception:
        return None
    return None if v is None else str(v)


def call(action, url, quiet=False):
    """POST /<action>?url=...; True once the router answered (yes or no), False if it did not listen."""
    q = urllib.parse.urlencode({"url": url})
    try:
        with urllib.request.urlopen(urllib.request.Request(f"{ROUTER}/{action}?{q}", method="POST"), timeout=30) as r:
            answer = f"HTTP {r.status} {r.read(300).decode(errors='replace')}"
    except urllib.error.HTTPError as e:
        answer = f"HTTP {e.code} {e.read(300).decode(errors='replace')}"
    except OSError:
        return False
    if not quiet:
        log(f"{action} {url}: {answer.strip()}")
    return True


# Each worker "in" the router, "out" of it, or not known yet: at the follower's start (the router may
# list it or not, if an earlier follower took it out) it is told what it should be, once.
where = {w: "unknown" for w in workers}
misses = {w: 0 for w in workers}
stale_rounds = {w: 0 for w in workers}
said = {}
rounds = 0


def take_out(w, why):
    if where[w] != "out" and call("remove_worker", w):
        where[w] = "out"
    if where[w] == "out" and said.get(w) != why:
        said[w] = why
        log(f"{w} kept out: {why}")


while True:
    rounds += 1
    states = {w: health(w) for w in workers}
    versions = {w: version(w) for w in workers if states[w] == "ok"}
    for w in workers:
        state = states[w]
        if state != "ok":
            misses[w] += 1
            if where[w] != "in" or state == "refused" or misses[w] >= 2:
                take_out(w, f"/health {state}")
            continue
        misses[w] = 0
        ahead = sorted({v for p, v in versions.items() if p != w and v not in (None, base)})
        if versions.get(w) == base and ahead:
            stale_rounds[w] += 1
            if where[w] != "in" or stale_rounds[w] >= STALE_ROUNDS:
                take_out(
                    w,
                    f"serves the base weights (weight version {base}) while its peers serve {', '.join(ahead)}; "
                    "the trainer's next update (Fleet.update_weights) brings it in",
                )
            continue
        stale_rounds[w] = 0
        if where[w] != "in" and call("add_worker", w):
            where[w] = "in"
            said.pop(w, None)
    if rounds % RESEND == 0:
        for w in workers:
            if where[w] == "out":
                call("remove_worker", w, quiet=True)
    time.sleep(TICK)
