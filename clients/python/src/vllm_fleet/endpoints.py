"""What describes a fleet to a trainer, read and checked against the JSON Schemas the TypeScript program
publishes (vendored beside this file, kept byte-equal to schema/ by the repository's tests):
- the trainer contract, the `endpoints` stack output (schema/endpoints.schema.json);
- a running island's endpoints.json, which a SLURM (or local) job writes beside itself once every
  endpoint serves (schema/island.schema.json); one file per island, so a fleet of several islands is
  the list of their files."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlsplit

import jsonschema

from .errors import FleetError

ENGINE_KINDS = ("vllm", "prime-rl", "sglang")
ISLAND_FORMAT = "vllm-fleet/island/v1"
WEIGHTS_RECORD = "weights"
"""The weights record's name in an island's folder (templates/host/helpers.sh.mustache FLEET_WEIGHTS)."""


@lru_cache(maxsize=2)
def _validator(name: str) -> jsonschema.protocols.Validator:
    schema = json.loads(resources.files(__package__).joinpath(name).read_text("utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


@dataclass(frozen=True)
class Engine:
    """One engine process as the contract lists it: its admin base and where it sits."""

    island: int
    index: int
    """Position in the island's admin URLs (node-major, rank-minor; P/D prefill first)."""
    role: str
    admin_url: str

    @property
    def origin(self) -> str:
        """scheme://host:port: where vLLM's and prime-rl's admin routes live (their admin URL ends in /v1)."""
        parts = urlsplit(self.admin_url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def name(self) -> str:
        return f"island {self.island} engine {self.index} ({self.role}, {self.admin_url})"


@dataclass(frozen=True)
class Router:
    """An island's router as the contract describes it (absent in contracts written before it was added)."""

    url: str
    kind: str | None
    policy: str | None
    finish_session: bool
    session_header: str | None

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"


@dataclass(frozen=True)
class Island:
    island: int
    model: str
    router: Router | None
    engines: tuple[Engine, ...]
    base_url: str
    """Where this island's OpenAI requests go: its router, or its one engine's API."""
    weights_record: Path | None = None
    """The fleet's weights record beside the island's endpoints.json (read from a path: the island's
    folder, which its nodes see), whose last update an engine that restarts loads before it serves
    again (Fleet.update_weights writes it); None when the island was read from elsewhere."""


@dataclass(frozen=True)
class ServiceEndpoints:
    """One service's contract: what a Fleet drives."""

    service: str | None
    model: str
    target: str | None
    """None when the source does not say (an island's endpoints.json: SLURM or local)."""
    engine: str
    api_key_required: bool | None
    """None when the source does not say (an island's endpoints.json)."""
    islands: tuple[Island, ...]
    raw: Mapping[str, Any]

    @property
    def engines(self) -> tuple[Engine, ...]:
        return tuple(e for i in self.islands for e in i.engines)


def validate(doc: Any, source: str, schema: str = "endpoints.schema.json", what: str = "vllm-fleet endpoints contract") -> None:
    """Raises FleetError naming the first field the schema refuses."""
    # best_match descends into the contract's anyOf (one service, or a stack of services) to the deepest error.
    e = jsonschema.exceptions.best_match(_validator(schema).iter_errors(doc))
    if e is not None:
        at = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        raise FleetError(f"{source} is not a {what}: at {at}: {e.message}")


def _read(doc: Mapping[str, Any] | str | Path, source: str | None) -> tuple[Any, str]:
    if isinstance(doc, (str, Path)):
        source = source or str(doc)
        try:
            return json.loads(Path(doc).read_text("utf-8")), source
        except FileNotFoundError:
            raise FleetError(f"no endpoints file at {source}") from None
        except json.JSONDecodeError as e:
            raise FleetError(f"{source} is not JSON: {e}") from None
    return doc, source or "the endpoints"


Source = Mapping[str, Any] | str | Path


def load(doc: Source | list[Source], service: str | None = None, source: str | None = None) -> ServiceEndpoints:
    """Reads a contract, or one or more islands' endpoints.json (dicts or paths), validates it, and picks a service."""
    if isinstance(doc, (list, tuple)):
        if not doc:
            raise FleetError("no endpoints given")
        read = [(*_read(d, None), _folder(d)) for d in doc]
        return _from_islands(read, service)
    folder = _folder(doc)
    doc, source = _read(doc, source)
    if isinstance(doc, Mapping) and doc.get("format") == ISLAND_FORMAT:
        return _from_islands([(doc, source, folder)], service)
    validate(doc, source)
    assert isinstance(doc, Mapping)
    if "services" in doc:
        names = list(doc["services"])
        if service is None:
            raise FleetError(f"{source} holds several services ({', '.join(names)}): name one with service=")
        if service not in doc["services"]:
            raise FleetError(f"{source} has no service {service!r}; its services: {', '.join(names)}")
        return _service(doc["services"][service], service)
    if service is not None and service != doc["model"]:
        raise FleetError(f"{source} holds one service (model {doc['model']}), not {service!r}")
    return _service(doc, None)


def _folder(doc: Source) -> Path | None:
    """The folder of an endpoints file given by its path (an island's folder); None for a dict."""
    return Path(doc).resolve().parent if isinstance(doc, (str, Path)) else None


def _from_islands(read: list[tuple[Any, str, Path | None]], service: str | None) -> ServiceEndpoints:
    """A fleet from its islands' endpoints.json files (all of one stack, each once)."""
    docs = []
    folders = {}
    for doc, source, folder in read:
        if not isinstance(doc, Mapping) or doc.get("format") != ISLAND_FORMAT:
            raise FleetError(f"{source} is not an island's endpoints.json (format {ISLAND_FORMAT}); give a contract alone, or islands' files only")
        validate(doc, source, "island.schema.json", "running island's endpoints.json")
        docs.append((doc, source))
        if folder is not None:
            folders[doc["island"]] = folder / WEIGHTS_RECORD
    first, first_source = docs[0]
    for doc, source in docs[1:]:
        for key in ("stack", "model"):
            if doc[key] != first[key]:
                raise FleetError(f"{source} is of {key} {doc[key]!r}, {first_source} of {first[key]!r}: one fleet's islands only")
    islands = sorted({d["island"]: d for d, _ in docs}.values(), key=lambda d: d["island"])
    if len(islands) != len(docs):
        raise FleetError("an island is given twice: " + ", ".join(s for _, s in docs))
    if service is not None and service != first["stack"]:
        raise FleetError(f"these files are stack {first['stack']!r}'s islands; service {service!r} is not among them")
    engine = first.get("engine", "vllm")
    contract = {
        "model": first["model"],
        "engine": engine,
        "islands": [
            {"island": d["island"], "model": d["model"], "routerUrl": d["routerUrl"], "router": d.get("router"), "adminUrls": d["adminUrls"], "roles": d["roles"]}
            for d in islands
        ],
    }
    found = _service(contract, None)
    return replace(found, islands=tuple(replace(i, weights_record=folders.get(i.island)) for i in found.islands))


def without(svc: ServiceEndpoints, names: frozenset[str]) -> ServiceEndpoints:
    """The service without the engines named."""
    if not names:
        return svc
    return replace(svc, islands=tuple(replace(i, engines=tuple(e for e in i.engines if e.name not in names)) for i in svc.islands))


def api_base(engine: str, admin_url: str) -> str:
    """An engine's OpenAI base: its admin URL for vLLM and prime-rl (.../v1); SGLang's admin URL is its root."""
    return admin_url.rstrip("/") + "/v1" if engine == "sglang" else admin_url


def _router(island: Mapping[str, Any]) -> Router | None:
    url = island.get("routerUrl")
    if url is None:
        return None
    r = island.get("router") or {}
    return Router(
        url=url,
        kind=r.get("kind"),
        policy=r.get("policy"),
        finish_session=bool(r.get("finishSession", False)),
        # vllm-router hashes this header by default, and prime-rl sends it (docs/trainer.md).
        session_header=r.get("sessionHeader", "X-Session-ID") if r else "X-Session-ID",
    )


def _service(doc: Mapping[str, Any], name: str | None) -> ServiceEndpoints:
    engine = doc.get("engine", "vllm")  # contracts written before engines had a name are vLLM's
    islands = []
    for i in doc["islands"]:
        engines = tuple(
            Engine(island=i["island"], index=n, role=role, admin_url=url)
            for n, (url, role) in enumerate(zip(i["adminUrls"], i["roles"]))
        )
        router = _router(i)
        base = router.url if router else api_base(engine, engines[0].admin_url)
        islands.append(Island(island=i["island"], model=i["model"], router=router, engines=engines, base_url=base))
    return ServiceEndpoints(
        service=name,
        model=doc["model"],
        target=doc.get("target"),
        engine=engine,
        api_key_required=doc.get("apiKeyRequired"),
        islands=tuple(islands),
        raw=doc,
    )
