/**
 * Every stacks/k8s-*.toml under the real Pulumi engine and the real pulumi-kubernetes provider
 * (issue 31, item 2), against the test control plane (test/kubernetes/control-plane: a real
 * kube-apiserver with etcd, controller-manager, scheduler, the CRDs, the LWS controller and its
 * webhooks, and kwok's fake GPU nodes). Each stack, one after the other, as a new user deploys it:
 * `pulumi stack init`, `pulumi config set kubeconfig <path>`, `stackFile`, `apiKey --secret`, then
 *
 * 1. `pulumi up`: every object in Pulumi's state is live (same uid), as many as the program renders,
 *    and every engine pod the outputs name is Ready when `up` returns;
 * 2. the outputs equal the live objects: every URL host (router, admin URLs, pods, Mooncake) is a
 *    live Service, or a live pod's hostname and subdomain under a live headless Service, and its
 *    port is one that Service or pod declares;
 * 3. `pulumi preview --expect-no-changes` and `pulumi refresh --expect-no-changes` pass;
 * 4. (k8s-multi-replica) a third replica through `overrides` only creates: no step replaces or
 *    deletes, and every object of before keeps its uid;
 * 5. `pulumi destroy` leaves nothing the fleet created and deletes nothing it did not: a ConfigMap
 *    carrying the fleet's labels outside its namespace, and for k8s-single-node the namespace, the
 *    `hf-cache` PersistentVolumeClaim (bound to a PersistentVolume) and a ConfigMap in it, all made
 *    before `up` as that stack's user makes them, survive. That stack is first tried with
 *    `kubernetes.create_namespace = true`: a fleet that creates (and on destroy deletes) the
 *    namespace the user's claim is in must be refused before anything is created, naming the keys;
 * 6. an `up` whose engine pods cannot be scheduled fails within `kubernetes.stuck_after` with the
 *    scheduler's reason, naming the pod, instead of waiting out `startup_timeout + 600` s.
 *
 * The namespace, node selectors, volumes and sizes come from the plan (`npm run plan -- <stack>
 * --json`), never from constants, and the cluster is sized once for the most engine pods any stack
 * (or the scaled one) plans, one fake node of 8 GPUs each.
 *
 * kwok runs no container: a pod bound to a fake node is marked Running and Ready at once. "Ready"
 * here proves admission (Pod Security, LWS's webhooks), scheduling (GPU requests, node selectors,
 * bound volumes) and the controllers (StatefulSet, Deployment, LeaderWorkerSet), not that vLLM
 * serves: no engine runs and no request is sent.
 *
 * What the provider is relied on for (pulumi-kubernetes, provider/pkg/await): workloads carry
 * `pulumi.com/skipAwait`, so their create and update return at once (await.go
 * newLegacyReadyCondition; metadata/overrides.go ReadyCondition), and each island's readiness
 * Commands (components/kubernetes/readiness-command.ts: dist/bin/k8s-wait.js) wait for them instead, so a
 * router is created only after its engines are Ready (checked below against the live timestamps);
 * an InferencePool is not awaited. A create of an object that exists fails with AlreadyExists
 * unless the provider sets upsertExistingObjects (await.go Creation), and a delete is a foreground
 * cascading delete, awaited until the object is gone (await.go Deletion).
 *
 * The Pulumi CLI, its Node language host and the kubernetes provider 4.34.2 come from
 * FLEET_PULUMI_TOOLCHAIN (test/e2e/pulumi-cli.ts; the provider's archive sits beside the toolchain
 * in the shared tools folder beside the clone). Without the toolchain, the provider, the control
 * plane's cached build (test/kubernetes/control-plane/build.sh) or the LWS controller, the file is
 * skipped with one loud line. CP_PORT_BASE moves the control plane's ports (default 26400, as
 * up.sh); FLEET_K8S_STACKS=<a,b> runs only those stacks (the log says so).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadStackText } from "../../components/config/load";
import { overridesFromObject } from "../../components/config";
import { allK8sStackObjects, renderK8sStack } from "../../components/kubernetes";
import { buildStackPlan } from "../../components/planner";
import { ROOT } from "./program-capture";
import { CONTROL_PLANE, controlPlaneMissing, startControlPlane, type ControlPlane } from "./control-plane";
import {
  configPairs,
  disposeToolchain,
  KUBERNETES_PROVIDER_VERSION,
  PulumiProject,
  pulumiToolchain,
  type Toolchain,
} from "./pulumi-cli";

const PORT_BASE = process.env.CP_PORT_BASE ?? "26400";

const ALL_STACKS = fs
  .readdirSync(path.join(ROOT, "stacks"))
  .filter((f) => /^k8s-.*\.toml$/.test(f))
  .map((f) => f.slice(0, -5))
  .sort();
const only = process.env.FLEET_K8S_STACKS?.split(",").filter(Boolean);
const STACKS = only ? ALL_STACKS.filter((s) => only.includes(s)) : ALL_STACKS;

/** The stack whose scaling is checked: two one-pod replicas, raised to three. */
const SCALED = "k8s-multi-replica";
const SCALE_UP = { "inference.deployment.num_nodes": 3 };

