/**
 * Issue 44 on Kubernetes: the island's activity monitor (components/kubernetes/activity-monitor.ts).
 * Its rendered objects (names with the service, least-privilege RBAC, aux placement, one pod at a
 * time), and its logic: the rendered script (templates/kubernetes/activity-monitor.py, the text the
 * pod runs) against a fake API server over TLS (its ConfigMap and its workloads' scale, with merge
 * patches as the API server applies them) and plain HTTP engines whose /metrics and /is_paused the
 * test sets, with the scrape every 0.2 s and a 1 s bound. The real API server and RBAC:
 * test/e2e/k8s-idle-release.e2e.test.ts.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfigText } from "../../components/config";
import { parseActivity } from "../../components/host/activity-ledger";
import { activityMonitorConfig } from "../../components/kubernetes/activity-monitor";
import { renderK8sFleet, renderK8sStack } from "../../components/kubernetes/fleet-objects";
import { k8sNames } from "../../components/kubernetes/names";
import type { K8sObject } from "../../components/kubernetes/objects";
import { kubernetesSettings } from "../../components/kubernetes/settings";
import { buildPlan, buildStackPlan } from "../../components/planner";
import { loadStackText } from "../../components/config/load";
import { stackText } from "../helpers";
import { kubelet } from "./router-follower-drill";

const withIdle = (text: string, v: string) =>
  text.replace(/^\[inference\]$/m, `[inference]\nidle_release_after = "${v}"`);

const planOf = (stack: string, idle?: string) => {
  const text = idle ? withIdle(stackText(stack), idle) : stackText(stack);
  return buildPlan(loadConfigText(text, `${stack}.toml`), stack);
};
/** The island's objects of a one-service stack's plan. */
const islandOf = (plan: ReturnType<typeof planOf>, secrets: "apiKey"[] = []) =>
  renderK8sFleet(plan, secrets).islands[0];
const activityOf = (objects: K8sObject[]) =>
  objects.filter((o) => o.metadata.labels?.["app.kubernetes.io/component"] === "activity");

describe("the activity monitor's objects", () => {
  it("per island: an empty ledger ConfigMap, a ServiceAccount, a Role of get and patch on that ConfigMap and its own workloads' scale only, its RoleBinding, and a one-pod Recreate Deployment on the aux nodes", () => {
    const plan = planOf("k8s-wide-ep", "2h");
    const island = islandOf(plan, ["apiKey"]);
    const objects = activityOf(island.activity);
    expect(objects).toEqual(island.activity);
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      "ConfigMap/k8s-wide-ep-i0-activity",
      "ServiceAccount/k8s-wide-ep-i0-activity",
      "Role/k8s-wide-ep-i0-activity",
      "RoleBinding/k8s-wide-ep-i0-activity",
      "Deployment/k8s-wide-ep-i0-activity",
    ]);
    const cm = objects[0] as Extract<K8sObject, { kind: "ConfigMap" }>;
    // Empty: only the monitor writes its keys, so an `up` that applies the ConfigMap again owns none of them.
    expect(cm.data).toBeUndefined();
    const role = objects.find((o) => o.kind === "Role") as Extract<K8sObject, { kind: "Role" }>;
    const names = k8sNames(plan).workloads(plan.islands[0]);
    expect(names.map((w) => w.kind)).toEqual(["LeaderWorkerSet"]);
    expect(role.rules).toEqual([
      { apiGroups: [""], resources: ["configmaps"], resourceNames: [cm.metadata.name], verbs: ["get", "patch"] },
      {
        apiGroups: ["leaderworkerset.x-k8s.io"],
        resources: ["leaderworkersets/scale"],
        resourceNames: names.map((w) => w.name),
        verbs: ["get", "patch"],
      },
    ]);
    const d = objects.find((o) => o.kind === "Deployment") as Extract<K8sObject, { kind: "Deployment" }>;
    const spec = d.spec as any;
    expect(spec.replicas).toBe(1);
    expect(spec.strategy).toEqual({ type: "Recreate" });
    expect(spec.template.spec.serviceAccountName).toBe("k8s-wide-ep-i0-activity");
    const t = kubernetesSettings(plan);
    expect(spec.template.spec.nodeSelector).toEqual(
      Object.keys(t.aux_node_selector).length ? t.aux_node_selector : undefined,
    );
    const c = spec.template.spec.containers[0];
    expect(c.image).toBe(t.image);
    expect(c.command.slice(0, 2)).toEqual(["python3", "-c"]);
    expect(c.resources.requests).toEqual({ cpu: "50m", memory: "64Mi" });
    expect(JSON.stringify(c.resources)).not.toMatch(/gpu/);
    // The API key from the Secret (SGLang demands it on /metrics), never its value.
    expect(c.env).toEqual([{ name: "VLLM_API_KEY", valueFrom: { secretKeyRef: expect.any(Object) } }]);
    const config = JSON.parse(c.command[3]);
    expect(config).toEqual(
      activityMonitorConfig({ plan, target: t, names: k8sNames(plan), secrets: [] }, plan.islands[0]),
    );
    expect(config.idleS).toBe(7200);
    expect(config.workloads).toEqual([
      {
        path: `/apis/leaderworkerset.x-k8s.io/v1/namespaces/${t.namespace ?? config.namespace}/leaderworkersets/${names[0].name}`,
        replicas: 1,
      },
    ]);
    expect(config.engines.length).toBe(plan.islands[0].activity.engines.length);
    expect(config.engines[0].url).toMatch(/^http:\/\/k8s-wide-ep-i0-replica0-0\..*\.svc\.cluster\.local:\d+$/);
  });

  it("always on (idleS 0 without idle_release_after); a StatefulSet island's Role names its StatefulSets' scale", () => {
    const plan = planOf("k8s-multi-replica");
    const island = islandOf(plan);
    const d = island.activity.find((o) => o.kind === "Deployment") as any;
    expect(JSON.parse(d.spec.template.spec.containers[0].command[3]).idleS).toBe(0);
    expect(d.spec.template.spec.containers[0].env).toBeUndefined();
    const role = island.activity.find((o) => o.kind === "Role") as any;
    expect(role.rules[1]).toEqual({
      apiGroups: ["apps"],
      resources: ["statefulsets/scale"],
      resourceNames: ["k8s-multi-replica-i0-replica0", "k8s-multi-replica-i0-replica1"],
      verbs: ["get", "patch"],
    });
  });

  it("with [services], each service's monitor and ledger carry its name", () => {
    const text = stackText("k8s-policy-and-judge");
    const services = loadStackText(text, "k8s-policy-and-judge.toml");
    const stack = renderK8sStack(buildStackPlan(services, "k8s-policy-and-judge"), []);
    const cms = stack.services.flatMap((f) =>
      f.islands.flatMap((i) => i.activity.filter((o) => o.kind === "ConfigMap").map((o) => o.metadata.name)),
    );
    expect(cms.sort()).toEqual(["k8s-policy-and-judge-judge-i0-activity", "k8s-policy-and-judge-policy-i0-activity"]);
  });
});

