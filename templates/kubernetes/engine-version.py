# What the engines' readiness check (weights-ready.py) and the router's follower (router-follower.py)
# share: each goes to python3 -c with this text in front of it, and KEY_ENV in front of this, the
# name of the pod's variable that holds the fleet's API key (components/kubernetes/python-check.ts).
import json
import os
import urllib.request

KEY = os.environ.get(KEY_ENV) or None  # written in front of this text


def send(url, timeout, method="GET", body=None):
    """(status, body) of the answer; the fleet's API key goes with the call where the pod holds one
    (SGLang demands it on every route but /health, sglang-router with --api-key on its worker routes).
    Raises urllib's HTTPError for an answer of 400 or more, OSError when nothing answered."""
    headers = {"Authorization": f"Bearer {KEY}"} if KEY else {}
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=timeout) as r:
        return r.status, r.read()


def get(url, timeout):
    """The body of GET url (send)."""
    return send(url, timeout)[1]


def weight_version(url, timeout):
    """The weight version the engine reports at url (its version route), or None: no route, no
    answer or no version, so nothing to compare."""
    try:
        v = json.loads(get(url, timeout)).get("weight_version")
    except Exception:
        return None
    return None if v is None else str(v)