/** What a stack's user sets beyond the stack file (none today: each stack deploys as shipped). */
const USER_OVERRIDES: Record<string, Record<string, unknown>> = {};

/** The unschedulable case: a LeaderWorkerSet stack whose node selector no node matches. */
const STUCK = {
  stack: "k8s-wide-ep",
  overrides: { "kubernetes.node_selector": { "fleet-test/no-such-node": "x" }, "kubernetes.stuck_after": 20 },
};

/** Why the control plane cannot start here, if it cannot: no build to be had, or no LWS controller. */
function k8sMissing(): string | undefined {
  const build = controlPlaneMissing();
  if (build) return build;
  const r = spawnSync("bash", ["-c", `. "${CONTROL_PLANE}/versions.sh" && echo "$LWS_VERSION"`], { encoding: "utf8" });
  const tools = process.env.FLEET_SHARED_TOOLS ?? path.join(ROOT, "..", "shared", "tools");
  const tar = path.join(tools, "k8s", `lws-controller-${r.stdout.trim()}.tar.xz`);
  if (!fs.existsSync(tar)) return `no LWS controller (${tar}): LeaderWorkerSets would never get pods`;
  return undefined;
}

// The control plane first: the toolchain's install (a 300 MB plugin copy) is made only for a run.
const cpMissing = k8sMissing();
const toolchain = cpMissing ? { missing: cpMissing } : pulumiToolchain({ kubernetes: true });
const missing = "missing" in toolchain ? toolchain.missing : undefined;
if (missing)
  console.warn(
    `\n*** SKIPPED: the Kubernetes real-engine suite (k8s-pulumi.e2e.test.ts) needs a Pulumi toolchain with the kubernetes provider ${KUBERNETES_PROVIDER_VERSION} and the test control plane: ${missing} ***\n`,
  );

const API_KEY = `k8s-e2e-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
let cp: ControlPlane | undefined;
let env: Record<string, string> = {};
let project: PulumiProject;
const summary: string[] = [];

function kubectl(args: string[], input?: string) {
  return spawnSync(path.join(env.CP_BIN, "kubectl"), ["--kubeconfig", env.KUBECONFIG, ...args], {
    input,
    encoding: "utf8",
    maxBuffer: 256 << 20,
  });
}
function kubectlOk(args: string[], input?: string): string {
  const r = kubectl(args, input);
  if (r.status !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${r.status}: ${r.stderr.trim()}`);
  return r.stdout;
}
const items = (args: string[]): any[] => JSON.parse(kubectlOk([...args, "-o", "json"])).items;

