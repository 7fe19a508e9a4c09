/**
 * The local target end to end (issue 27), on this machine with no SLURM: the exact create and
 * delete commands the Pulumi program hands local.Command, run as the provider runs them. Every
 * shape that fits one machine with stand-in engines (test/fixtures/standins: they check their argv
 * against the upstream manifests and serve the HTTP surface, no GPU kernels). Two real vLLM CPU
 * engines behind the real vllm-router from the pinned venv run in restart-drills.e2e.test.ts, which
 * checks what a trainer asks of them before its drills (one real start for both). Every test name
 * says which parts are real.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { drainRpcs } from "../program-harness";
import { PAYLOADS } from "../security/payloads";
import { ROOT, STANDINS } from "./program-capture";
import {
  captureLocal,
  create,
  destroy,
  freshHome,
  killLeftovers,
  leftUnder,
  type LocalCommand,
  processesUnder,
  runLocal,
  running,
} from "./local-target";

afterEach(drainRpcs);
afterEach(killLeftovers);

const timings: Record<string, { createMs: number; deleteMs: number }> = {};

/** Starts a create and returns once its run has processes: the create's outcome, and its `timeout`'s pid. */
async function createUntilStarted(
  c: LocalCommand,
  home: string,
): Promise<{ done: ReturnType<typeof runLocal>; timeout: number }> {
  let shell = 0;
  const done = runLocal(c.create, { home, stdin: c.stdin, env: c.environment, onStart: (pid) => (shell = pid) });
  const started = Date.now();
  while (!processesUnder(home).length && Date.now() - started < 20_000) await new Promise((r) => setTimeout(r, 100));
  expect(processesUnder(home).length, "the run started").toBeGreaterThan(0);
  return { done, timeout: timeoutOf(shell) };
}