/* ---------- the monitor's logic: the rendered script against a fake API server ---------- */

const children: ChildProcess[] = [];
const servers: { close(): void }[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const s of servers.splice(0)) s.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A fake API server over TLS: one ConfigMap and workloads' scale, merge patches applied as the API server does. */
async function fakeApi(dir: string, workloads: string[], configMap: string) {
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"].concat([
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      `${dir}/tls.key`,
      "-out",
      `${dir}/ca.crt`,
    ]),
    { stdio: "ignore" },
  );
  fs.writeFileSync(`${dir}/token`, "monitor-token\n");
  const state = {
    data: {} as Record<string, string>,
    replicas: Object.fromEntries(workloads.map((w) => [w, 1])) as Record<string, number>,
    calls: [] as string[],
  };
  const server = https.createServer(
    { key: fs.readFileSync(`${dir}/tls.key`), cert: fs.readFileSync(`${dir}/ca.crt`) },
    (q, r) => {
      let body = "";
      q.on("data", (d) => (body += d));
      q.on("end", () => {
        state.calls.push(`${q.method} ${q.url}`);
        if (q.headers.authorization !== "Bearer monitor-token") return void r.writeHead(401).end("{}");
        const scale = workloads.find((w) => q.url === `${w}/scale`);
        if (q.url?.endsWith(`/configmaps/${configMap}`)) {
          if (q.method === "PATCH") {
            expect(q.headers["content-type"]).toBe("application/merge-patch+json");
            for (const [k, v] of Object.entries(JSON.parse(body).data as Record<string, string | null>))
              if (v === null) delete state.data[k];
              else state.data[k] = v;
          }
          return void r.end(JSON.stringify({ data: state.data }));
        }
        if (scale) {
          if (q.method === "PATCH") state.replicas[scale] = JSON.parse(body).spec.replicas;
          return void r.end(JSON.stringify({ spec: { replicas: state.replicas[scale] } }));
        }
        r.writeHead(404).end("{}");
      });
    },
  );
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  servers.push(server);
  return { state, port: (server.address() as AddressInfo).port };
}