/** `npm run plan -- <stack> --json` with overrides (`--<dotted key> <value>`), as the project's CLI prints it. */
function planJson(stack: string, overrides: Record<string, unknown> = {}): any {
  const args = Object.entries(overrides).flatMap(([k, v]) => [`--${k}`, String(v)]);
  const r = spawnSync("node", [path.join(ROOT, "dist", "bin", "plan.js"), stack, "--json", ...args], {
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) throw new Error(`plan ${stack} ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
/** Each service's plan (one for a stack without [services.*]). */
const servicePlans = (plan: any): any[] => (plan.services ? Object.values(plan.services) : [plan]);
const targetOf = (plan: any) => servicePlans(plan)[0].config.target;

/** Every object the program renders for `stack` as Pulumi stack `stack`, with the API key set. */
function renderedObjects(stack: string, overrides: Record<string, unknown>) {
  const file = path.join(ROOT, "stacks", `${stack}.toml`);
  const services = loadStackText(
    fs.readFileSync(file, "utf8"),
    file,
    overridesFromObject(overrides),
    path.dirname(file),
  );
  return allK8sStackObjects(renderK8sStack(buildStackPlan(services, stack), ["apiKey"]));
}

/** The kubernetes resources in the stack's Pulumi state (not the provider): their kind, name, namespace and uid. */
async function stateObjects(): Promise<{ urn: string; kind: string; name: string; namespace?: string; uid: string }[]> {
  const exported = JSON.parse((await project.ok(["stack", "export"])).stdout);
  return (exported.deployment.resources ?? [])
    .filter((r: any) => r.type.startsWith("kubernetes:") && r.custom)
    .map((r: any) => ({
      urn: r.urn,
      kind: r.outputs.kind,
      name: r.outputs.metadata.name,
      namespace: r.outputs.metadata.namespace,
      uid: r.outputs.metadata.uid,
    }));
}

/** `kubectl get` resource name of a kind (lower case, with its group), for a kind the fleet renders. */
const GROUPS: Record<string, string> = {
  StatefulSet: "apps",
  Deployment: "apps",
  PodDisruptionBudget: "policy",
  Role: "rbac.authorization.k8s.io",
  RoleBinding: "rbac.authorization.k8s.io",
  LeaderWorkerSet: "leaderworkerset.x-k8s.io",
  InferencePool: "inference.networking.k8s.io",
  PodMonitor: "monitoring.coreos.com",
};
const resourceOf = (kind: string) => (GROUPS[kind] ? `${kind.toLowerCase()}.${GROUPS[kind]}` : kind.toLowerCase());
/** Kinds a fleet's objects make in its namespace, beside those it renders. */
const DERIVED = ["pod", "persistentvolumeclaim", "replicaset.apps", "controllerrevision.apps"];

/** The live objects of the given kinds in `ns`, as `Kind/name` -> uid. */
function live(ns: string, kinds: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const o of items(["get", [...new Set(kinds)].join(","), "-n", ns]))
    out.set(`${o.kind}/${o.metadata.name}`, o.metadata.uid);
  return out;
}

/** Labels every fake node with each node_selector of the plan, so the stack schedules as written. */
function labelNodes(plan: any) {
  const selector = Object.assign({}, ...servicePlans(plan).map((p) => p.config.target.node_selector ?? {}));
  const pairs = Object.entries(selector).map(([k, v]) => `${k}=${v}`);
  if (pairs.length) kubectlOk(["label", "nodes", "--all", "--overwrite", ...pairs]);
}

interface Precreated {
  /** What must survive destroy: `kubectl get` arguments. */
  survivors: string[][];
  /** Removes what the test made (after the checks). */
  remove: () => void;
}

/**
 * What the stack's user has before `pulumi up`: a ConfigMap with the fleet's labels in `default`
 * (destroy must not go by labels); for a model cache on a PVC, the namespace and the claim bound to
 * a hostPath PersistentVolume (kwok's scheduler binds no pod to an unbound claim), with a ConfigMap
 * of the user's beside it; for a disk offload tier, its StorageClass and one PersistentVolume per
 * engine pod for the claims the workloads make.
 */
function precreate(stack: string, plan: any): Precreated {
  const t = targetOf(plan);
  const ns: string = plan.namespace.name;
  const base = stack;
  const docs: object[] = [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: `${base}-not-the-fleets`,
        namespace: "default",
        labels: { "app.kubernetes.io/name": "vllm-fleet", "app.kubernetes.io/instance": base },
      },
      data: { owner: "the test" },
    },
  ];
  const survivors = [["configmap", `${base}-not-the-fleets`, "-n", "default"]];
  const removals: string[][] = [["delete", "configmap", `${base}-not-the-fleets`, "-n", "default"]];
  const pvs: string[] = [];
  if (t.model_cache?.pvc) {
    const claim: string = t.model_cache.pvc;
    docs.push(
      { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } },
      {
        apiVersion: "v1",
        kind: "PersistentVolume",
        metadata: { name: `${base}-${claim}` },
        spec: {
          capacity: { storage: "300Gi" },
          accessModes: ["ReadWriteMany"],
          persistentVolumeReclaimPolicy: "Retain",
          storageClassName: "",
          hostPath: { path: `/mnt/${claim}` },
          claimRef: { namespace: ns, name: claim },
        },
      },
      {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: claim, namespace: ns },
        spec: {
          accessModes: ["ReadWriteMany"],
          storageClassName: "",
          volumeName: `${base}-${claim}`,
          resources: { requests: { storage: "300Gi" } },
        },
      },
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "users-own", namespace: ns }, data: { a: "b" } },
    );
    survivors.push(["namespace", ns], ["pvc", claim, "-n", ns], ["configmap", "users-own", "-n", ns]);
    pvs.push(`${base}-${claim}`);
    removals.push(["delete", "namespace", ns, "--wait=true"]);
  }
  const disk = servicePlans(plan).find((p) => p.config.kv_cache_offload?.disk);
  if (disk) {
    const sc: string = t.disk_offload_storage_class;
    docs.push({
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: sc },
      provisioner: "kubernetes.io/no-provisioner",
      volumeBindingMode: "Immediate",
    });
    for (let k = 0; k < plan.totals.nodes; k++) {
      docs.push({
        apiVersion: "v1",
        kind: "PersistentVolume",
        metadata: { name: `${base}-kv-${k}` },
        spec: {
          capacity: { storage: t.disk_offload_size },
          accessModes: ["ReadWriteOnce"],
          persistentVolumeReclaimPolicy: "Retain",
          storageClassName: sc,
          hostPath: { path: `/mnt/kv-${k}` },
        },
      });
      pvs.push(`${base}-kv-${k}`);
    }
    survivors.push(["storageclass", sc]);
    removals.push(["delete", "storageclass", sc]);
  }
  for (const pv of pvs) survivors.push(["pv", pv]);
  if (pvs.length) removals.push(["delete", "pv", ...pvs, "--wait=false"]);
  kubectlOk(
    ["apply", "--server-side", "--field-manager=the-test", "-f", "-"],
    docs.map((d) => JSON.stringify(d)).join("\n"),
  );
  if (t.model_cache?.pvc)
    waitFor(
      `${t.model_cache.pvc} Bound`,
      30,
      () => kubectl(["get", "pvc", t.model_cache.pvc, "-n", ns, "-o", "jsonpath={.status.phase}"]).stdout === "Bound",
    );
  return { survivors, remove: () => removals.forEach((r) => kubectl([...r, "--ignore-not-found"])) };
}

function waitFor(what: string, seconds: number, ok: () => boolean): number {
  const started = Date.now();
  while (!ok()) {
    if (Date.now() - started > seconds * 1000) throw new Error(`${what}: not after ${seconds} s`);
    spawnSync("sleep", ["0.5"]);
  }
  return (Date.now() - started) / 1000;
}

/** Pods of `ns` with their Ready condition. */
const podsReady = (ns: string) =>
  new Map<string, boolean>(
    items(["get", "pods", "-n", ns]).map((p) => [
      p.metadata.name,
      (p.status.conditions ?? []).some((c: any) => c.type === "Ready" && c.status === "True"),
    ]),
  );

/**
 * Every host the outputs name, checked against the cluster: `<svc>.<ns>.svc.<domain>` must be a
 * live Service declaring the port; `<pod>.<sub>.<ns>.svc.<domain>` a live pod with that hostname
 * and subdomain, under a live headless Service `<sub>`, with a container declaring the port.
 * Returns how many addresses were checked.
 */
function checkAddresses(outputs: any, ns: string, domain: string): number {
  const addresses = new Set<string>();
  const walk = (v: unknown) => {
    if (typeof v === "string" && /^https?:\/\//.test(v)) addresses.add(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(outputs.islands);
  walk(outputs.endpoints);
  for (const island of outputs.islands) {
    if (island.mooncake) addresses.add(`tcp://${island.mooncake.master}`);
    for (const p of island.pods) {
      expect(p.host.startsWith(`${p.pod}.`), `${p.host} names pod ${p.pod}`).toBe(true);
      addresses.add(`tcp://${p.host}:0`);
    }
  }
  const services = new Map(items(["get", "services", "-n", ns]).map((s) => [s.metadata.name, s]));
  const pods = new Map(items(["get", "pods", "-n", ns]).map((p) => [p.metadata.name, p]));
  const suffix = `.${ns}.svc.${domain}`;
  for (const a of addresses) {
    const url = new URL(a);
    expect(url.hostname.endsWith(suffix), `${a}: in namespace ${ns}`).toBe(true);
    const labels = url.hostname.slice(0, -suffix.length).split(".");
    const port = Number(url.port);
    if (labels.length === 1) {
      const svc = services.get(labels[0]);
      expect(svc, `${a}: Service ${labels[0]}`).toBeDefined();
      expect(
        svc.spec.ports.map((p: any) => p.port),
        `${a}: a port of Service ${labels[0]}`,
      ).toContain(port);
    } else {
      expect(labels.length, `${a}: <pod>.<subdomain>`).toBe(2);
      const [name, sub] = labels;
      const pod = pods.get(name);
      expect(pod, `${a}: pod ${name}`).toBeDefined();
      expect([pod.spec.hostname, pod.spec.subdomain], `${a}: pod ${name}'s hostname and subdomain`).toEqual([
        name,
        sub,
      ]);
      expect(services.get(sub)?.spec.clusterIP, `${a}: headless Service ${sub}`).toBe("None");
      if (port) {
        const declared = pod.spec.containers.flatMap((c: any) => (c.ports ?? []).map((p: any) => p.containerPort));
        expect(declared, `${a}: a container port of pod ${name}`).toContain(port);
      }
    }
  }
  return addresses.size;
}

/** `pulumi preview --json`'s steps as `op urn` lines. */
async function previewSteps(): Promise<{ op: string; urn: string }[]> {
  const r = await project.ok(["preview", "--json"]);
  return JSON.parse(r.stdout).steps ?? [];
}

const secs = (ms: number) => (ms / 1000).toFixed(1);

/**
 * The router of an island with LeaderWorkerSet engines is created once they are Ready (the
 * island's readiness Command waits for them): no LWS pod of an island became Ready in a
 * later second than that island's router Deployment was created (one-second timestamps).
 */
function checkRouterAfterLws(stack: string, ns: string): string | undefined {
  const lwsPods = items(["get", "pods", "-n", ns, "-l", "leaderworkerset.sigs.k8s.io/name"]);
  if (!lwsPods.length) return undefined;
  // An island of a service: its pods and its router carry both labels (components/kubernetes/render-context.ts).
  const islandOf = (o: any) =>
    `${o.metadata.labels["vllm-fleet/service"] ?? ""}/${o.metadata.labels["vllm-fleet/island"] ?? ""}`;
  const routers = new Map(
    items(["get", "deployments", "-n", ns, "-l", "app.kubernetes.io/component=router"]).map((r) => [islandOf(r), r]),
  );
  let last = 0;
  for (const p of lwsPods) {
    const router = routers.get(islandOf(p));
    expect(router, `${stack}: the router of pod ${p.metadata.name}'s island ${islandOf(p)}`).toBeDefined();
    const ready = Date.parse(
      p.status.conditions.find((c: any) => c.type === "Ready" && c.status === "True")?.lastTransitionTime,
    );
    last = Math.max(last, ready);
    expect(
      ready <= Date.parse(router.metadata.creationTimestamp),
      `${stack}: pod ${p.metadata.name} Ready (${new Date(ready).toISOString()}) by the time router ${router.metadata.name} was created (${router.metadata.creationTimestamp})`,
    ).toBe(true);
  }
  return `${lwsPods.length} LWS pods Ready by ${new Date(last).toISOString()}, each before its island's router was created`;
}

describe.skipIf(!!missing)("every stacks/k8s-*.toml through the real Pulumi engine on the test control plane", () => {
  beforeAll(async () => {
    // One cluster for the file, sized for the largest stack (and the scaled one): each engine pod asks for at most one node's 8 GPUs.
    const nodes = Math.max(
      ...STACKS.map((s) => planJson(s, USER_OVERRIDES[s]).totals.nodes),
      STACKS.includes(SCALED) ? planJson(SCALED, SCALE_UP).totals.nodes : 0,
    );
    const started = Date.now();
    cp = await startControlPlane({ CP_FAKE_NODES: String(nodes) });
    if (cp.upCode !== 0) throw new Error("the control plane came up without LWS");
    env = cp.env;
    project = new PulumiProject(toolchain as Toolchain);
    const version = (await project.ok(["version"])).stdout.trim();
    const plugins = (await project.ok(["plugin", "ls"])).stdout;
    expect(plugins).toMatch(
      new RegExp(`kubernetes\\s+resource\\s+${KUBERNETES_PROVIDER_VERSION.replaceAll(".", "\\.")}`),
    );
    const line = `control plane up in ${secs(Date.now() - started)} s with ${nodes} fake GPU nodes (ports from ${PORT_BASE}); pulumi CLI ${version}, kubernetes provider ${KUBERNETES_PROVIDER_VERSION} from ${(toolchain as Toolchain).from}`;
    console.log(`${line}${only ? `\nonly FLEET_K8S_STACKS: ${STACKS.join(", ")}` : ""}`);
    summary.push(line);
  }, 120_000);

  afterAll(() => {
    console.log(`Kubernetes real engine:\n${summary.join("\n")}\n\npulumi runs:\n${project?.log.join("\n")}`);
    project?.dispose();
    disposeToolchain(toolchain as Toolchain);
    cp?.down();
  }, 120_000);

  it(`${STUCK.stack} with pods no node can hold: up fails within stuck_after with the scheduler's reason, naming the pod, and destroy cleans up`, async () => {
    const { stack, overrides } = STUCK;
    const ns: string = planJson(stack).namespace.name;
    await project.ok(["stack", "init", `${stack}-stuck`]);
    try {
      await project.ok(["config", "set", "kubeconfig", env.KUBECONFIG]);
      await project.ok(["config", "set", "stackFile", `stacks/${stack}.toml`]);
      await project.ok(["config", "set-all", "--path", ...configPairs({}, overrides)]);
      // Before the readiness wait, this up printed "0/1 Pods ready" until startup_timeout + 600 s.
      const up = await project.pulumi(["up", "--yes", "--skip-preview"], { timeoutMs: 240_000 });
      const text = up.stdout + up.stderr;
      expect(up.code, text.slice(-3000)).not.toBe(0);
      expect(text).toMatch(
        /FAILED after \d+ s: LeaderWorkerSet \S+: pod \S+ cannot be scheduled: 0\/\d+ nodes are available: .*node\(s\) didn't match Pod's node affinity\/selector.*kubernetes\.stuck_after = 20/,
      );
      expect(up.ms).toBeLessThan(120_000);
      // The router never started: it waits for its engines.
      expect(items(["get", "deployments", "-n", ns, "-l", "app.kubernetes.io/component=router"])).toEqual([]);
      summary.push(`${stack} unschedulable: up failed in ${secs(up.ms)} s with the scheduler's reason`);
      const destroy = await project.ok(["destroy", "--yes", "--skip-preview"], { timeoutMs: 600_000 });
      expect(kubectl(["get", "namespace", ns]).stderr).toMatch(/NotFound/);
      summary.push(`${stack} unschedulable: destroy ${secs(destroy.ms)} s`);
      await project.ok(["stack", "rm", "--yes"]);
    } finally {
      if ((await project.pulumi(["stack", "select", `${stack}-stuck`])).code === 0) {
        await project.pulumi(["destroy", "--yes", "--skip-preview"], { timeoutMs: 600_000 });
        await project.pulumi(["stack", "rm", "--yes", "--force"]);
      }
      waitFor(`namespace ${ns} gone`, 120, () => kubectl(["get", "namespace", ns]).status !== 0);
    }
  });

  for (const stack of STACKS)
    it(`${stack}: up, outputs equal the live objects, no changes on preview and refresh${stack === SCALED ? ", a third replica only creates" : ""}, destroy leaves nothing and only what the fleet made goes`, async () => {
      const overrides = USER_OVERRIDES[stack] ?? {};
      const plan = planJson(stack, overrides);
      const t = targetOf(plan);
      // The namespace as the plan chose it (a fleet's own by default) and whether the fleet creates it.
      const { name: ns, created: nsCreated }: { name: string; created: boolean } = plan.namespace;
      labelNodes(plan);
      const pre = precreate(stack, plan);
      const times: string[] = [];
      let scaling = "";
      await project.ok(["stack", "init", stack]);
      try {
        await project.ok(["config", "set", "kubeconfig", env.KUBECONFIG]);
        await project.ok(["config", "set", "stackFile", `stacks/${stack}.toml`]);
        await project.ok(["config", "set", "--secret", "apiKey"], { input: API_KEY });
        if (t.model_cache?.pvc) {
          // A fleet that would create (and on destroy delete) the namespace holding the user's claim is
          // refused before anything is created, naming the keys: it could never start, and its destroy
          // would take the claim with the namespace.
          await project.ok([
            "config",
            "set-all",
            "--path",
            ...configPairs({}, { "kubernetes.create_namespace": true }),
          ]);
          const refused = await project.pulumi(["up", "--yes", "--skip-preview"], { timeoutMs: 600_000 });
          expect(refused.code, "up with create_namespace = true and a PVC model cache").not.toBe(0);
          expect(refused.stdout + refused.stderr).toMatch(/kubernetes\.model_cache\.pvc/);
          expect(refused.stdout + refused.stderr).toMatch(/kubernetes\.create_namespace/);
          expect(await stateObjects()).toEqual([]);
          for (const sv of pre.survivors) expect(kubectl(["get", ...sv]).status, `${sv.join(" ")} untouched`).toBe(0);
          times.push(`create_namespace = true refused in ${secs(refused.ms)} s`);
          await project.ok(["config", "rm", "--path", "overrides"]);
        }
        if (Object.keys(overrides).length)
          await project.ok(["config", "set-all", "--path", ...configPairs({}, overrides)]);

        // 1. up: every object of the state live, as many as rendered; the engine pods Ready.
        const up = await project.ok(["up", "--yes", "--skip-preview"], { timeoutMs: 600_000 });
        expect(up.stdout + up.stderr).not.toContain(API_KEY);
        const ready = podsReady(ns);
        const inState = await stateObjects();
        const readyCount = [...ready.values()].filter(Boolean).length;
        times.push(`up ${secs(up.ms)} s, ${inState.length} objects, ${readyCount} pods Ready`);
        const rendered = renderedObjects(stack, overrides);
        expect(inState.length, "objects in Pulumi's state vs rendered").toBe(rendered.length);
        const liveObjects = live(
          ns,
          inState.filter((o) => o.kind !== "Namespace").map((o) => resourceOf(o.kind)),
        );
        for (const o of inState)
          if (o.kind === "Namespace")
            expect(
              items(["get", "namespace", "--field-selector", `metadata.name=${o.name}`]).map((n) => n.metadata.uid),
            ).toEqual([o.uid]);
          else
            expect(liveObjects.get(`${o.kind}/${o.name}`), `${o.kind}/${o.name} live with the state's uid`).toBe(o.uid);
        const outputs = await project.outputs();
        const enginePods: string[] = outputs.islands.flatMap((i: any) => i.pods.map((p: any) => p.pod));
        expect(enginePods.length, "engine pods in the outputs vs the plan").toBe(plan.totals.nodes);
        const notReady = enginePods.filter((p) => !ready.get(p));
        expect(notReady, "engine pods not Ready when up returned").toEqual([]);
        const lwsOrder = checkRouterAfterLws(stack, ns);
        if (lwsOrder) summary.push(`${stack}: ${lwsOrder}`);

        // 2. the outputs are the live objects.
        expect(outputs.islands.every((i: any) => i.namespace === ns)).toBe(true);
        // The plan's admin URLs, island by island (an SGLang wide-EP worker serves none: fewer than engines).
        const plannedAdmin = servicePlans(plan).flatMap((p) => p.islands.map((i: any) => i.endpoints.engines.length));
        expect(outputs.islands.map((i: any) => i.adminUrls.length)).toEqual(plannedAdmin);
        const checked = checkAddresses(outputs, ns, t.cluster_domain);
        expect(checked).toBeGreaterThanOrEqual(plannedAdmin.reduce((a, b) => a + b, 0) + plan.totals.routers);

        // 3. nothing to change.
        await project.ok(["preview", "--expect-no-changes"]);
        await project.ok(["refresh", "--yes", "--expect-no-changes"]);

        // 4. scaling: a third replica is created; nothing is replaced or deleted.
        if (stack === SCALED) {
          await project.ok(["config", "set-all", "--path", ...configPairs({}, { ...overrides, ...SCALE_UP })]);
          const steps = await previewSteps();
          const ops = steps.map((s) => s.op);
          expect(
            steps.filter((s) => !["same", "create", "update"].includes(s.op)).map((s) => `${s.op} ${s.urn}`),
            "steps other than same, create and update",
          ).toEqual([]);
          expect(ops.filter((o) => o === "create").length).toBeGreaterThan(0);
          const scaled = await project.ok(["up", "--yes", "--skip-preview"], { timeoutMs: 600_000 });
          const after = await stateObjects();
          const uids = new Map(after.map((o) => [o.urn, o.uid]));
          for (const o of inState) expect(uids.get(o.urn), `${o.urn} kept`).toBe(o.uid);
          expect(after.length).toBe(renderedObjects(stack, { ...overrides, ...SCALE_UP }).length);
          const scaledPlan = planJson(stack, { ...overrides, ...SCALE_UP });
          const scaledOut = await project.outputs();
          const pods: string[] = scaledOut.islands.flatMap((i: any) => i.pods.map((p: any) => p.pod));
          expect(pods.length).toBe(scaledPlan.totals.nodes);
          const readyNow = podsReady(ns);
          expect(pods.filter((p) => !readyNow.get(p))).toEqual([]);
          checkAddresses(scaledOut, ns, t.cluster_domain);
          scaling = `scaled to ${scaledPlan.totals.nodes} replicas in ${secs(scaled.ms)} s (${ops.filter((o) => o === "create").length} created, ${ops.filter((o) => o === "update").length} updated, ${inState.length} uids kept)`;
        }

        // 5. destroy: nothing of the fleet's left, nothing else gone.
        const kinds = [
          ...new Set([...inState.filter((o) => o.kind !== "Namespace").map((o) => resourceOf(o.kind)), ...DERIVED]),
        ];
        const destroy = await project.ok(["destroy", "--yes", "--skip-preview"], { timeoutMs: 600_000 });
        times.push(`destroy ${secs(destroy.ms)} s`);
        if (nsCreated) expect(kubectl(["get", "namespace", ns]).stderr).toMatch(/NotFound/);
        else {
          // Pods and the claims workloads made go after their owners (garbage collection): bounded wait.
          // The user's own, and what the control plane puts in every namespace.
          const mine = new Set([
            ...pre.survivors.filter((s) => s.includes(ns)).map((s) => s[1]),
            "kube-root-ca.crt",
            "default",
          ]);
          const leftover = () => [...live(ns, kinds).keys()].filter((k) => !mine.has(k.split("/")[1]));
          try {
            waitFor("the fleet's objects gone", 60, () => leftover().length === 0);
          } catch {
            expect(leftover(), `left in ${ns} after destroy`).toEqual([]);
          }
        }
        for (const s of pre.survivors) expect(kubectl(["get", ...s]).status, `${s.join(" ")} survives destroy`).toBe(0);
        await project.ok(["stack", "rm", "--yes"]);
      } finally {
        const line = `${stack}: ${times.join(", ")}${scaling ? `; ${scaling}` : ""}`;
        summary.push(line);
        console.log(line);
        if ((await project.pulumi(["stack", "select", stack])).code === 0) {
          await project.pulumi(["destroy", "--yes", "--skip-preview"], { timeoutMs: 600_000 });
          await project.pulumi(["stack", "rm", "--yes", "--force"]);
        }
        pre.remove();
        // The next stack creates the namespace again: wait until this one is gone.
        waitFor(`namespace ${ns} gone`, 120, () => kubectl(["get", "namespace", ns]).status !== 0);
      }
    });
});
