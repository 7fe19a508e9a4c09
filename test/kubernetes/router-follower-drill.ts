/**
 * The router follower's drill (components/kubernetes/router-follower.ts), shared by the unit test (the
 * vllm-router TEST STAND-IN) and the end-to-end one (the REAL vllm-router from the pinned venv): two
 * engine stand-ins (HTTP servers answering /health, /weight_info and completions, counting what
 * they serve) behind the router, and the follower's rendered command run as the kubelet runs a
 * container, with the router's address and the workers' URLs swapped for the drill's. Engine A "restarts"
 * as a kubelet restart does (its listener gone, then back on the same address with the base
 * weights); requests flow through the router throughout.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { loadConfigText } from "../../components/config";
import { allK8sObjects, renderK8sFleet } from "../../components/kubernetes/fleet-objects";
import { podTemplates } from "../../components/kubernetes/rollout";
import { buildPlan } from "../../components/planner";
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

/** A command as the kubelet runs it: `$$` is a literal `$` (no `$(VAR)` is left in the follower's). */
const kubelet = (command: string[]) => command.map((w) => w.replaceAll("$$", "$"));

class Engine {
  hits = 0;
  version = "v2";
  private server?: http.Server;
  port = 0;
  url = "";

  async listen(): Promise<void> {
    const server = http.createServer((q, r) => {
      if (q.url === "/health") return void r.end();
      if (q.url === "/weight_info") return void r.end(JSON.stringify({ weight_version: this.version }));
      if (q.method === "POST" && q.url === "/v1/completions") {
        this.hits += 1;
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

  /** Its process gone: nothing listens on its address. */
  async die(): Promise<void> {
    const s = this.server!;
    s.closeAllConnections();
    await new Promise<void>((ok) => s.close(() => ok()));
  }
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

/** The router's command line in the drill: round_robin, so both engines get requests while listed. */
export const drillRouterArgs = (port: number, workers: string[]) => [
  "--policy",
  "round_robin",
  "--host",
  "127.0.0.1",
  "--port",
  String(port),
  "--worker-startup-check-interval",
  "1",
  "--worker-urls",
  ...workers,
];

/**
 * Runs the drill: `router` starts the router (given its port and the workers' URLs) from the
 * program under test. Throws, with the follower's and router's output, when a step does not happen.
 */
export async function followerDrill(
  startRouter: (port: number, workers: string[]) => ChildProcess,
): Promise<FollowerDrill> {
  const follower = k8sContainers("k8s-multi-replica").find((c) => c.name === "router-follower");
  if (!follower?.command) throw new Error("k8s-multi-replica renders no router-follower container");
  const [python, flag, script, , route, base] = kubelet(follower.command);
  const [a, b] = [new Engine(), new Engine()];
  await a.listen();
  await b.listen();
  const port = await freePort();
  const router = `http://127.0.0.1:${port}`;
  let routerLog = "";
  let followerLog = "";
  const r = startRouter(port, [a.url, b.url]);
  r.stdout?.on("data", (d) => (routerLog += d));
  r.stderr?.on("data", (d) => (routerLog += d));
  const f = spawn(python, [flag, script, router, route, base, a.url, b.url]);
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
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", prompt: "hi", max_tokens: 1 }),
        signal: AbortSignal.timeout(10_000),
      });
      await res.text();
      return res.ok;
    } catch {
      return false;
    }
  };
  try {
    // At its start the follower tells the router every worker that serves current weights, once.
    await until(
      "the follower's first round",
      () => (followerLog.match(/add_worker /g) ?? []).length >= 2,
      60_000,
      log,
      watchBoth,
    );
    await until(
      "both engines served through the router",
      async () => (await complete()) && a.hits > 0 && b.hits > 0,
      30_000,
      log,
      watchBoth,
    );

    const died = Date.now();
    await a.die();
    await until("A taken out", () => followerLog.includes(`remove_worker ${a.url}`), 10_000, log, watchBoth);
    const outAfterS = (Date.now() - died) / 1000;
    // The kubelet's restart: the same address, the base model.
    a.version = base;
    await a.listen();
    await until(
      "A kept out, named",
      () => followerLog.includes(`${a.url} kept out: serves the base weights`),
      10_000,
      log,
      watchBoth,
    );
    const before = a.hits;
    const sent = 20;
    let failed = 0;
    for (let i = 0; i < sent; i++) if (!(await complete())) failed += 1;
    const whileOut = { sent, failed, toA: a.hits - before };

    // The trainer's next update reaches it.
    a.version = "v2";
    const updated = Date.now();
    const hitsThen = a.hits;
    await until(
      "A serving through the router again",
      async () => (await complete()) && a.hits > hitsThen,
      20_000,
      log,
      watchBoth,
    );
    const backAfterS = (Date.now() - updated) / 1000;
    return { whileOut, outAfterS, backAfterS, log: log() };
  } finally {
    f.kill("SIGKILL");
    r.kill("SIGKILL");
    await a.die().catch(() => undefined);
    await b.die().catch(() => undefined);
  }
}