/** A plain HTTP engine: its /metrics and /is_paused as the test sets them. */
async function fakeEngine() {
  const e = { running: 0, waiting: 0, finished: 0, paused: false, up: true, url: "" };
  const server = http.createServer((q, r) => {
    if (!e.up) return void r.socket?.destroy();
    if (q.url === "/metrics")
      return void r.end(
        `# HELP x\nvllm:num_requests_running{model_name="m"} ${e.running}\nvllm:num_requests_waiting{model_name="m"} ${e.waiting}\n` +
          `vllm:request_success_total{finished_reason="stop",model_name="m"} ${e.finished}\n`,
      );
    if (q.url === "/is_paused") return void r.end(JSON.stringify({ is_paused: e.paused }));
    r.writeHead(404).end();
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  servers.push(server);
  e.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return e;
}

describe("the activity monitor's logic (the rendered script, a fake API server)", () => {
  it("busy, paused, idle and unseen as the host's; only continuous idle runs the clock; released once (replicas 0, the mark); a restart takes the clock from the ledger; the mark is cleared once the workloads are back", async () => {
    const plan = planOf("k8s-multi-replica", "20s");
    const island = islandOf(plan);
    const d = island.activity.find((o) => o.kind === "Deployment") as any;
    const [python, flag, script, configText] = kubelet(d.spec.template.spec.containers[0].command);
    const config = JSON.parse(configText);
    const engines = [await fakeEngine(), await fakeEngine()];
    const metricNames = plan.islands[0].activity.engines[0];
    expect([metricNames.running, metricNames.waiting, metricNames.finished]).toEqual([
      "vllm:num_requests_running",
      "vllm:num_requests_waiting",
      "vllm:request_success_total",
    ]);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "activity-monitor-"));
    const paths = config.workloads.map((w: { path: string }) => w.path);
    const api = await fakeApi(dir, paths, config.configMap);
    // A 2 s bound and a 2 s heartbeat: the script's logic at test speed.
    const fast = {
      ...config,
      idleS: 2,
      heartbeatS: 2,
      engines: config.engines.map((e: object, k: number) => ({ ...e, url: engines[k].url })),
    };
    let log = "";
    const run = () => {
      const c = spawn(python, [flag, script, JSON.stringify(fast)], {
        env: {
          ...process.env,
          KUBERNETES_SERVICE_HOST: "127.0.0.1",
          KUBERNETES_SERVICE_PORT: String(api.port),
          FLEET_SERVICEACCOUNT_DIR: dir,
          FLEET_ACTIVITY_EVERY_S: "0.2",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      c.stdout!.on("data", (b: Buffer) => (log += b.toString()));
      c.stderr!.on("data", (b: Buffer) => (log += b.toString()));
      children.push(c);
      return c;
    };
    const ledger = () => parseActivity(api.state.data.activity ?? "");
    const last = () => ledger().at(-1)?.state;
    const until = async (what: string, f: () => boolean, ms = 8000) => {
      for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (f()) return;
      throw new Error(`${what} not within ${ms} ms:\n${log}`);
    };

    let monitor = run();
    // Busy: a request running on one engine, then finished ones only (a short request between scrapes).
    engines[0].running = 1;
    await until("busy", () => last() === "busy");
    engines[0].running = 0;
    for (let k = 0; k < 15; k++) {
      engines[1].finished += 1;
      await sleep(200);
    }
    expect(api.state.data["idle-released"], log).toBeUndefined();
    // Paused (a trainer's weight update) for twice the bound: not idle.
    engines[0].paused = true;
    await until("paused", () => last() === "paused");
    await sleep(4000);
    expect(api.state.data["idle-released"], log).toBeUndefined();
    // Waiting requests count as busy even while paused.
    engines[0].waiting = 2;
    await until("busy while waiting", () => last() === "busy");
    engines[0].waiting = 0;
    engines[0].paused = false;
    // No engine answers: unseen, not idle.
    for (const e of engines) e.up = false;
    await until("unseen", () => last() === "unseen");
    await sleep(3000);
    expect(api.state.data["idle-released"], log).toBeUndefined();
    for (const e of engines) e.up = true;
    // Idle: killed 1 s in and started again, it takes the clock from the ledger: released 2 s after
    // the first idle line, not 2 s after its restart.
    await until("idle", () => last() === "idle");
    const idleAt = ledger().at(-1)!.at;
    await sleep(1000);
    monitor.kill("SIGKILL");
    await new Promise((r) => monitor.on("exit", r));
    monitor = run();
    await until("released", () => Object.values(api.state.replicas).every((r) => r === 0));
    expect(log).toMatch(/idle since \d+ \(from the ledger\)/);
    const [at, since] = api.state.data["idle-released"].split(" ").map(Number);
    expect(since).toBe(idleAt);
    expect(at - since).toBeGreaterThanOrEqual(2);
    expect(at - since).toBeLessThanOrEqual(3);
    // Released once: still idle, no second mark nor scale.
    const patches = () => api.state.calls.filter((c) => c.startsWith("PATCH") && c.endsWith("/scale")).length;
    expect(patches()).toBe(2);
    await sleep(3000);
    expect(patches()).toBe(2);
    expect(api.state.data["idle-released"]).toBe(`${at} ${since}`);
    // Back at the planned replicas (fleet wake or pulumi up): the mark is cleared; the clock starts again.
    for (const p of paths) api.state.replicas[p] = 1;
    await until("mark cleared", () => api.state.data["idle-released"] === undefined);
    await until("released again", () => Object.values(api.state.replicas).every((r) => r === 0));
    // Nothing but its own ConfigMap and its workloads' scale was asked for.
    const own = new RegExp(
      `^(GET|PATCH) (${[...paths.map((p: string) => `${p}/scale`), `/api/v1/namespaces/${config.namespace}/configmaps/${config.configMap}`].join("|")})$`,
    );
    expect(api.state.calls.filter((c) => !own.test(c))).toEqual([]);
  }, 60_000);
});
