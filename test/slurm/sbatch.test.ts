import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { expectShellcheckClean } from "../shellcheck";
import { buildPlan } from "../../components/planner";
import { resolveValue } from "../../components/plan/values";
import { generatedFiles } from "../../components/host/processes";
import { islandDir, renderIslandScript } from "../../components/slurm/sbatch";
import { shq, shellWord, shellWords } from "../../components/shell";
import { engineNamed } from "../../components/plan/engines";
import { checkArgv } from "../../components/upstream/check";
import { load, plan as planOf, SLURM, SLURM_STACKS, stackText } from "../helpers";

const scripts = SLURM_STACKS.flatMap((name) => {
  const plan = buildPlan(load(stackText(name)), name);
  return plan.islands.map((island) => ({
    name: `${name}/${island.name}`,
    plan,
    island,
    ...renderIslandScript(plan, island),
  }));
});

function bash(args: string[], input?: string, env?: NodeJS.ProcessEnv) {
  return spawnSync("bash", args, { input, encoding: "utf8", env: env ?? process.env, timeout: 20_000 });
}

describe.each(scripts.map((s) => [s.name, s] as const))("%s", (_, s) => {
  it.each([
    ["script", s.script],
    ["launch body", s.launchBody],
    ["cleanup body", s.cleanupBody],
  ])("%s passes bash -n and shellcheck", (_, text) => {
    expect(bash(["-n"], text).status).toBe(0);
    expectShellcheckClean(text);
  });

  it("uses only sbatch and srun options the SLURM 22.05 manifest has", () => {
    const directives = [...s.script.matchAll(/^#SBATCH (.+)$/gm)].map((m) => m[1]);
    expect(directives.length).toBeGreaterThan(3);
    expect(checkArgv("sbatch", directives)).toEqual([]);
    for (const m of s.script.matchAll(/^srun (.+) bash -s <</gm))
      expect(checkArgv("srun", m[1].split(" "))).toEqual([]);
  });

  it("starts each vLLM engine with an API behind its restart gate when the keeper closed it, with a --middleware vLLM's manifest takes; no other process", () => {
    for (const e of s.island.engines) {
      const start = new RegExp(`^ *fleet_start_n${e.node}_${e.id}\\(\\) \\{ .*$`, "m").exec(s.launchBody)?.[0];
      expect(start, e.id).toBeDefined();
      const engine = engineNamed(e.engine);
      const flags = e.port !== undefined ? engine.restartGate : undefined;
      expect(flags !== undefined, e.id).toBe(e.engine !== "sglang" && e.port !== undefined);
      expect(start!.includes(`if [ -e "$NODE_DIR"/${e.id}.gate ]; then gate=(`), e.id).toBe(flags !== undefined);
      expect(s.launchBody.includes(`FLEET_GATE[n${e.node}_${e.id}]="$NODE_DIR"/${e.id}.gate`), e.id).toBe(
        flags !== undefined,
      );
      if (flags) {
        expect(start).toContain(`then gate=(${shellWords(flags, (r) => String(r))});`);
        const argv = [...e.argv, ...flags].map((a) => resolveValue(a, () => "10.0.0.1"));
        expect(checkArgv(engine.manifest, engine.manifestArgs(argv).map(String))).toEqual([]);
      }
    }
  });

  it("starts each SGLang engine with an API on the record's folder when the keeper wrote its resume file, keeping the served name and tokenizer, with flags SGLang's manifest takes; no other process", () => {
    for (const e of s.island.engines) {
      const start = new RegExp(`^ *fleet_start_n${e.node}_${e.id}\\(\\) \\{ .*$`, "m").exec(s.launchBody)?.[0];
      const onRecord = e.port !== undefined ? engineNamed(e.engine).startOnRecord : undefined;
      expect(onRecord !== undefined, e.id).toBe(e.engine === "sglang" && e.port !== undefined);
      const file = `"$NODE_DIR"/${e.id}.resume`;
      expect(start!.includes(`resume=(); if [ -e ${file} ]; then mapfile -t resume < ${file}`), e.id).toBe(!!onRecord);
      expect(start!.endsWith(`"\${resume[@]}" ) >> "$NODE_DIR/${e.id}.log" 2>&1 & }`), e.id).toBe(!!onRecord);
      expect(
        s.launchBody.includes(
          `FLEET_RESUME[n${e.node}_${e.id}]='/update_weights_from_disk model_path --model-path --weight-version '${file}`,
        ),
        e.id,
      ).toBe(!!onRecord);
      if (onRecord) {
        const model = String(e.argv[e.argv.indexOf("--model-path") + 1]);
        expect(start).toContain(`resume+=(--served-model-name ${model} --tokenizer-path ${model}); fi`);
        const argv = [...e.argv, ...onRecord.keep(e.argv), "--model-path", "/ckpt/step 9", "--weight-version", "v9"];
        const resolved = argv.map((a) => resolveValue(a, () => "10.0.0.1"));
        const sglang = engineNamed(e.engine);
        expect(checkArgv(sglang.manifest, sglang.manifestArgs(resolved).map(String))).toEqual([]);
      }
    }
  });

  it("runs one task per node with --kill-on-bad-exit, and ends the node on the first dead process", () => {
    expect(s.script).toMatch(
      /srun --nodes=\d+ --ntasks=\d+ --ntasks-per-node=1 --kill-on-bad-exit=1 bash -s <<'FLEET_LAUNCH'/,
    );
    expect(s.launchBody).toContain("wait -n");
    expect(s.script).toContain(`--nodes=${s.island.nodes.length}`);
  });
});

describe("generated files", () => {
  it.each(["llm-d", "kv-offload-mooncake"])("%s: the launch body writes exactly what plan --out shows", (name) => {
    const plan = buildPlan(load(stackText(name)), name);
    const island = plan.islands[0];
    const files = generatedFiles(island);
    expect(Object.keys(files).length).toBeGreaterThan(0);
    const { launchBody } = renderIslandScript(plan, island);
    for (const [file, text] of Object.entries(files))
      expect(launchBody).toContain(`fleet_write "$NODE_DIR/${file}" ${shq(text)}`);
  });
});

describe("generated llm-d files, read by the stand-in epp and envoy", () => {
  const standins = path.join(__dirname, "..", "fixtures", "standins", "bin");
  const llmdPd = stackText("disaggregated-small").replace(
    "[slurm]",
    '[inference.deployment.router]\ntype = "llm-d"\n[slurm]',
  );
  it.each([
    ["llm-d", stackText("llm-d")],
    ["llm-d in P/D mode", llmdPd],
  ])("%s: epp and envoy accept their argv and config files (check-only mode)", (_, text) => {
    const plan = buildPlan(load(text), "t");
    const island = plan.islands[0];
    const r = island.router;
    if (r?.kind !== "llm-d") throw new Error("expected llm-d");
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "llmd-"));
    const addr = (k: number) => `10.9.0.${k + 1}`;
    const names: Record<string, string> = {
      "epp-config": "epp.yaml",
      "epp-endpoints": "endpoints.yaml",
      "envoy-config": "envoy.yaml",
    };
    for (const [file, content] of Object.entries(generatedFiles(island))) {
      const filled = content
        .replace(/__FLEET_NODE_ADDR_(\d+)__/g, (_m, k) => addr(Number(k)))
        .replaceAll("__FLEET_NODE_DIR__", tmp);
      expect(filled, "no YAML anchors: envoy and epp configs are written out in full").not.toMatch(/(^|\s)[&*]a\d+\b/m);
      fs.writeFileSync(path.join(tmp, file), filled);
    }
    const resolve = (v: any) =>
      resolveValue(v, (ref) =>
        ref.ref === "node"
          ? addr(ref.node)
          : ref.ref === "self"
            ? addr(r.node)
            : ref.ref === "file"
              ? path.join(tmp, names[ref.file])
              : "",
      );
    for (const argv of [r.epp.argv, r.envoy.argv]) {
      const [prog, ...args] = argv.map(resolve);
      const run = spawnSync(path.join(standins, prog), args, {
        encoding: "utf8",
        env: { ...process.env, STANDIN_CHECK_ONLY: "1" },
      });
      expect(run.status, `${prog}: ${run.stderr}`).toBe(0);
      expect(run.stdout + run.stderr).toContain("argv OK");
    }
  });
});

