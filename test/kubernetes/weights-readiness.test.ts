/**
 * Issue 41 item 5: an engine pod on Kubernetes is not Ready while it serves the base model and its
 * island's other engines serve a trainer's update (components/kubernetes/weights-readiness.ts).
 * kwok's pods run no processes, so the check itself runs here, as the kubelet runs an exec probe:
 * python3 with the rendered command line, against HTTP stand-ins for the engine (127.0.0.1) and
 * its peers (127.0.0.2, the address the headless Service's name resolves to in the test).
 */
import { spawn } from "node:child_process";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfigText } from "../../components/config";
import { allK8sObjects, renderK8sFleet } from "../../components/kubernetes/fleet-objects";
import { podTemplates } from "../../components/kubernetes/rollout";
import { buildPlan } from "../../components/planner";
import { stackText } from "../helpers";

/** An engine stand-in: /health as told, its weight version on `route` (404 with `null`). */
async function engine(host: string, route: string, state: { healthy: boolean; version: string | null }) {
  const server = http.createServer((q, r) => {
    if (q.url === "/health") r.statusCode = state.healthy ? 200 : 503;
    else if (q.url === route && state.version !== null) r.write(JSON.stringify({ weight_version: state.version }));
    else r.statusCode = 404;
    r.end();
  });
  await new Promise<void>((ok) => server.listen(0, host, ok));
  servers.push(server);
  return (server.address() as AddressInfo).port;
}
const servers: http.Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A probe as the rendered objects hold it (plain data: no Pulumi inputs in them). */
interface PlainProbe {
  exec?: { command: string[] };
  httpGet?: { path: string };
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
}

/** The engine containers' readiness probes of a rendered k8s stack. */
function probes(stack: string): PlainProbe[] {
  const plan = buildPlan(loadConfigText(stackText(stack), `${stack}.toml`), stack);
  const containers = (
    JSON.parse(JSON.stringify(allK8sObjects(renderK8sFleet(plan, [])).flatMap(podTemplates))) as {
      spec: { containers: { startupProbe?: PlainProbe; readinessProbe?: PlainProbe }[] };
    }[]
  ).flatMap((t) => t.spec.containers);
  // The containers that serve an engine's API: the ones with a startup probe on /health.
  return containers.filter((c) => c.startupProbe?.httpGet?.path === "/health").map((c) => c.readinessProbe!);
}

/** Runs the probe's command as the kubelet does, with the engine's port and the peers' host and ports swapped for the stand-ins'. */
function check(command: string[], port: number, peerPorts: number[]) {
  const [python, flag, script, , route, base] = command;
  const argv = [flag, script, String(port), route, base, "127.0.0.2", ...peerPorts.map(String)];
  return new Promise<{ code: number | null; out: string }>((ok) => {
    const p = spawn(python, argv);
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.on("close", (code) => ok({ code, out }));
  });
}

describe("an engine pod's readiness: serving, and not the base model while its peers serve an update", () => {
  const [probe] = probes("k8s-multi-replica");
  const command = probe.exec!.command;

  it("every engine container of a vLLM and an SGLang stack carries it, with its engine's route and base version", () => {
    expect(command.slice(0, 2)).toEqual(["python3", "-c"]);
    expect(command.slice(4, 7)).toEqual(["/weight_info", "default", expect.stringMatching(/-engines$/)]);
    expect(probe).toMatchObject({ periodSeconds: 5, timeoutSeconds: 12, failureThreshold: 3 });
    const sglang = probes("k8s-sglang-wide-ep");
    expect(sglang.length).toBeGreaterThan(0);
    for (const p of sglang) expect(p.exec!.command.slice(4, 6)).toEqual(["/model_info", "default"]);
  });

  it("a restarted engine (base weights) whose peer serves v2 is not Ready, naming both; once the update reaches it, Ready", async () => {
    const own = { healthy: true, version: "default" as string | null };
    const port = await engine("127.0.0.1", "/weight_info", own);
    const peer = await engine("127.0.0.2", "/weight_info", { healthy: true, version: "v2" });
    const out = await check(command, port, [port, peer]);
    expect(out.code).toBe(1);
    expect(out.out).toContain(`serves the base weights (weight version default) while 127.0.0.2:${peer} serves v2`);
    own.version = "v2";
    expect((await check(command, port, [peer])).code).toBe(0);
  });

  it("Ready: a fresh fleet (every engine on the base model), an engine with no peer answering, one reporting no version", async () => {
    const own = { healthy: true, version: "default" as string | null };
    const port = await engine("127.0.0.1", "/weight_info", own);
    const peer = await engine("127.0.0.2", "/weight_info", { healthy: true, version: "default" });
    expect((await check(command, port, [peer])).code).toBe(0);
    expect((await check(command, port, [1])).code).toBe(0);
    own.version = null;
    const lonely = await engine("127.0.0.2", "/weight_info", { healthy: true, version: "v3" });
    expect((await check(command, port, [lonely])).code).toBe(0);
  });

  it("its peers: each island's headless engine Service selects every engine pod of the fleet's service, the same for any number of islands (an island of one engine has peers in the others)", () => {
    const plan = buildPlan(
      loadConfigText(stackText("k8s-disaggregated-x3"), "k8s-disaggregated-x3.toml"),
      "k8s-disaggregated-x3",
    );
    const objects = allK8sObjects(renderK8sFleet(plan, []));
    const services = objects.filter((o) => o.kind === "Service" && o.metadata.name.endsWith("-engines")) as any[];
    expect(services.map((o) => o.metadata.name)).toEqual([0, 1, 2].map((i) => `k8s-disaggregated-x3-i${i}-engines`));
    const engineTemplates = objects
      .flatMap(podTemplates)
      .filter((t: any) => t.metadata.labels["app.kubernetes.io/component"] === "engine");
    const islands = new Set(engineTemplates.map((t: any) => t.metadata.labels["vllm-fleet/island"]));
    expect(islands).toEqual(new Set(["0", "1", "2"]));
    for (const svc of services) {
      expect(svc.spec).toMatchObject({ clusterIP: "None", publishNotReadyAddresses: true });
      const selects = (t: any) => Object.entries(svc.spec.selector).every(([k, v]) => t.metadata.labels[k] === v);
      expect(engineTemplates.every(selects)).toBe(true);
      expect(objects.flatMap(podTemplates).filter(selects)).toHaveLength(engineTemplates.length);
      expect(svc.spec.selector).toEqual(services[0].spec.selector);
    }
  });

  it("not Ready while /health fails, whatever it serves", async () => {
    const port = await engine("127.0.0.1", "/weight_info", { healthy: false, version: "v2" });
    const out = await check(command, port, []);
    expect(out.code).toBe(1);
    expect(out.out).toContain(`/health on port ${port}`);
  });
});
