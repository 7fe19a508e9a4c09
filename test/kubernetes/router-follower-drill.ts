/**
 * The router follower's drill (components/kubernetes/router-follower.ts), shared by the unit test (the
 * vllm-router TEST STAND-IN) and the end-to-end ones (the REAL vllm-router and the REAL sglang-router
 * from the pinned venv): two engine stand-ins behind the router (plain HTTP servers answering /health,
 * /weight_info and completions, or the SGLang stand-ins), and the follower's rendered command run as
 * the kubelet runs a container, with the router's address and the workers' URLs swapped for the
 * drill's. Engine A "restarts" as a kubelet restart does (its listener gone, then back on the same
 * address with the base weights); requests flow through the router throughout.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { loadConfigText } from "../../components/config";
import { allK8sObjects, renderK8sFleet } from "../../components/kubernetes/fleet-objects";
import { podTemplates } from "../../components/kubernetes/rollout";
import { buildPlan } from "../../components/planner";
import { SECRET_KEYS } from "../../components/kubernetes/objects";
import { freePort } from "../standins-harness";
import { stackText } from "../helpers";

interface PlainContainer {
  name: string;
  command?: string[];
}

/** The containers of a rendered Kubernetes stack's pods (plain data: no Pulumi inputs in them). */
export function k8sContainers(stack: string): PlainContainer[] {
  const plan = buildPlan(loadConfigText(stackText(stack), `${stack}.toml`), stack);
  const templates = JSON.parse(JSON.stringify(allK8sObjects(renderK8sFleet(plan, [])).flatMap(podTemplates))) as {
    spec: { containers: PlainContainer[] };
  }[];
  return templates.flatMap((t) => t.spec.containers);
}

/** The follower pod's environment with the fleet's API key, as the Secret puts it there. */
export const followerEnv = (apiKey?: string): NodeJS.ProcessEnv => ({
  ...process.env,
  ...(apiKey ? { [SECRET_KEYS.apiKey]: apiKey } : {}),
});

/** A command as the kubelet runs it: `$$` is a literal `$` (no `$(VAR)` is left in the follower's). */
export const kubelet = (command: string[]) => command.map((w) => w.replaceAll("$$", "$"));

/**
 * An engine of the drill, as the follower sees it: its URL, the requests it served, the weight version
 * it reports (set as a trainer's update sets it), its death (nothing listens on its address) and its
 * restart on the same address with the base weights, as the kubelet restarts a container.
 */
export interface DrillEngine {
  url: string;
  hits(): Promise<number>;
  setVersion(v: string): Promise<void>;
  die(): Promise<void>;
  restart(base: string): Promise<void>;
  /** Stops it, alive or not. */
  close(): Promise<void>;
}

/** The engines behind the router, its model name and the key they all want, if any. */
export interface DrillEngines {
  engines: [DrillEngine, DrillEngine];
  model: string;
  apiKey?: string;
}

/** A plain HTTP engine stand-in: /health, /weight_info and completions, counting what it serves. */
class HttpEngine implements DrillEngine {
  private served = 0;
  private version = "v2";
  private server?: http.Server;
  private port = 0;
  url = "";

  async listen(): Promise<void> {
    const server = http.createServer((q, r) => {
      if (q.url === "/health") return void r.end();
      if (q.url === "/weight_info") return void r.end(JSON.stringify({ weight_version: this.version }));
      if (q.method === "POST" && q.url === "/v1/completions") {
        this.served += 1;
        r.setHeader("content-type", "application/json");
        return void r.end(
          JSON.stringify({ id: "x", object: "text_completion", model: "m", choices: [{ index: 0, text: "ok" }] }),
        );
      }
      r.statusCode = 404;
      r.end();
    });
    await new Promise<void>((ok) => server.listen(this.port, "127.0.0.1", ok));
    this.port = (server.address() as AddressInfo).port;
    this.url = `http://127.0.0.1:${this.port}`;
    this.server = server;
  }

  async hits() {
    return this.served;
  }

  async setVersion(v: string) {
    this.version = v;
  }

  async die(): Promise<void> {
    const s = this.server!;
    s.closeAllConnections();
    await new Promise<void>((ok) => s.close(() => ok()));
  }

  async restart(base: string) {
    this.version = base;
    await this.listen();
  }

  async close() {
    if (this.server?.listening) await this.die();
  }
}

/** Two plain HTTP engines (vLLM's weight route), serving v2. */
export async function httpEngines(): Promise<DrillEngines> {
  const engines: [HttpEngine, HttpEngine] = [new HttpEngine(), new HttpEngine()];
  for (const e of engines) await e.listen();
  return { engines, model: "m" };
}

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** Waits for `check`; `watch` throws when a process the drill needs has exited. */
async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  ms: number,
  log: () => string,
  watch: () => void,
) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    watch();
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`${what}: not within ${ms} ms\n${log()}`);
}