describe("shell quoting", () => {
  const payloads = [
    "plain",
    "it's",
    'say "hi"',
    "$(touch /tmp/pwned)",
    "`id`",
    "a;b && c || d",
    "*",
    "~root",
    "line1\nline2",
    "tab\there",
    "back\\slash",
    "{a,b}",
    "",
    "$HOME",
    "!event",
    "-n",
  ];
  it.each(payloads)("bash reads %j back unchanged", (payload) => {
    const r = bash(["-c", `printf '%s' ${shq(payload)}`]);
    expect(r.stdout).toBe(payload);
  });

  it("splices run-time references as double-quoted expansions", () => {
    const word = shellWord({ parts: ["http://", { ref: "node", node: 2 }, ":8100"] }, (r) =>
      r.ref === "node" ? `\${A[${r.node}]}` : "x",
    );
    const r = bash(["-c", `A=(h0 h1 'h 2'); printf '%s' ${word}`]);
    expect(r.stdout).toBe("http://h 2:8100");
  });
});

describe("the launch body, run by real bash", () => {
  /**
   * Stand-ins that record their argv (NUL-separated) and env, then stay up: vllm briefly, so it is
   * the process that exits first; the router long enough never to be killed before it recorded.
   */
  function fakeBin(dir: string, names: string[]) {
    for (const name of names) {
      const file = path.join(dir, name);
      const stay = name === "vllm" ? "0.3" : "10";
      fs.writeFileSync(
        file,
        `#!/bin/bash\nprintf '%s\\0' "$@" > "$RECORD_DIR/${name}.$$.argv"\nenv > "$RECORD_DIR/${name}.$$.env"\nsleep ${stay}\nexit 3\n`,
        { mode: 0o755 },
      );
    }
  }

  function runNode(text: string, node: number, addrs: string[]) {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "launch-"));
    const bin = path.join(tmp, "bin");
    const rec = path.join(tmp, "rec");
    fs.mkdirSync(bin);
    fs.mkdirSync(rec);
    fakeBin(bin, ["vllm", "vllm-router"]);
    const r = bash(["-s"], text, {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      RECORD_DIR: rec,
      FLEET_NODE_ADDRS: addrs.join(" "),
      SLURM_PROCID: String(node),
      FLEET_ATTEMPT_DIR: path.join(tmp, "attempt"),
      CUDA_VISIBLE_DEVICES: "0,1,2,3,4,5,6,7",
      HOME: tmp,
    });
    const read = (prog: string) =>
      fs
        .readdirSync(rec)
        .filter((f) => f.startsWith(prog + ".") && f.endsWith(".argv"))
        .map((f) => ({
          argv: fs.readFileSync(path.join(rec, f), "utf8").split("\0").slice(0, -1),
          env: fs.readFileSync(path.join(rec, f.replace(".argv", ".env")), "utf8"),
        }));
    return { r, read, tmp };
  }

  it("starts exactly the planned processes with the planned argv and env; with max_restarts = 0 the first exit fails the node", () => {
    const text = `${stackText("multi-replica").replace(
      'model = "PrimeIntellect/INTELLECT-3"',
      `model = "it's $(touch /tmp/x) \\"m\\""`,
    )}\n[inference.restart]\nmax_restarts = 0\n`;
    const plan = planOf(text);
    const island = plan.islands[0];
    const { launchBody } = renderIslandScript(plan, island);
    const addrs = ["10.9.0.1", "10.9.0.2"];
    const { r, read, tmp } = runNode(launchBody, 0, addrs);
    expect(r.status).toBe(3); // the engine exited with 3, so the node fails with its status and would end the job
    // The node names the process that ended it, and leaves its exit marker for `fleet status`.
    expect(r.stderr).toMatch(
      /node 0: i0-replica0-n0 exited \(status 3; log: \S+\/node_0\/i0-replica0-n0\.log\); restart\.max_restarts = 0: no restart/,
    );
    expect(fs.readFileSync(path.join(tmp, "attempt", "node_0", "i0-replica0-n0.exit"), "utf8")).toBe("3\n");
    expect(fs.existsSync(path.join(tmp, "attempt", "node_0", "router.exit"))).toBe(false);
    const resolve = (v: any) =>
      resolveValue(v, (ref) => (ref.ref === "node" ? addrs[ref.node] : ref.ref === "self" ? addrs[0] : "?"));
    const [engine] = read("vllm");
    expect(engine.argv).toEqual(island.engines[0].argv.slice(1).map(resolve));
    expect(engine.argv[1]).toBe(`it's $(touch /tmp/x) "m"`);
    expect(engine.env).toContain("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n");
    // The router starts at once, with no workers, and is told each one beside it as it answers /health.
    expect(launchBody).toContain(
      '( router_pid=$BASHPID; { fleet_add_workers "$router_pid" http://"${SELF_ADDR}":8000 4200 /weight_info http://"${NODE_ADDR[0]}":8100 http://"${NODE_ADDR[1]}":8100; fleet_follow_workers "$router_pid" http://"${SELF_ADDR}":8000 query /weight_info i0-replica0:0:http://"${NODE_ADDR[0]}":8100 i0-replica1:1:http://"${NODE_ADDR[1]}":8100; } & exec vllm-router --policy',
    );
    expect(launchBody).not.toContain("--worker-urls");
    expect(fs.existsSync(path.join(tmp, "attempt", "node_0", "i0-replica0-n0.log"))).toBe(true);
  });

  it("fleet_wait_healthy returns once every worker answers /health with 200 (at a revived island's first start, once it serves the record's version), and gives up at its deadline", async () => {
    const { launchBody } = renderIslandScript(
      planOf(stackText("multi-replica")),
      planOf(stackText("multi-replica")).islands[0],
    );
    const fnText = (name: string) =>
      launchBody.slice(
        launchBody.indexOf(`${name}() {`),
        launchBody.indexOf("\n}\n", launchBody.indexOf(`${name}() {`)) + 3,
      );
    const fn = [
      "fleet_wait_healthy",
      "fleet_weights_version",
      "fleet_record_field",
      "fleet_weight_version",
      "fleet_unversioned",
      "fleet_curl",
    ]
      .map(fnText)
      .join("\n");
    // A worker that starts answering 200 after 0.6 s, and serves weight version v2 after 1.5 s, in
    // its own process (bash blocks this one). Its clock starts after `spawned`, and before `t0`: lower
    // bounds are measured from the spawn (a slow start would otherwise eat into them), upper ones from t0.
    const spawned = Date.now();
    const server = spawn(process.execPath, [
      "-e",
      `const h=require("http");const t=Date.now();const s=h.createServer((q,r)=>{const up=Date.now()-t;if(q.url==="/weight_info")return r.end(JSON.stringify({weight_version:up>1500?"v2":"default"}));r.statusCode=q.url==="/health"&&up>600?200:503;r.end()});s.listen(0,"127.0.0.1",()=>console.log(s.address().port))`,
    ]);
    const island = fs.mkdtempSync(path.join(os.tmpdir(), "wait-healthy-"));
    const attempt = path.join(island, "attempt");
    fs.mkdirSync(attempt);
    try {
      const port = await new Promise<string>((ok) => server.stdout.once("data", (d: Buffer) => ok(String(d).trim())));
      const wait = (args: string, env = "") =>
        bash(["-c", `FLEET_ATTEMPT_DIR=${attempt}; ${env}\n${fn}\nfleet_wait_healthy ${args} && echo done`]);
      const t0 = Date.now();
      // Served before (a router the keeper restarts): /health is enough.
      fs.writeFileSync(path.join(attempt, "served"), "");
      expect(wait(`30 /weight_info 127.0.0.1:${port}`).stdout).toBe("done\n");
      expect(Date.now() - spawned).toBeGreaterThanOrEqual(600);
      expect(Date.now() - t0).toBeLessThan(1400);
      // The first start of a revived island: it waits for the record's version too.
      fs.rmSync(path.join(attempt, "served"));
      const record = path.join(island, "weights");
      fs.writeFileSync(record, "version v2\nmodel m\n");
      const up = wait(`30 /weight_info 127.0.0.1:${port}`, `FLEET_WEIGHTS=${record}`);
      expect(up.stdout, up.stderr).toBe("done\n");
      expect(Date.now() - spawned).toBeGreaterThanOrEqual(1500);
      expect(Date.now() - t0).toBeLessThan(6000);
      // Nothing listens on a closed port: it returns at its deadline (bash's whole seconds: within 2 s).
      const t1 = Date.now();
      expect(wait("1 /weight_info 127.0.0.1:1; echo back").stdout).toBe("back\ndone\n");
      expect(Date.now() - t1).toBeLessThan(3000);
    } finally {
      server.kill();
      fs.rmSync(island, { recursive: true, force: true });
    }
  });

  it("fleet_add_workers tells the router (the stand-in) each worker once it answers /health, and stops with the router", async () => {
    const { launchBody } = renderIslandScript(
      planOf(stackText("multi-replica")),
      planOf(stackText("multi-replica")).islands[0],
    );
    const fn = launchBody.slice(
      launchBody.indexOf("fleet_add_workers() {"),
      launchBody.indexOf("\n}\n", launchBody.indexOf("fleet_add_workers() {")) + 3,
    );
    const listen = (code: string) => {
      const child = spawn(process.execPath, ["-e", code]);
      const port = new Promise<string>((ok) => child.stdout.once("data", (d: Buffer) => ok(String(d).trim())));
      return { child, port };
    };
    // A worker that answers /health 200 after 0.6 s, and a port that is free for the router.
    const worker = listen(
      `const h=require("http");const t=Date.now();const s=h.createServer((q,r)=>{r.statusCode=q.url==="/health"&&Date.now()-t>600?200:503;r.end()});s.listen(0,"127.0.0.1",()=>console.log(s.address().port))`,
    );
    const free = listen(
      `const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})`,
    );
    const [workerPort, routerPort] = [await worker.port, await free.port];
    const router = spawn(path.join(__dirname, "../fixtures/standins/bin/vllm-router"), [
      ...["--host", "127.0.0.1", "--port", routerPort, "--prometheus-port", "0", "--policy", "round_robin"],
    ]);
    try {
      const workerUrl = `http://127.0.0.1:${workerPort}`;
      const call = (pid: number) =>
        new Promise<{ stdout: string; status: number | null }>((ok) => {
          const b = spawn("bash", [
            "-c",
            // No weights record (the helper that reads it, stubbed): told once it answers /health.
            `${fn}\nfleet_weights_version() { :; }\nNODE_INDEX=0; fleet_add_workers ${pid} http://127.0.0.1:${routerPort} 30 /weight_info ${workerUrl}`,
          ]);
          let stdout = "";
          b.stdout.on("data", (d: Buffer) => (stdout += String(d)));
          b.on("close", (status) => ok({ stdout, status }));
        });
      const told = await call(router.pid!);
      expect(told.status).toBe(0);
      expect(told.stdout).toBe(
        `[fleet] router told ${workerUrl}: Successfully added worker: ${workerUrl} (HTTP 200)\n`,
      );
      const listed = await fetch(`http://127.0.0.1:${routerPort}/list_workers`).then((r) => r.json());
      expect(listed).toEqual({ urls: [workerUrl] });
      // With its router gone it stops at once, telling nothing.
      const gone = await call(2 ** 22 + 1);
      expect(gone).toEqual({ stdout: "", status: 0 });
    } finally {
      for (const c of [worker.child, free.child, router]) c.kill();
    }
  });

  it("maps planned GPU indices onto the devices SLURM assigned", () => {
    const plan = planOf(`[model]\nname = "m"\n[parallel]\ntp = 2\n[deployment.router]\ntype = "none"${SLURM}`);
    const { launchBody } = renderIslandScript(plan, plan.islands[0]);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "gpus-"));
    const bin = path.join(tmp, "bin");
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, "vllm"), `#!/bin/bash\necho "$CUDA_VISIBLE_DEVICES" > "$RECORD"\n`, {
      mode: 0o755,
    });
    bash(["-s"], launchBody, {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      RECORD: path.join(tmp, "gpus"),
      FLEET_NODE_ADDRS: "10.0.0.1",
      SLURM_PROCID: "0",
      FLEET_ATTEMPT_DIR: tmp,
      CUDA_VISIBLE_DEVICES: "4,5,6,7",
      HOME: tmp,
    });
    expect(fs.readFileSync(path.join(tmp, "gpus"), "utf8").trim()).toBe("4,5");
  });
});

