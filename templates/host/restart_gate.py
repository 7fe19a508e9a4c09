"""The restart gate: keeps a restarted vLLM engine out of every router and client until it serves the
fleet's weights. The node that restarts an engine no router's follower watches (vllm-router in P/D
mode, an island without a router) writes this module beside the engine's log, names a gate file in
FLEET_RESTART_GATE and starts the engine with `--middleware restart_gate.RestartGate`
(templates/host/helpers.sh.mustache, fleet_gate_close); it removes the file once the engine serves
the fleet's weights (fleet_catch_up). While the file exists, every HTTP path it does not list (one
a line: the weight-version route and the weights record's calls) is answered 503, /health included:
vllm-router's health checker then keeps the engine out (measured with 0.1.17 in P/D mode), and a
client that asks the engine directly sees it down, never serving the base weights. Once the file is
gone the gate is open for the process's life, at the cost of one attribute test a request.
vLLM loads it as an ASGI class (vllm/entrypoints/serve/middleware/register.py: app.add_middleware).
"""
import os

CLOSED = b'{"error": "restarting: loading the fleet\'s weights (restart gate closed)"}'


class RestartGate:
    def __init__(self, app):
        self.app = app
        # Set only for a start the node gated; an API server process reads the file on its own.
        self.file = os.environ.get("FLEET_RESTART_GATE") or None

    def listed(self):
        """The paths the closed gate lets through, or None once it is open (the file removed)."""
        try:
            with open(self.file, encoding="utf-8") as f:
                return f.read().split()
        except FileNotFoundError:
            self.file = None
            return None

    async def __call__(self, scope, receive, send):
        if self.file is not None and scope["type"] in ("http", "websocket"):
            listed = self.listed()
            if listed is not None and scope["path"] not in listed:
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1013})
                    return
                headers = [(b"content-type", b"application/json"), (b"content-length", str(len(CLOSED)).encode())]
                await send({"type": "http.response.start", "status": 503, "headers": headers})
                await send({"type": "http.response.body", "body": CLOSED})
                return
        await self.app(scope, receive, send)
