#!/usr/bin/env python3
"""vec-inf and vllm-fleet side by side: the same model on the same resources, rendered by both.

For every model both catalogs know (vec-inf's packaged vec_inf/config/models.yaml and our
components/config/catalog/models.yaml), this

- runs vec-inf's own `vec-inf launch <name> --json-mode` with an `sbatch` capture shim first on
  PATH: the shim copies the script vec-inf submits and prints "Submitted batch job 4242", so vec-inf's
  whole launch path runs (config merge, validation, SlurmScriptGenerator, its log-directory moves)
  and nothing reaches a cluster;
- writes a stack file for the same model, GPUs per node, nodes, tensor/pipeline parallel size,
  partition, account, time and GPU type, and runs our plan CLI on it (`node dist/bin/plan.js <stack>
  --out <dir>`);
- compares the two renderings: #SBATCH directives, `vllm serve` flags, environment, and where each
  puts its port, URL and logs.

It prints the generated section of docs/vec-inf.md (Markdown), or with --write FILE replaces that
section in FILE, or with --check FILE exits 1 when FILE's section differs. Run it with the Python of a
venv holding vec-inf (its `vec-inf` script must sit beside that python), from a checkout where
`npm run build` has run:

    $FLEET_PYENV/bin/python test/compat/vec-inf-side-by-side.py --write docs/vec-inf.md

`bash test/e2e/python-env.sh` prints the env file naming FLEET_PYENV. test/e2e/vec-inf.e2e.test.ts
runs --check. Both sides are rendered the way each tool renders for its users; only paths under the
temporary sandbox are written back as vec-inf's defaults (the sandbox home as `~`, the sandbox weights
directory as `/model-weights`, the work directory as `<work_dir>`, vec-inf's package directory as
`<vec_inf>`), so the section does not change from run to run.

Matching rule: a vec-inf model name matches our catalog entry when it is the entry's Hugging Face
id, the id without its organisation (`Qwen3-8B` for `Qwen/Qwen3-8B`), an alias, or one of the entry's
`other_names` (`Meta-Llama-3.1-8B-Instruct`).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import inspect
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
BEGIN = "<!-- BEGIN GENERATED: test/compat/vec-inf-side-by-side.py -->"
END = "<!-- END GENERATED -->"

# The resources both renderings get (the per-model GPUs, nodes and parallel sizes come from
# vec-inf's catalog entry). time is vec-inf's default; our stack files have none by default.
PARTITION = "gpu"
ACCOUNT = "acct"
TIME = "08:00:00"
RESOURCE_TYPE = "h100"  # vec-inf --resource-type; ours slurm.gres = gpu:h100:<n>, gpu_type = "H100"
IMAGE = "/model-weights/vec-inf-shared/vector-inference-vllm_latest.sif"  # vec-inf's packaged default
JOB_ID = "4242"

SHIM = """#!/bin/bash
# sbatch capture shim: keeps the script vec-inf submits; submits nothing.
cp "$1" "$VI_CAPTURE"
echo "Submitted batch job %s"
""" % JOB_ID


def vec_inf_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("vec_inf")
    if spec is None or spec.origin is None:
        sys.exit("vec-inf is not installed in this Python (%s)" % sys.executable)
    return Path(spec.origin).parent


def match(vec_models: dict, ours: dict) -> list[tuple[str, str]]:
    pairs = []
    for name in vec_models:
        for oid, entry in ours.items():
            names = {oid, oid.split("/", 1)[-1], *(entry.get("aliases") or []), *(entry.get("other_names") or [])}
            if name in names:
                pairs.append((name, oid))
    return pairs


def resources(entry: dict) -> dict:
    args = entry.get("vllm_args") or {}
    return {
        "gpus": int(entry["gpus_per_node"]),
        "nodes": int(entry["num_nodes"]),
        "tp": int(args.get("--tensor-parallel-size", 1)),
        "pp": int(args.get("--pipeline-parallel-size", 1)),
    }


class Sandbox:
    def __init__(self, root: Path, vdir: Path):
        self.root = root
        self.vdir = vdir
        self.home = root / "home"
        self.work = root / "work"
        self.weights = root / "model-weights"
        self.shim = root / "shim"
        for d in (self.home, self.work, self.weights, self.shim):
            d.mkdir(parents=True, exist_ok=True)
        (self.shim / "sbatch").write_text(SHIM)
        (self.shim / "sbatch").chmod(0o755)

    def normalise(self, text: str) -> str:
        for path, name in (
            (self.weights, "/model-weights"),
            (self.work, "<work_dir>"),
            (self.home, "~"),
            (self.root, "<sandbox>"),
            (self.vdir, "<vec_inf>"),
        ):
            text = text.replace(str(path), name)
        return text


def run_vec_inf(box: Sandbox, name: str) -> dict:
    """vec-inf's own launch, with sbatch captured."""
    (box.weights / name).mkdir(exist_ok=True)
    capture = box.root / f"{name}.captured.sbatch"
    exe = Path(sys.executable).parent / "vec-inf"
    if not exe.exists():
        sys.exit(f"no vec-inf script beside {sys.executable}")
    argv = [
        str(exe), "launch", name, "--json-mode",
        "--partition", PARTITION, "--account", ACCOUNT, "--time", TIME,
        "--resource-type", RESOURCE_TYPE,
        "--work-dir", str(box.work), "--model-weights-parent-dir", str(box.weights),
    ]  # fmt: skip
    env = {
        "PATH": f"{box.shim}:{exe.parent}:/usr/bin:/bin",
        "HOME": str(box.home),
        "VI_CAPTURE": str(capture),
        "LANG": "C.UTF-8",
    }
    done = subprocess.run(argv, cwd=box.work, env=env, capture_output=True, text=True)
    if done.returncode != 0 or not capture.exists():
        sys.exit(f"vec-inf launch {name} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    params = json.loads(done.stdout.strip().splitlines()[-1])
    moved = Path(params["log_dir"]) / f"{name}.{JOB_ID}" / f"{name}.{JOB_ID}.sbatch"
    return {
        "script": box.normalise(capture.read_text()),
        "params": params,
        "moved": box.normalise(str(moved)) if moved.exists() else None,
        "json_file": box.normalise(str(moved.with_suffix(".json"))) if moved.exists() else None,
    }


def stack_toml(oid: str, r: dict) -> str:
    return "\n".join(
        [
            "# Written by test/compat/vec-inf-side-by-side.py: one engine, as vec-inf runs one server.",
            "[model]",
            f"name = {json.dumps(oid)}",
            "[parallel]",
            f"tp = {r['tp']}",
            "[deployment]",
            f"gpus_per_node = {r['gpus']}",
            'gpu_type = "H100"',
            "[deployment.router]",
            'type = "none"',
            "[slurm]",
            f"partition = {json.dumps(PARTITION)}",
            f"account = {json.dumps(ACCOUNT)}",
            f"time = {json.dumps(TIME)}",
            f'gres = "gpu:{RESOURCE_TYPE}:{r["gpus"]}"',
            "[slurm.launcher]",
            'type = "apptainer"',
            f"image = {json.dumps(IMAGE)}",
            "",
        ]
    )


def run_ours(box: Sandbox, name: str, oid: str, r: dict) -> dict:
    stack = box.root / "stacks" / f"{name.lower()}.toml"
    stack.parent.mkdir(exist_ok=True)
    stack.write_text(stack_toml(oid, r))
    out = box.root / "plan-out" / name
    plan_js = REPO / "dist" / "bin" / "plan.js"
    if not plan_js.exists():
        sys.exit(f"{plan_js} is missing: run npm run build")
    done = subprocess.run(["node", str(plan_js), str(stack), "--out", str(out)], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"plan {stack} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    plan = json.loads((out / "plan.json").read_text())
    island = out / "island-0"
    script = next(island.glob("*.sbatch")).read_text()
    return {
        "script": script,
        "create": (island / "create.sh").read_text(),
        "plan": plan,
        "engine": plan["islands"][0]["engines"][0],
    }


# ---- parsing the renderings --------------------------------------------------------------------


def sbatch_directives(script: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in script.splitlines():
        m = re.match(r"#SBATCH\s+--([\w-]+)(?:=(.*))?$", line.strip())
        if m:
            out[m.group(1)] = m.group(2) if m.group(2) is not None else "(set)"
    return out


def flags_of(argv: list[str], skip: int) -> dict[str, str]:
    """`--flag value` / bare `--flag` pairs after the first `skip` words."""
    out: dict[str, str] = {}
    i = skip
    while i < len(argv):
        a = argv[i]
        if a.startswith("--"):
            if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                out[a] = argv[i + 1]
                i += 2
                continue
            out[a] = "(set)"
        i += 1
    return out


def vec_inf_serve(script: str) -> tuple[list[str], str]:
    """vec-inf's `vllm serve` command (continuation lines joined) and the container line before it."""
    lines = script.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("vllm serve "))
    cmd = []
    for l in lines[start:]:
        cmd.append(l.rstrip("\\").strip())
        if not l.endswith("\\"):
            break
    container = lines[start - 1].rstrip("\\").strip() if start else ""
    return shlex.split(" ".join(cmd), posix=True), container


def our_serve_line(script: str) -> str:
    m = re.search(r"exec (apptainer exec [^ ]+ [^ ]+) vllm serve", script)
    return m.group(1) if m else ""


def vec_inf_env(script: str, container: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in script.splitlines():
        m = re.match(r"export (\w+)=(.*)$", line.strip())
        if m:
            env[m.group(1)] = m.group(2)
    m = re.search(r"--env (\S+)", container)
    if m:
        for kv in m.group(1).split(","):
            k, _, v = kv.partition("=")
            env[k] = v
    return env


# ---- the Markdown ------------------------------------------------------------------------------


def cell(v: str | None) -> str:
    if v is None:
        return "—"
    return "`" + v.replace("|", "\\|") + "`"


def collapse(values: dict[str, str | None]) -> str:
    """One value when every model agrees, else each value with the models that have it."""
    groups: dict[str | None, list[str]] = {}
    for model, v in values.items():
        groups.setdefault(v, []).append(model)
    if len(groups) == 1:
        return cell(next(iter(groups)))
    return "; ".join(f"{cell(v)} ({', '.join(ms)})" for v, ms in groups.items())


def templated(value: str | None, subs: dict[str, str]) -> str | None:
    if value is None:
        return None
    for a, b in subs.items():
        value = value.replace(a, b)
    return value


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def order(keys: list[str], first: list[str]) -> list[str]:
    return [k for k in first if k in keys] + sorted(k for k in keys if k not in first)


def render(vec_models: dict, ours_models: dict, pairs: list, results: list[dict]) -> str:
    version = importlib.metadata.version("vec-inf")
    from vec_inf.client import VecInfClient  # noqa: E402 (loads vec-inf's environment.yaml)
    from vec_inf.client._client_vars import MODEL_READY_SIGNATURE

    wait = inspect.signature(VecInfClient.wait_until_ready).parameters
    md: list[str] = [
        BEGIN,
        "",
        f"Generated by `test/compat/vec-inf-side-by-side.py` from vec-inf **{version}** (its packaged",
        "`models.yaml` and `environment.yaml`; `vec-inf launch` run with an `sbatch` capture shim) and this",
        "checkout's `npm run plan -- <stack> --out`. Regenerate: `$FLEET_PYENV/bin/python",
        "test/compat/vec-inf-side-by-side.py --write docs/vec-inf.md` (after `npm run build`).",
        "",
        f"vec-inf's catalog has {len(vec_models)} models, ours {len(ours_models)}; {len(pairs)} are in both.",
        "Each is rendered on vec-inf's GPUs per node, nodes and tensor/pipeline sizes for it, with",
        f"`partition={PARTITION}`, `account={ACCOUNT}`, `time={TIME}`, GPU type `{RESOURCE_TYPE}` and",
        "vec-inf's default Apptainer image on both sides; ours with `[deployment.router] type = \"none\"`",
        "(one `vllm serve` per job, as vec-inf) and `[slurm.launcher] type = \"apptainer\"`. Everything",
        "else is each tool's default.",
        "",
    ]
    md += table(
        ["vec-inf name", "our id", "GPUs/node x nodes", "tp", "pp", "vec-inf job", "our job"],
        [
            [
                f"`{r['name']}`",
                f"`{r['oid']}`",
                f"{r['res']['gpus']} x {r['res']['nodes']}",
                str(r["res"]["tp"]),
                str(r["res"]["pp"]),
                cell(sbatch_directives(r["vec"]["script"]).get("job-name")),
                cell(sbatch_directives(r["ours"]["script"]).get("job-name")),
            ]
            for r in results
        ],
    )

    # #SBATCH
    md += ["", "### SLURM resources (`#SBATCH`)", ""]
    md += [
        "`<model>` stands for the vec-inf name, `<stack>` for our stack name (the name lower-cased).",
        "A value that differs between models is listed with the models that have it.",
        "",
    ]
    vs = {r["name"]: sbatch_directives(r["vec"]["script"]) for r in results}
    os_ = {r["name"]: sbatch_directives(r["ours"]["script"]) for r in results}
    keys = sorted({k for d in [*vs.values(), *os_.values()] for k in d})
    first = ["job-name", "nodes", "ntasks-per-node", "gres", "cpus-per-task", "mem", "exclusive",
             "partition", "account", "qos", "time", "chdir", "output", "error", "no-requeue"]  # fmt: skip
    rows = []
    for k in order(keys, first):
        subs = lambda name: {name: "<model>", name.lower(): "<stack>"}  # noqa: E731
        v = {n: templated(vs[n].get(k), subs(n)) for n in vs}
        o = {n: templated(os_[n].get(k), subs(n)) for n in os_}
        rows.append([f"`--{k}`", collapse(v), collapse(o), "same" if v == o else "differs"])
    md += table(["directive", f"vec-inf {version}", "vllm-fleet", ""], rows)

    # vllm serve flags
    md += ["", "### `vllm serve` flags", ""]
    md += [
        "vec-inf's from its script (continuation lines joined), ours from `plan.json` (the same argv the",
        "script runs). `(set)` is a flag without a value; `$server_port_number` is vec-inf's run-time",
        "port (below).",
        "",
    ]
    vflags, oflags, served = {}, {}, {}
    for r in results:
        argv, _ = vec_inf_serve(r["vec"]["script"])
        vflags[r["name"]] = flags_of(argv, 3)
        served[r["name"]] = (argv[2], r["ours"]["engine"]["argv"][2])
        oflags[r["name"]] = flags_of(r["ours"]["engine"]["argv"], 3)
    rows = [
        [
            "model argument",
            collapse({n: templated(s[0], {n: "<model>"}) for n, s in served.items()}),
            collapse({n: s[1] for n, s in served.items()}),
            "differs",
        ]
    ]
    keys = sorted({k for d in [*vflags.values(), *oflags.values()] for k in d})
    first = ["--served-model-name", "--host", "--port", "--tensor-parallel-size", "--pipeline-parallel-size",
             "--max-model-len", "--dtype", "--gpu-memory-utilization"]  # fmt: skip
    for k in order(keys, first):
        v = {n: templated(vflags[n].get(k), {n: "<model>"}) for n in vflags}
        o = {n: oflags[n].get(k) for n in oflags}
        rows.append([f"`{k}`", collapse(v), collapse(o), "same" if v == o else "differs"])
    md += table(["flag", f"vec-inf {version}", "vllm-fleet", ""], rows)

    # environment and container
    md += ["", "### Environment and container", ""]
    md += [
        "Variables the script sets for the server (vec-inf: its `export` lines and the container's",
        "`--env`; ours: the engine's planned env). Neither list shows what the image itself sets.",
        "",
    ]
    venv = {r["name"]: vec_inf_env(r["vec"]["script"], vec_inf_serve(r["vec"]["script"])[1]) for r in results}
    oenv = {r["name"]: dict(r["ours"]["engine"]["env"]) for r in results}
    rows = [
        [
            "container command",
            collapse({r["name"]: re.sub(r"\s+", " ", vec_inf_serve(r["vec"]["script"])[1]) for r in results}),
            collapse({r["name"]: our_serve_line(r["ours"]["script"]) for r in results}),
            "differs",
        ]
    ]
    for k in sorted({k for d in [*venv.values(), *oenv.values()] for k in d}):
        v = {n: templated(venv[n].get(k), {n: "<model>"}) for n in venv}
        o = {n: oenv[n].get(k) for n in oenv}
        rows.append([f"`{k}`", collapse(v), collapse(o), "same" if v == o else "differs"])
    md += table(["variable", f"vec-inf {version}", "vllm-fleet", ""], rows)

    # readiness, port, URL, logs
    r0 = results[0]
    n0 = r0["name"]
    vs0 = r0["vec"]["script"]
    port_call = re.search(r"server_port_number=\$\((find_available_port [^)]*)\)", vs0)
    url = re.search(r'server_address="([^"]*)"', vs0)
    create = r0["ours"]["create"]
    probes = re.search(r"^probe_urls=\((.*)\)$", create, re.M)
    cfg = r0["ours"]["plan"]["config"]["target"]
    ours_dirs = sbatch_directives(r0["ours"]["script"])
    vdirs = vs[n0]
    ev = r0["ours"]["engine"]["env"]
    sub0 = {n0: "<model>"}
    md += ["", "### Port, URL, readiness, logs", ""]
    md += [f"Values from the {n0} rendering, with `<model>` for its name.", ""]
    md += table(
        ["", f"vec-inf {version}", "vllm-fleet"],
        [
            [
                "server port",
                f"`{port_call.group(1) if port_call else '?'}` at run time (`find_port.sh`: a random free port, "
                "checked with `nc -l`, then released before vLLM binds it)",
                f"fixed by the plan: `--port {r0['ours']['engine']['port']}` (`[server] port`)",
            ],
            [
                "URL handed out",
                f"`{url.group(1) if url else '?'}` (node host name), written by the job with `jq` into "
                f"`{templated(r0['vec']['json_file'], sub0)}`",
                f"`{r0['ours']['plan']['islands'][0]['endpoints']['engines'][0]['url']}` (the node's IPv4 "
                "address), in `endpoints.json` and the stack outputs",
            ],
            [
                "who decides it is up",
                "the client, when asked (`vec-inf status`, `VecInfClient.wait_until_ready`): job `RUNNING` in "
                f"`scontrol`, then the `.err` log holds `{MODEL_READY_SIGNATURE.strip()}` and no line "
                "matching its error patterns before it, then one `GET /health` (no request timeout)",
                "the create command of `pulumi up` on the login node: the job `RUNNING` in `squeue`, then "
                "every endpoint answers "
                + ", then ".join(f"`GET {path}`" for path in re.findall(r":\d+(/[\w/]+)", probes.group(1) if probes else ""))
                + " (`curl --max-time 5`; `/v1/models` must list the model), the job state checked every second",
            ],
            [
                "how long it waits",
                f"`wait_until_ready`: {wait['timeout_seconds'].default} s, polling every "
                f"{wait['poll_interval_seconds'].default} s (API only; the CLI has no wait)",
                f"`slurm.pending_timeout` {cfg['pending_timeout']} s to start, then `slurm.ready_timeout` "
                f"{cfg['ready_timeout']} s, probes every 0.05–0.2 s (faster as fewer endpoints remain); vLLM's own "
                f"`VLLM_ENGINE_READY_TIMEOUT_S={ev.get('VLLM_ENGINE_READY_TIMEOUT_S', '—')}`",
            ],
            [
                "batch output",
                f"`{templated(vdirs.get('output'), sub0)}`, `{templated(vdirs.get('error'), sub0)}`",
                f"`{templated(ours_dirs.get('output'), {n0.lower(): '<stack>'})}`",
            ],
            [
                "server log",
                "the same `.out` / `.err` (the ready signature and errors are read from `.err`)",
                "`<output_dir>/island-0/logs/job_<jobid>_<attempt>/node_0/"
                f"{r0['ours']['engine']['id']}.log`, plus `<engine>.exit` when it exits",
            ],
            [
                "script kept",
                f"`{templated(r0['vec']['moved'], sub0)}` (moved there after `sbatch`)",
                "`<output_dir>/island-0/<job>.sbatch` (written before `sbatch`)",
            ],
        ],
    )
    md += ["", END]
    return "\n".join(md) + "\n"


def generate(keep: Path | None) -> str:
    vdir = vec_inf_dir()
    vec_models = yaml.safe_load((vdir / "config" / "models.yaml").read_text())["models"]
    ours_models = yaml.safe_load((REPO / "components/config/catalog/models.yaml").read_text())["models"]
    pairs = match(vec_models, ours_models)
    if not pairs:
        sys.exit("no model is in both catalogs")
    root = keep or Path(tempfile.mkdtemp(prefix="vec-inf-sbs-"))
    root.mkdir(parents=True, exist_ok=True)
    box = Sandbox(root.resolve(), vdir)
    results = []
    for name, oid in pairs:
        res = resources(vec_models[name])
        results.append(
            {
                "name": name,
                "oid": oid,
                "res": res,
                "vec": run_vec_inf(box, name),
                "ours": run_ours(box, name, oid, res),
            }
        )
    return render(vec_models, ours_models, pairs, results)


def section(text: str) -> str:
    if BEGIN not in text or END not in text:
        sys.exit(f"no generated section ({BEGIN} ... {END})")
    return text[text.index(BEGIN) : text.index(END) + len(END)] + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", type=Path, help="replace the generated section of this file")
    ap.add_argument("--check", type=Path, help="exit 1 when this file's generated section is stale")
    ap.add_argument("--keep", type=Path, help="render into this directory (kept) instead of a temporary one")
    a = ap.parse_args()
    md = generate(a.keep)
    if a.write:
        text = a.write.read_text()
        old = section(text)
        a.write.write_text(text.replace(old, md))
        print(f"wrote the generated section of {a.write}", file=sys.stderr)
    elif a.check:
        if section(a.check.read_text()) != md:
            sys.stdout.write(md)
            print(f"\n{a.check}: the generated section is stale (the current one is above)", file=sys.stderr)
            sys.exit(1)
        print(f"{a.check}: the generated section is current", file=sys.stderr)
    else:
        sys.stdout.write(md)


if __name__ == "__main__":
    os.environ.pop("VEC_INF_CONFIG_DIR", None)
    os.environ.pop("VEC_INF_MODEL_CONFIG", None)
    main()