/** The `timeout` that bounds a create: `/bin/sh -c` itself when it exec'd it, else its child. */
function timeoutOf(shell: number): number {
  const comm = (pid: number | string) => fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  if (comm(shell) === "timeout") return shell;
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === shell && comm(pid) === "timeout")
        return Number(pid);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no timeout under /bin/sh ${shell}`);
}

/** A local stack file in vllm-fleet's standalone layout: `body` plus the [local] table with stand-ins. */
function stackWith(body: string, local = `gpus = [0, 1, 2, 3]\nready_timeout = 90`, binDir = STANDINS): string {
  return `${body.trim()}\n\n[local]\n${local}\n\n[local.launcher]\nbin_dir = ${JSON.stringify(binDir)}\n`;
}

const SHAPES: Record<string, string> = {
  "single-node (tp 2)": `[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 2\n[deployment]\ngpus_per_node = 2`,
  "single-node dp 2 + ep": `enable_expert_parallel = true\n[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 1\ndp = 2\n[deployment]\ngpus_per_node = 2`,
  "multi-replica (2 replicas behind vllm-router)": `[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 1\n[deployment]\ntype = "multi_node"\nnum_nodes = 2\ngpus_per_node = 1`,
  "disaggregated (1 prefill + 1 decode, NIXL)": `[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 1\n[deployment]\ntype = "disaggregated"\nnum_prefill_nodes = 1\nnum_decode_nodes = 1\ngpus_per_node = 1`,
  "kv-offload native": `[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 1\n[deployment]\ngpus_per_node = 1\n[kv_cache_offload]\ntype = "native"\n[kv_cache_offload.cpu]\nnum_bytes = 1_000_000_000`,
  "kv-offload mooncake (one node)": `[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 1\n[deployment]\ngpus_per_node = 1\n[kv_cache_offload]\ntype = "mooncake"\n[kv_cache_offload.cpu]\nnum_bytes = 1_000_000_000`,
  "llm-d (2 replicas behind Envoy + EPP)": `[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 1\n[deployment]\ntype = "multi_node"\nnum_nodes = 2\ngpus_per_node = 1\n[deployment.router]\ntype = "llm-d"`,
};

/** create → every URL serves → a second create adopts → delete → nothing left → delete again succeeds. */
async function upAndDown(
  name: string,
  c: LocalCommand,
  home: string,
  body?: (island: ReturnType<typeof running>) => Promise<void>,
  apiKey?: string,
) {
  const first = await create(c, home);
  try {
    const island = running(first, `${name} create`);
    expect(island.adopted).toBe(false);
    for (const url of island.adminUrls) expect((await fetch(`${new URL(url).origin}/health`)).status).toBe(200);
    if (island.routerUrl) {
      const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
      const models = (await (await fetch(`${island.routerUrl}/models`, { headers })).json()) as {
        data: { id: string }[];
      };
      expect(models.data.map((m) => m.id)).toContain(island.model);
    }
    await body?.(island);
    const again = running(await create(c, home), `${name} second create`);
    expect(again).toMatchObject({ adopted: true, jobId: island.jobId });
    timings[name] = { createMs: first.ms, deleteMs: 0 };
  } finally {
    const del = await destroy(c, home);
    expect(del.code, del.stderr).toBe(0);
    if (timings[name]) timings[name].deleteMs = del.ms;
  }
  expect(await leftUnder(home)).toEqual([]);
  const twice = await destroy(c, home);
  expect(twice.code, twice.stderr).toBe(0);
}

describe("local target end to end with stand-in engines and routers (no SLURM, no root)", () => {
  afterAll(() => console.log(`local target timings (ms):\n${JSON.stringify(timings, null, 1)}`));

  for (const [shape, body] of Object.entries(SHAPES)) {
    it(`${shape}: create serves every URL on this machine, adopts on a second create, delete leaves no process`, async () => {
      const home = freshHome(shape.replace(/[^a-z0-9]+/gi, "-"));
      const { commands, planned } = await captureLocal(stackWith(body));
      expect(planned.target).toBe("local");
      expect(commands).toHaveLength(1);
      await upAndDown(shape, commands[0], home, async (island) => {
        expect(island.roles).toEqual(planned.islands[0].roles);
        // Every engine has its own GPUs: the plan's slices, one after the other on this machine.
        const gpus = processesUnder(home)
          .map((p) => Number(p.split(" ")[0]))
          .flatMap((pid) => {
            let env: string[];
            try {
              env = fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
            } catch {
              return []; // gone meanwhile: the activity monitor's curl lives for one scrape
            }
            const cvd = env.find((e) => e.startsWith("CUDA_VISIBLE_DEVICES="));
            return cvd ? [cvd.slice("CUDA_VISIBLE_DEVICES=".length)] : [];
          });
        const used = gpus.flatMap((g) => g.split(",")).filter(Boolean);
        expect(new Set(used).size, `GPU slices: ${gpus.join(" | ")}`).toBe(used.length);
      });
    });
  }

  it("credentials: the API key and HF token reach the engines as 0600 files and their environment, never a command line; probes authenticate", async () => {
    const home = freshHome("credentials");
    const key = "sk-local $(touch /tmp/pwned) 'quote\" `id` \\n";
    const { commands } = await captureLocal(stackWith(SHAPES["multi-replica (2 replicas behind vllm-router)"]), {
      secrets: { apiKey: key, hfToken: "hf_secret_local" },
    });
    const c = commands[0];
    expect(c.stdin).not.toContain(key);
    expect(c.create + c.delete).not.toContain(key);
    await upAndDown(
      "credentials",
      c,
      home,
      async (island) => {
        const dir = path.join(home, "vllm-fleet", "local-dev", "island-0", "secrets");
        expect(fs.statSync(path.join(dir, "api_key")).mode & 0o777).toBe(0o600);
        expect(fs.readFileSync(path.join(dir, "api_key"), "utf8")).toBe(key);
        for (const p of processesUnder(home)) expect(p).not.toContain(key);
        const url = island.adminUrls[0];
        expect((await fetch(`${url}/models`)).status).toBe(401);
        expect((await fetch(`${url}/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
      },
      key,
    );
    expect(fs.existsSync(path.join(home, "vllm-fleet", "local-dev", "island-0", "secrets"))).toBe(false);
    expect(fs.existsSync("/tmp/pwned")).toBe(false);
  });

  it("drill: an engine that exits at start fails the create, naming it with its log tail, and leaves nothing running", async () => {
    const home = freshHome("exit-at-start");
    const { commands } = await captureLocal(
      stackWith(`${SHAPES["multi-replica (2 replicas behind vllm-router)"]}\n[env_vars]\nSTANDIN_EXIT_AT_START = "1"`),
    );
    const run = await create(commands[0], home);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/i0-replica\d-n0 exited/);
    expect(run.stderr).toContain("simulated start-up failure");
    expect(await leftUnder(home)).toEqual([]);
    expect(fs.existsSync(path.join(home, "vllm-fleet", "local-dev", "island-0", "run"))).toBe(false);
    expect((await destroy(commands[0], home)).code).toBe(0);
  });

  it("drill: a create stopped by SIGTERM (its bound, or an interrupted pulumi up) stops what it started; the next create starts afresh and serves", async () => {
    const home = freshHome("interrupted");
    const { commands } = await captureLocal(stackWith(SHAPES["multi-replica (2 replicas behind vllm-router)"]), {
      overrides: { "env_vars.STANDIN_STARTUP_DELAY_MS": "4000" },
    });
    const c = commands[0];
    const { done: stopped, timeout } = await createUntilStarted(c, home);
    // What the create's bound does when it runs out: `timeout` signals its own process group.
    process.kill(timeout, "SIGTERM");
    const first = await stopped;
    expect(first.code).not.toBe(0);
    expect(await leftUnder(home)).toEqual([]);
    await upAndDown("interrupted, then re-run", c, home);
  });

  it("drill: a create killed outright (SIGKILL) leaves its run behind, and the next create adopts it instead of starting a second one", async () => {
    const home = freshHome("killed");
    const { commands } = await captureLocal(stackWith(SHAPES["single-node (tp 2)"]), {
      overrides: { "env_vars.STANDIN_STARTUP_DELAY_MS": "3000" },
    });
    const c = commands[0];
    const { done: killed, timeout } = await createUntilStarted(c, home);
    // timeout, the create and its probes die at once; the supervisor has its own session.
    process.kill(-timeout, "SIGKILL");
    await killed;
    const [pid] = fs.readFileSync(path.join(home, "vllm-fleet", "local-dev", "island-0", "run"), "utf8").split(" ");
    expect(processesUnder(home).some((p) => p.startsWith(`${pid} bash `))).toBe(true);
    const again = running(await create(c, home), "the create after the kill");
    expect(again.adopted).toBe(true);
    expect(again.jobId).toBe(pid);
    expect((await destroy(c, home)).code).toBe(0);
    expect(await leftUnder(home)).toEqual([]);
  });

  it("fleet status, endpoints, logs and metrics on a local fleet: READY from its run record and probes, an engine killed restarts and is counted, SHUTDOWN after delete", async () => {
    const home = freshHome("fleet-cli");
    const text = stackWith(SHAPES["multi-replica (2 replicas behind vllm-router)"]);
    const { commands } = await captureLocal(text);
    const c = commands[0];
    // The CLI finds the fleet as `pulumi up` deployed it: the stack file and the Pulumi stack's name.
    const dir = fs.mkdtempSync(path.join(home, "project-"));
    fs.writeFileSync(path.join(dir, "stack.toml"), text);
    fs.writeFileSync(path.join(dir, "Pulumi.dev.yaml"), `config:\n  vllm-fleet:stackFile: ./stack.toml\n`);
    const fleet = async (...args: string[]) => {
      const r = await runLocal(
        `node ${JSON.stringify(path.join(ROOT, "dist", "bin", "fleet.js"))} ${args.map((a) => JSON.stringify(a)).join(" ")}`,
        { home },
      );
      return { ...r, json: () => JSON.parse(r.stdout) };
    };
    const cfg = ["--pulumi-config", path.join(dir, "Pulumi.dev.yaml"), path.join(dir, "stack.toml")];
    const before = await fleet("status", "--json", ...cfg);
    expect(before.code, before.stderr).toBe(0);
    expect(before.json()).toMatchObject({ status: "SHUTDOWN", target: "local" });

    const island = running(await create(c, home), "create");
    const ready = (await fleet("status", "--json", ...cfg)).json();
    expect(ready.status).toBe("READY");
    expect(ready.islands[0]).toMatchObject({ jobId: island.jobId, schedulerState: "RUNNING" });
    const endpoints = await fleet("endpoints", "--json", ...cfg);
    expect(endpoints.code, endpoints.stderr).toBe(0);
    expect(endpoints.json().islands[0]).toMatchObject({ routerUrl: island.routerUrl, adminUrls: island.adminUrls });
    const logs = await fleet("logs", "--job", "-n", "5", ...cfg);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain("==> island 0: i0-replica1-n0");
    expect(logs.stdout).toContain("TEST STAND-IN vllm serve");
    expect(logs.stdout).toContain("supervisor output");
    const metrics = await fleet("metrics", "--json", "--interval", "0.2", ...cfg);
    expect(metrics.code, metrics.stderr).toBe(0);
    expect(metrics.json().engines).toHaveLength(2);

    // One engine dies: the keeper starts it again; once it serves, status is READY and counts it.
    const engine = processesUnder(home).find((p) => p.includes("--port 8200"))!;
    process.kill(Number(engine.split(" ")[0]), "SIGKILL");
    const seen = new Set<string>();
    let again: any;
    for (const t0 = Date.now(); Date.now() - t0 < 30_000; await new Promise((r) => setTimeout(r, 100))) {
      again = (await fleet("status", "--json", ...cfg)).json();
      seen.add(again.status);
      if (again.status === "READY" && again.islands[0].processes.some((p: any) => p.restarts === 1)) break;
    }
    expect(again.status, [...seen].join(" ")).toBe("READY");
    expect(again.islands[0].processes.find((p: any) => p.id === "i0-replica1-n0")).toMatchObject({
      status: "READY",
      restarts: 1,
      lastRestart: { cause: "i0-replica1-n0", code: 137 },
    });
    expect(again.islands[0].processes.find((p: any) => p.id === "i0-replica0-n0")).toMatchObject({ restarts: 0 });

    expect((await destroy(c, home)).code).toBe(0);
    const gone = (await fleet("status", "--json", ...cfg)).json();
    expect(gone.status).toBe("SHUTDOWN");
    expect((await fleet("endpoints", ...cfg)).code).toBe(1);
  });

  it("injection: every payload of test/security/payloads.ts in an env value, the chat template and the launcher's folder (bin_dir, then a venv's path) reaches the engine byte for byte, or is refused naming its key; no canary appears", async () => {
    const home = freshHome("injection");
    const outcomes: string[] = [];
    for (const [k, payload] of PAYLOADS.entries()) {
      const canary = path.join(home, `canary-${payload.id}`);
      const text = payload.text(canary);
      // The stand-ins under folders whose names carry the payload (a path cannot hold NUL or a newline):
      // a bin_dir, and a venv whose activate script puts them on PATH.
      const folder = `${payload.id}-${text.replace(/[\0\n\r/]/g, "_").slice(0, 80)}`;
      const bin = path.join(home, `bin-${folder}`);
      if (!fs.existsSync(bin)) fs.symlinkSync(STANDINS, bin);
      const venv = path.join(home, `venv-${folder}`);
      fs.mkdirSync(path.join(venv, "bin"), { recursive: true });
      fs.writeFileSync(path.join(venv, "bin", "activate"), `export PATH=${JSON.stringify(STANDINS)}:"$PATH"\n`);
      const launchers = [`bin_dir = ${JSON.stringify(bin)}`, `type = "venv"\npath = ${JSON.stringify(venv)}`];
      for (const [l, launcher] of launchers.entries()) {
        const records = path.join(home, `rec-${k}-${l}`);
        const stack = [
          `output_dir = "fleet-${k}-${l}"`,
          `[model]\nname = "Qwen/Qwen3-0.6B"\nchat_template = ${JSON.stringify(text)}`,
          `[parallel]\ntp = 1`,
          `[deployment]\ngpus_per_node = 1`,
          `[env_vars]\nVLLM_FLEET_PAYLOAD = ${JSON.stringify(text)}\nSTANDIN_RECORD_DIR = ${JSON.stringify(records)}`,
          `[local]\ngpus = [0]\nready_timeout = 60`,
          `[local.launcher]\n${launcher}`,
        ].join("\n\n");
        let commands: LocalCommand[];
        try {
          ({ commands } = await captureLocal(stack));
        } catch (e) {
          // Refused: the message names the key that holds the payload.
          expect(String(e), payload.id).toMatch(
            /model\.chat_template|env_vars\.VLLM_FLEET_PAYLOAD|local\.launcher\.(bin_dir|path)/,
          );
          outcomes.push(`${payload.id}/${l}: refused`);
          continue;
        }
        const run = await create(commands[0], home);
        try {
          expect(run.code, `${payload.id}: ${run.stderr.slice(-2000)}`).toBe(0);
          const vllm = fs
            .readdirSync(records)
            .filter((f) => f.startsWith("vllm-") && f.endsWith(".json"))
            .map((f) => JSON.parse(fs.readFileSync(path.join(records, f), "utf8")));
          expect(vllm, payload.id).toHaveLength(1);
          expect(vllm[0].env.VLLM_FLEET_PAYLOAD, payload.id).toBe(text);
          const argv: string[] = vllm[0].argv;
          expect(argv[argv.indexOf("--chat-template") + 1], payload.id).toBe(text);
          outcomes.push(`${payload.id}/${l}: served`);
        } finally {
          expect((await destroy(commands[0], home)).code).toBe(0);
        }
        expect(fs.existsSync(canary), `${payload.id} created its canary`).toBe(false);
      }
    }
    expect(await leftUnder(home)).toEqual([]);
    console.log(`local injection: ${outcomes.join(", ")}`);
    // Both launchers served most payloads (the rest were refused by name above).
    expect(outcomes.filter((o) => o.endsWith("/0: served")).length).toBeGreaterThan(PAYLOADS.length / 2);
    expect(outcomes.filter((o) => o.endsWith("/1: served")).length).toBeGreaterThan(PAYLOADS.length / 2);
  }, 900_000);

  it("refuses a plan needing more GPUs than local.gpus gives, and more than nvidia-smi lists, before anything starts", async () => {
    await expect(captureLocal(stackWith(SHAPES["single-node (tp 2)"], "gpus = [0]"))).rejects.toThrow(
      /local\.gpus.*1 GPU\(s\).*needs 2/s,
    );
    // No local.gpus: the GPUs are counted with nvidia-smi -L; this one lists a single GPU.
    const home = freshHome("nvidia-smi");
    const bin = path.join(home, "bin");
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, "nvidia-smi"), "#!/bin/sh\necho 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)'\n", {
      mode: 0o755,
    });
    const { commands } = await captureLocal(stackWith(SHAPES["single-node (tp 2)"], "ready_timeout = 60"));
    const run = await create(commands[0], home, { PATH: `${bin}:${process.env.PATH}` });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "the plan needs 2 GPU(s), this machine gives the fleet 1 (nvidia-smi -L); nothing was started",
    );
    expect(processesUnder(home)).toEqual([]);
  });
});