describe("the compile and model cache (issue 32)", () => {
  /** Runs node 0 of single-node's launch body with a vllm whose python3 reports `version` (none: no vllm package). */
  function start(text: string, home: string, version: string | undefined) {
    const plan = planOf(text);
    const { launchBody } = renderIslandScript(plan, plan.islands[0]);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cache-"));
    const bin = path.join(tmp, "bin");
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, "vllm"), `#!/bin/bash\nenv > "$RECORD"\n`, { mode: 0o755 });
    // The router starts beside the engine at once: it outlives the engine, whose exit ends the node.
    fs.writeFileSync(path.join(bin, "vllm-router"), `#!/bin/bash\nexec sleep 30\n`, { mode: 0o755 });
    // The launcher's python3: asked for the package's version by importlib.metadata, never `import vllm`.
    fs.writeFileSync(
      path.join(bin, "python3"),
      `#!/bin/bash\n[[ $2 == *importlib.metadata* && $3 == vllm ]] || exit 9\n${version === undefined ? "exit 1" : `echo '${version}'`}\n`,
      { mode: 0o755 },
    );
    const r = bash(["-s"], launchBody, {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      RECORD: path.join(tmp, "env"),
      FLEET_NODE_ADDRS: "10.0.0.1",
      SLURM_PROCID: "0",
      FLEET_ATTEMPT_DIR: path.join(tmp, "attempt"),
      CUDA_VISIBLE_DEVICES: "0",
      HOME: home,
    });
    const env = fs.readFileSync(path.join(tmp, "env"), "utf8");
    const get = (k: string) => new RegExp(`^${k}=(.*)$`, "m").exec(env)?.[1];
    return { r, cacheRoot: get("VLLM_CACHE_ROOT"), hfHome: get("HF_HOME"), tmp };
  }
  // The engine stand-in exits at once: fail-fast ends the node with it.
  const text = `${stackText("single-node").replace(/^output_dir = .*$/m, "")}\n[restart]\nmax_restarts = 0\n`;

  it("keys the folder by model, engine version and layout under vllm-fleet/cache, and says when it is warm", () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "home-"));
    const first = start(text, home, "0.32.0+cpu");
    const dir = `${home}/vllm-fleet/cache/${planOf(text).islands[0].cache.model}/vllm-0.32.0+cpu/${planOf(text).islands[0].cache.layout}`;
    expect(first.cacheRoot).toBe(`${dir}/vllm`);
    expect(first.hfHome).toBe(`${home}/vllm-fleet/cache/huggingface`);
    expect(first.r.stdout).toContain(`[fleet] compile cache: ${dir} (empty)`);
    fs.mkdirSync(`${dir}/vllm/torch_compile_cache/x`, { recursive: true });
    fs.writeFileSync(`${dir}/vllm/torch_compile_cache/x/model`, "");
    const second = start(text, home, "0.32.0+cpu");
    expect(second.cacheRoot).toBe(`${dir}/vllm`);
    expect(second.r.stdout).toContain(`[fleet] compile cache: ${dir} (warm: 1 entries)`);
    // Another engine version never reads it.
    const other = start(text, home, "0.33.0");
    expect(other.cacheRoot).toBe(`${dir.replace("0.32.0+cpu", "0.33.0")}/vllm`);
    expect(other.r.stdout).toContain("(empty)");
  });

  it("without a version on the node, the run keeps its own folder; slurm.cache_dir moves the base", () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "home-"));
    const none = start(text, home, undefined);
    expect(none.cacheRoot).toBe(`${none.tmp}/attempt/node_0/cache/vllm`);
    expect(none.r.stdout).toContain("no vllm version found here");
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "base-"));
    const set = start(text.replace("[slurm]", `[slurm]\ncache_dir = "${base}"`), home, "1.0");
    expect(set.cacheRoot?.startsWith(`${base}/`)).toBe(true);
    expect(set.hfHome).toBe(`${base}/huggingface`);
  });
});

describe("the fleet's folder on the cluster", () => {
  it("by default carries the Pulumi stack, so two stacks of one file never share it", () => {
    const text = stackText("single-node")
      .replace(/^output_dir = .*$/m, "")
      .replace(/^job_name = .*$/m, 'job_name = "rl"');
    const dirs = ["dev", "prod"].map((stack) => {
      const p = buildPlan(load(text), stack);
      return islandDir(p, p.islands[0]);
    });
    expect(dirs).toEqual(["vllm-fleet/rl-dev/island-0", "vllm-fleet/rl-prod/island-0"]);
    // The same name once when job_name is the stack's name; an explicit output_dir as written.
    const same = buildPlan(load(text.replace('job_name = "rl"', 'job_name = "single-node"')), "single-node");
    expect(islandDir(same, same.islands[0])).toBe("vllm-fleet/single-node/island-0");
    const set = buildPlan(load(`output_dir = "/scratch/fleet/"\n${text}`), "dev");
    expect(islandDir(set, set.islands[0])).toBe("/scratch/fleet/island-0");
  });
});
