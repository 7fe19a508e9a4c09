# The router's follower on Kubernetes (components/kubernetes/router-follower.ts): a Deployment of its
# own that keeps the router, through its Service, to the engines that serve the island's weights.
# The router checks only /health, so an engine container the kubelet restarted, back on the base
# model while its peers serve a trainer's update, would take requests until that update reached it.
# The follower takes such an engine out, and one whose /health is refused or fails twice in a row,
# and tells it again once it serves and its weights are current: the rule of the engines' readiness
# check (weights-ready.py), applied with the workers' own URLs. Runs in the router's image (its
# python3), after engine-version.py (get, weight_version); a follower the kubelet restarts tells the
# router once what each worker should be.
# argv: ROUTER_URL ROUTES VERSION_ROUTE BASE_VERSION WORKER_URL...
# ROUTES: the router's run-time routes (router-plan.ts followOf): "query", vllm-router's POST
# /remove_worker?url= and /add_worker?url=; "workers", sglang-router's DELETE /workers/<id> (its id
# from GET /workers) and POST /workers {"url": ...}, in P/D mode with the worker_type and
# bootstrap_port it was listed with.
import json
import sys
import time
import urllib.error
import urllib.parse

ROUTER, ROUTES, route, base = sys.argv[1:5]
workers = sys.argv[5:]
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
        get(f"{url}/health", 2)  # from engine-version.py
        return "ok"
    except urllib.error.HTTPError as e:
        return f"HTTP {e.code}"
    except urllib.error.URLError as e:
        return "refused" if isinstance(e.reason, ConnectionRefusedError) else str(e.reason)
    except OSError as e:
        return str(e)


def version(url):
    return weight_version(f"{url}{route}", 2)  # from engine-version.py


def answer(method, path, body=None):
    """The router's answer, 'HTTP <status> <body>' (yes or no), or None when it did not listen."""
    try:
        status, text = send(f"{ROUTER}{path}", 30, method, body)  # from engine-version.py
        return f"HTTP {status} {text[:300].decode(errors='replace')}".strip()
    except urllib.error.HTTPError as e:
        return f"HTTP {e.code} {e.read(300).decode(errors='replace')}".strip()
    except OSError:
        return None


# What sglang-router listed each worker as, learned once: in P/D mode its worker_type and a prefill's
# bootstrap_port, to tell it again as it was (nothing in regular mode).
listed_as = {}


def worker_id(url):
    """sglang-router's id for the worker at url (learning what it is listed as): None when it lists
    none (out already), False when the router did not answer."""
    try:
        listed = json.loads(get(f"{ROUTER}/workers", 30)).get("workers", [])
    except urllib.error.HTTPError as e:
        log(f"GET /workers: HTTP {e.code}")
        return None
    except (OSError, ValueError):
        return False
    for w in listed:
        if w.get("url") != url:
            continue
        p_d = w.get("worker_type") in ("prefill", "decode")
        listed_as[url] = {k: w[k] for k in ("worker_type", "bootstrap_port") if p_d and w.get(k) is not None}
        return w.get("id")
    return None


def call(action, url, quiet=False):
    """Takes the worker out (action "remove") or in (action "add"); True once the router answered
    (yes or no), False if it did not listen."""
    if ROUTES == "query":
        said, what = answer("POST", f"/{action}_worker?{urllib.parse.urlencode({'url': url})}"), f"{action}_worker {url}"
    elif action == "add":
        if url not in listed_as and worker_id(url) is False:
            return False
        body = {"url": url, **listed_as.get(url, {})}
        said, what = answer("POST", "/workers", body), f"POST /workers {json.dumps(body)}"
    else:
        wid = worker_id(url)
        if wid is False:
            return False
        if wid is None:
            if not quiet:
                log(f"{url} is not among the router's workers")
            return True
        said, what = answer("DELETE", f"/workers/{wid}"), f"DELETE /workers/{wid} ({url})"
    if said is None:
        return False
    if not quiet:
        log(f"{what}: {said}")
    return True


# Each worker "in" the router, "out" of it, or not known yet: at the follower's start (the router may
# list it or not, if an earlier follower took it out) it is told what it should be, once.
where = {w: "unknown" for w in workers}
misses = {w: 0 for w in workers}
stale_rounds = {w: 0 for w in workers}
said = {}
rounds = 0


def take_out(w, why):
    if where[w] != "out" and call("remove", w):
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
            stale_rounds[w] = 0
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
        if where[w] != "in" and call("add", w):
            where[w] = "in"
            said.pop(w, None)
    if rounds % RESEND == 0:
        for w in workers:
            if where[w] == "out":
                call("remove", w, quiet=True)
    time.sleep(TICK)