export interface FollowerDrill {
  /** Requests sent through the router after the follower took A out, and how many failed. */
  whileOut: { sent: number; failed: number; toA: number };
  /** Seconds from A's listener closing to the follower's removal. */
  outAfterS: number;
  /** Seconds from A serving v2 to A serving requests through the router again. */
  backAfterS: number;
  log: string;
}

/**
 * The router's command line in the drill: round_robin, so both engines get requests while listed;
 * its metrics on a port of its own (both routers default to 29000, which a fleet on this machine
 * in another suite may hold: "Address already in use").
 */
export const drillRouterArgs = (port: number, workers: string[], metricsPort: number) => [
  "--policy",
  "round_robin",
  "--host",
  "127.0.0.1",
  "--port",
  String(port),
  "--prometheus-host",
  "127.0.0.1",
  "--prometheus-port",
  String(metricsPort),
  "--worker-startup-check-interval",
  "1",
  "--worker-urls",
  ...workers,
];

/**
 * Runs the drill: the follower of `stack`'s router (its rendered command), `startRouter` the router
 * (given its port and the workers' URLs) from the program under test, `engines` behind it. Throws,
 * with the follower's and router's output, when a step does not happen.
 */
export async function followerDrill(
  stack: string,
  startRouter: (port: number, workers: string[], metricsPort: number) => ChildProcess,
  engines: DrillEngines,
): Promise<FollowerDrill> {
  const follower = k8sContainers(stack).find((c) => c.name === "router-follower");
  if (!follower?.command) throw new Error(`${stack} renders no router-follower container`);
  const [python, flag, script, , routes, route, base] = kubelet(follower.command);
  const [a, b] = engines.engines;
  const auth: Record<string, string> = engines.apiKey ? { authorization: `Bearer ${engines.apiKey}` } : {};
  const port = await freePort();
  const router = `http://127.0.0.1:${port}`;
  let routerLog = "";
  let followerLog = "";
  const r = startRouter(port, [a.url, b.url], await freePort());
  r.stdout?.on("data", (d) => (routerLog += d));
  r.stderr?.on("data", (d) => (routerLog += d));
  // The key reaches the follower as it reaches the router's pod: VLLM_API_KEY from the Secret.
  const f = spawn(python, [flag, script, router, routes, route, base, a.url, b.url], {
    env: followerEnv(engines.apiKey),
  });
  f.stdout.on("data", (d) => (followerLog += d));
  f.stderr.on("data", (d) => (followerLog += d));
  const log = () => `--- follower\n${followerLog}\n--- router\n${routerLog.slice(-4000)}`;
  const alive = (p: ChildProcess, what: string) => {
    if (p.exitCode !== null || p.signalCode !== null)
      throw new Error(`the ${what} exited (${p.exitCode ?? p.signalCode})\n${log()}`);
  };
  const watchBoth = () => {
    alive(r, "router");
    alive(f, "follower");
  };
  const complete = async () => {
    try {
      const res = await fetch(`${router}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", ...auth },
        body: JSON.stringify({ model: engines.model, prompt: "hi", max_tokens: 1 }),
        signal: AbortSignal.timeout(10_000),
      });
      await res.text();
      return res.ok;
    } catch {
      return false;
    }
  };
  // Its add calls, in either router's routes.
  const adds = () => (followerLog.match(/(add_worker|POST \/workers) /g) ?? []).length;
  try {
    // At its start the follower tells the router every worker that serves current weights, once.
    await until("the follower's first round", () => adds() >= 2, 60_000, log, watchBoth);
    await until(
      "both engines served through the router",
      async () => (await complete()) && (await a.hits()) > 0 && (await b.hits()) > 0,
      60_000,
      log,
      watchBoth,
    );

    const died = Date.now();
    await a.die();
    await until("A taken out", () => followerLog.includes(`${a.url} kept out: /health`), 10_000, log, watchBoth);
    const outAfterS = (Date.now() - died) / 1000;
    // The kubelet's restart: the same address, the base model.
    await a.restart(base);
    await until(
      "A kept out, named",
      () => followerLog.includes(`${a.url} kept out: serves the base weights`),
      10_000,
      log,
      watchBoth,
    );
    const before = await a.hits();
    const sent = 20;
    let failed = 0;
    for (let i = 0; i < sent; i++) if (!(await complete())) failed += 1;
    const whileOut = { sent, failed, toA: (await a.hits()) - before };

    // The trainer's next update reaches it.
    await a.setVersion("v2");
    const updated = Date.now();
    const hitsThen = await a.hits();
    await until(
      "A serving through the router again",
      async () => (await complete()) && (await a.hits()) > hitsThen,
      20_000,
      log,
      watchBoth,
    );
    const backAfterS = (Date.now() - updated) / 1000;
    return { whileOut, outAfterS, backAfterS, log: log() };
  } finally {
    f.kill("SIGKILL");
    r.kill("SIGKILL");
    for (const e of [a, b]) await e.close();
  }
}
