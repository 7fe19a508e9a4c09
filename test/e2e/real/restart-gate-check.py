"""Runs templates/host/restart_gate.py (found on PYTHONPATH, as a node puts it) as a real vLLM loads it: vLLM's own init_entrypoints_middleware
(vllm/entrypoints/serve/middleware/register.py) with `--middleware restart_gate.RestartGate` on a
FastAPI app carrying vLLM's other middleware (the API key's among them), then the cases on stdin
through Starlette's TestClient. Prints one JSON line: each case's status and body.

stdin: {"gate": GATE_FILE, "key": API_KEY, "cases": [{"path", "method", "write": lines or null (the
gate file's content before the case; null removes it; absent leaves it), "key": bool}]}
"""
import json
import os
import sys
from argparse import Namespace

spec = json.load(sys.stdin)
os.environ["FLEET_RESTART_GATE"] = spec["gate"]

from fastapi import FastAPI  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from vllm.entrypoints.serve.middleware.register import init_entrypoints_middleware  # noqa: E402

app = FastAPI()


@app.get("/health")
def health():
    return {}


@app.get("/weight_info")
def weight_info():
    return {"weight_version": "default"}


@app.post("/collective_rpc")
def collective_rpc():
    return {"results": []}


@app.post("/v1/completions")
def completions():
    return {"choices": [{"text": "ok"}]}


args = Namespace(
    allowed_origins=["*"],
    allow_credentials=False,
    allowed_methods=["*"],
    allowed_headers=["*"],
    api_key=[spec["key"]],
    enable_request_id_headers=False,
    middleware=["restart_gate.RestartGate"],
)
init_entrypoints_middleware(args, app, ("generate",))
client = TestClient(app)
out = []
for case in spec["cases"]:
    if case.get("write") is not None:
        with open(spec["gate"], "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in case["write"]))
    elif "write" in case and os.path.exists(spec["gate"]):
        os.remove(spec["gate"])
    headers = {"Authorization": f"Bearer {spec['key']}"} if case.get("key") else {}
    r = client.request(case["method"], case["path"], headers=headers)
    out.append({"status": r.status_code, "body": r.text})
print(json.dumps(out))
