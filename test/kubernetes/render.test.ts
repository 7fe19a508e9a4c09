import { engineContainers, engineNamed } from "../../components/plan/engines";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import YAML from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { expectShellcheckClean } from "../shellcheck";
import { loadConfigText } from "../../components/config";
import { loadStackText } from "../../components/config/load";
import { buildPlan, buildStackPlan } from "../../components/planner";
import type { StackPlan } from "../../components/plan/stack-plan";
import type { DeploymentPlan, EngineProcess } from "../../components/plan/deployment-plan";
import { kubernetesEngineFlags } from "../../components/kubernetes";
import {
  allK8sObjects,
  allK8sStackObjects,
  islandK8sObjects,
  k8sEndpoints,
  renderK8sFleet,
  renderK8sStack,
  type K8sFleetObjects,
} from "../../components/kubernetes/fleet-objects";
import { k8sNames } from "../../components/kubernetes/names";
import { podDependencies, podReferences, podTemplates } from "../../components/kubernetes/rollout";
import type { Container, K8sObject, PodTemplateSpec } from "../../components/kubernetes/objects";
import { checkArgv } from "../../components/upstream/check";
import eppManifest from "../../components/upstream/llm-d-epp.json";
import { K8S_STACKS, load, runBuiltCli, SERVICES_STACKS, SLURM_STACKS, stackText } from "../helpers";
import { k8sValidator, kubeletExpand, type Validator } from "./validate";
import { lwsEnv, plannedPodArgv, POD_IP } from "./planned-argv";
import { ENGINE_READY_TIMEOUT_S } from "../../components/config/timeouts";
import { WORKER_STARTUP_TIMEOUT_S } from "../../components/plan/router-plan";

/** The engine container of a pod, whichever engine runs in it. */
const isEngineContainer = (c: { name?: unknown }) => engineContainers().includes(c.name as string);

const STANDINS = path.join(__dirname, "..", "fixtures", "standins", "bin");

function k8sPlan(text: string, stack: string): DeploymentPlan {
  return buildPlan(loadConfigText(text, `${stack}.toml`), stack);
}
const stackPlan = (name: string) => k8sPlan(stackText(name), name);

/** Kubernetes stacks of several services ([services.<name>]). */
const K8S_SERVICES_STACKS = SERVICES_STACKS.filter((n) => n.startsWith("k8s-"));
const servicesPlan = (name: string): StackPlan => buildStackPlan(loadStackText(stackText(name), `${name}.toml`), name);

/** Every Kubernetes fleet the per-fleet checks render: each single-service stack, and each service of a stack of services. */
const K8S_FLEETS: [string, DeploymentPlan][] = [
  ...K8S_STACKS.map((n): [string, DeploymentPlan] => [n, stackPlan(n)]),
  ...K8S_SERVICES_STACKS.flatMap((n) =>
    servicesPlan(n).services.map((p): [string, DeploymentPlan] => [`${n} [services.${p.service}]`, p]),
  ),
];

/** The same stack file with its [slurm] table (and sub-tables) replaced by `[kubernetes]`. */
function swapToKubernetes(text: string): string {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => /^\[slurm[\].]/.test(l));
  const end = lines.findIndex((l, i) => i > start && /^\[/.test(l) && !/^\[slurm[\].]/.test(l));
  const kept = [...lines.slice(0, start), ...(end < 0 ? [] : lines.slice(end))].filter(
    (l) => !/^\s*(output_dir|dry_run)\s*=/.test(l),
  );
  // The RDMA device: cross-pod DeepEP (P/D, wide-EP) and Mooncake over RDMA are refused without it;
  // LMCache offload without its image.
  return `${kept.join("\n")}\n[kubernetes]\nrouter_image = "r.example/vllm-router:1"\nlmcache_image = "r.example/lmcache:1"\nextra_resources = { "rdma/ib" = "1" }\n`;
}

/** Every pod template of a fleet with the engines it runs (LWS worker template: all workers). */
function templates(
  fleet: K8sFleetObjects,
  plan: DeploymentPlan,
): { template: PodTemplateSpec; engines: EngineProcess[]; worker: boolean }[] {
  return fleet.islands
    .flatMap((i) =>
      i.replicas.flatMap(({ workload, object }) => {
        if (object.kind === "StatefulSet")
          return [{ template: object.spec.template as PodTemplateSpec, engines: [workload.engines[0]], worker: false }];
        if (object.kind !== "LeaderWorkerSet") throw new Error(`unexpected ${object.kind}`);
        return [
          { template: object.spec.leaderWorkerTemplate.leaderTemplate, engines: [workload.engines[0]], worker: false },
          {
            template: object.spec.leaderWorkerTemplate.workerTemplate,
            engines: workload.engines.slice(1),
            worker: true,
          },
        ];
      }),
    )
    .map((t) => ({ ...t, engines: t.engines.map((e) => plan.islands[e.island].engines.find((x) => x.id === e.id)!) }));
}

const containers = (t: PodTemplateSpec): Container[] => [
  ...((t.spec as any).initContainers ?? []),
  ...(t.spec as any).containers,
];
const allContainers = (objects: K8sObject[]): Container[] =>
  objects.flatMap((o) => {
    if (o.kind === "StatefulSet" || o.kind === "Deployment") return containers(o.spec.template as PodTemplateSpec);
    if (o.kind === "LeaderWorkerSet")
      return [
        ...containers(o.spec.leaderWorkerTemplate.leaderTemplate),
        ...containers(o.spec.leaderWorkerTemplate.workerTemplate),
      ];
    return [];
  });

/**
 * Env of a container as kubelet resolves it (downward API: POD_IP; secrets: placeholders), after
 * `injected` (LeaderWorkerSet's webhook puts its variables first: lwsEnv).
 */
function containerEnv(c: Container, injected: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { ...injected };
  for (const e of (c.env ?? []) as any[])
    env[e.name] =
      e.value !== undefined
        ? kubeletExpand(e.value, env)
        : e.valueFrom.fieldRef
          ? POD_IP
          : `<secret:${e.valueFrom.secretKeyRef.key}>`;
  return env;
}

/**
 * Runs the engine container's exact command under bash with a recording `vllm` and a harmless
 * `find`; `lws`: what LeaderWorkerSet injects into the pod (lwsEnv), `extraEnv` overrides.
 */
function runEngine(
  c: Container,
  extraEnv: Record<string, string>,
  lws: Record<string, string> = {},
  program = "vllm",
): string[] {
  const env = { ...containerEnv(c, lws), ...extraEnv };
  const [shell, flag, script] = (c.command as string[]).map((s) => kubeletExpand(s, env));
  expect([shell, flag]).toEqual(["/bin/bash", "-c"]);
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), "k8s-vllm-"));
  fs.writeFileSync(path.join(bin, program), '#!/bin/sh\nfor a in "$@"; do printf \'%s\\0\' "$a"; done\n', {
    mode: 0o755,
  });
  // find is shadowed: the script's /dev/shm cleanup must not touch this machine.
  const run = spawnSync("bash", ["-c", `find() { :; }\n${script}`], {
    encoding: "utf8",
    env: { ...process.env, ...env, PATH: `${bin}:${process.env.PATH}` },
  });
  expect(run.status, run.stderr).toBe(0);
  return [program, ...run.stdout.split("\0").slice(0, -1)];
}

/** The plan's argv for one engine, with references resolved the way the pod sees them. */

let validate: Validator;
beforeAll(async () => {
  validate = await k8sValidator();
});

describe.each(K8S_FLEETS)("%s on Kubernetes", (_name, plan) => {
  const fleet = renderK8sFleet(plan, ["hfToken", "apiKey"]);
  const objects = allK8sObjects(fleet);

  it("every object validates: built-in kinds against the Kubernetes OpenAPI schema, LWS and InferencePool against their CRDs", () => {
    for (const o of objects) expect(validate(o as any), `${o.kind} ${o.metadata.name}`).toEqual([]);
  });

  it("each engine pod runs exactly the planned command line, which passes its engine's manifest", () => {
    for (const { template, engines, worker } of templates(fleet, plan)) {
      const vllm = containers(template).find((c) => isEngineContainer(c))!;
      engines.forEach((e, k) => {
        // The Secret's key reaches the pod as VLLM_API_KEY; the script hands it to --api-key at exec.
        const lws = lwsEnv(plan, e);
        expect(lws?.LWS_WORKER_INDEX).toBe(worker ? String(k + 1) : lws && "0");
        const argv = runEngine(vllm, { VLLM_API_KEY: "k8s-test-key" }, lws, String(e.argv[0]));
        // Serving vLLM engines also keep probes and scrapes out of their access log (issue 20 #9)
        // and drain in-flight requests within the pod's grace period (#8); SGLang has neither flag.
        const vllmPodFlags = [
          "--disable-access-log-for-endpoints",
          "/health,/metrics",
          "--shutdown-timeout",
          String((template.spec as any).terminationGracePeriodSeconds - 15),
        ];
        expect(argv).toEqual([
          ...plannedPodArgv(plan, e),
          ...(e.port !== undefined
            ? ["--api-key", "k8s-test-key", ...(e.engine === "sglang" ? [] : vllmPodFlags)]
            : []),
        ]);
        expect(JSON.stringify(vllm)).not.toContain("k8s-test-key");
        if (e.engine === "sglang") {
          expect(vllm.name).toBe("sglang");
          expect(checkArgv("sglang", argv.slice(3))).toEqual([]);
        } else expect(checkArgv("vllm", argv.slice(2))).toEqual([]);
      });
    }
  });

  it("issue 20 #6: every container requests CPU and memory, memory limit = request; engines also request ephemeral storage", () => {
    for (const c of allContainers(objects)) {
      const r = c.resources as any;
      expect(r?.requests?.cpu, `${c.name} requests CPU`).toBeDefined();
      expect(r?.requests?.memory, `${c.name} requests memory`).toBeDefined();
      expect(r.limits?.memory, `${c.name}: memory limit = request`).toBe(r.requests.memory);
      if (isEngineContainer(c)) expect(r.requests["ephemeral-storage"]).toBeDefined();
    }
  });

  it("issue 20 #7: engines' liveness is HTTP GET /health (a hung engine keeps its port open); startup allows the engine ready timeout", () => {
    for (const { template, engines } of templates(fleet, plan)) {
      const vllm = containers(template).find((c) => isEngineContainer(c))!;
      const port = engines[0].port;
      if (port === undefined) continue;
      expect(vllm.livenessProbe).toMatchObject({ httpGet: { path: "/health", port } });
      const s = vllm.startupProbe as any;
      expect(s.periodSeconds * s.failureThreshold).toBeGreaterThanOrEqual(ENGINE_READY_TIMEOUT_S);
    }
  });

  it("issue 20 #9: every engine has PYTHONHASHSEED, and its Hugging Face and vLLM caches on size-limited volumes", () => {
    for (const { template } of templates(fleet, plan)) {
      const vllm = containers(template).find((c) => isEngineContainer(c))!;
      const env = containerEnv(vllm);
      expect(env.PYTHONHASHSEED).toBe("0");
      const vols = new Map(((template.spec as any).volumes as any[]).map((v) => [v.name, v]));
      for (const dir of [env.HF_HOME, env.VLLM_CACHE_ROOT]) {
        const mount = (vllm.volumeMounts as any[]).find((m) => m.mountPath === dir);
        expect(mount, `${dir} is a volume, not the writable layer`).toBeDefined();
        const v = vols.get(mount.name);
        if (v.emptyDir) expect(v.emptyDir.sizeLimit).toBeDefined();
      }
    }
  });

  it("router, EPP, Mooncake and sidecar command lines pass their manifests (the sidecar: its stand-in's parser)", () => {
    for (const c of allContainers(objects)) {
      const env = containerEnv(c);
      const argv = [...((c.command as string[]) ?? []), ...((c.args as string[]) ?? [])].map((s) =>
        kubeletExpand(s, env),
      );
      if (c.name === "vllm-router") expect(checkArgv("vllm-router", argv.slice(1))).toEqual([]);
      if (c.name === "sglang-router") {
        expect(argv.slice(0, 3)).toEqual(["python3", "-m", "sglang_router.launch_router"]);
        expect(checkArgv("sglang-router", argv.slice(3))).toEqual([]);
      }
      if (c.name === "epp") expect(checkArgv("epp", argv)).toEqual([]);
      if (c.name === "mooncake-master") expect(checkArgv("mooncake_master", argv.slice(1))).toEqual([]);
      if (c.name === "mooncake-client") expect(checkArgv("mooncake_client", argv.slice(1))).toEqual([]);
      if (c.name === "routing-proxy") {
        const run = spawnSync(path.join(STANDINS, "pd-sidecar"), argv, {
          encoding: "utf8",
          env: { ...process.env, STANDIN_CHECK_ONLY: "1" },
        });
        expect(run.status, run.stderr).toBe(0);
      }
      if (!isEngineContainer(c))
        for (const s of argv) expect(s, `${c.name}: no unexpanded kubelet reference`).not.toMatch(/\$\(/);
    }
  });

  it("engine scripts pass bash -n and shellcheck", () => {
    for (const { template } of templates(fleet, plan)) {
      const script = kubeletExpand(
        (containers(template).find((c) => isEngineContainer(c))!.command as string[])[2],
        {},
      );
      const n = spawnSync("bash", ["-n"], { input: script, encoding: "utf8" });
      expect(n.status, n.stderr).toBe(0);
      expectShellcheckClean(script);
    }
  });

  it("references resolve: volumes, Secrets, Services, RBAC and the pool's endpoint picker name objects that exist", () => {
    const named = (kind: string) => new Set(objects.filter((o) => o.kind === kind).map((o) => o.metadata.name));
    const podSpecs = objects.flatMap((o) =>
      o.kind === "StatefulSet" || o.kind === "Deployment"
        ? [o.spec.template as any]
        : o.kind === "LeaderWorkerSet"
          ? [o.spec.leaderWorkerTemplate.leaderTemplate, o.spec.leaderWorkerTemplate.workerTemplate]
          : [],
    );
    for (const t of podSpecs) {
      for (const v of t.spec.volumes ?? []) if (v.configMap) expect(named("ConfigMap")).toContain(v.configMap.name);
      for (const c of containers(t)) {
        for (const e of (c.env ?? []) as any[])
          if (e.valueFrom?.secretKeyRef) expect(named("Secret")).toContain(e.valueFrom.secretKeyRef.name);
        for (const m of (c.volumeMounts ?? []) as any[])
          expect([...(t.spec.volumes ?? []).map((v: any) => v.name), "kv-disk"]).toContain(m.name);
      }
      if (t.spec.serviceAccountName) expect(named("ServiceAccount")).toContain(t.spec.serviceAccountName);
    }
    for (const o of objects) {
      if (o.kind === "StatefulSet") expect(named("Service")).toContain(o.spec.serviceName);
      if (o.kind === "RoleBinding") {
        expect(named("Role")).toContain(o.roleRef.name);
        for (const s of o.subjects) expect(named("ServiceAccount")).toContain(s.name);
      }
      if (o.kind === "InferencePool") expect(named("Service")).toContain(o.spec.endpointPickerRef.name);
      if (o.kind === "Deployment" || o.kind === "StatefulSet" || o.kind === "LeaderWorkerSet") {
        const tpl =
          o.kind === "LeaderWorkerSet" ? o.spec.leaderWorkerTemplate.leaderTemplate : (o.spec.template as any);
        expect(tpl.metadata.labels).toMatchObject(
          (o.kind === "LeaderWorkerSet" ? {} : (o.spec.selector as any).matchLabels) ?? {},
        );
      }
    }
  });

  it("every object is in the fleet's namespace", () => {
    for (const o of objects) expect(o.metadata).toMatchObject({ namespace: fleet.namespace });
  });

  it("each workload needs exactly the ConfigMaps, Secret, ServiceAccount and RBAC its pods name", () => {
    for (const o of objects.filter((o) => podTemplates(o).length)) {
      const refs = podTemplates(o).map(podReferences);
      const want = objects.filter((x) => {
        const sa = refs.flatMap((r) => (r.serviceAccount ? [r.serviceAccount] : []));
        const binds = (b: K8sObject) =>
          b.kind === "RoleBinding" && b.subjects.some((s) => sa.includes(s.name as string));
        if (x.kind === "ConfigMap") return refs.some((r) => r.configMaps.has(x.metadata.name));
        if (x.kind === "Secret") return refs.some((r) => r.secrets.has(x.metadata.name));
        if (x.kind === "ServiceAccount") return sa.includes(x.metadata.name);
        if (x.kind === "RoleBinding") return binds(x);
        if (x.kind === "Role")
          return objects.some((b) => binds(b) && b.kind === "RoleBinding" && b.roleRef.name === x.metadata.name);
        return false;
      });
      expect(podDependencies(o, objects), o.metadata.name).toEqual(want);
      // The activity monitor reads its ledger through the API, not a mount: its RBAC only.
      if (o.kind === "Deployment" && o.metadata.labels["app.kubernetes.io/component"] === "activity")
        expect(
          podDependencies(o, objects)
            .map((d) => d.kind)
            .filter((k) => k !== "Secret")
            .sort(),
        ).toEqual(["Role", "RoleBinding", "ServiceAccount"]);
      else if (o.kind === "Deployment" && (o.spec.template as any).spec.serviceAccountName)
        expect(
          podDependencies(o, objects)
            .map((d) => d.kind)
            .sort(),
        ).toEqual(["ConfigMap", "ConfigMap", "Role", "RoleBinding", "ServiceAccount"]);
    }
  });

  it("a pod that mounts ConfigMaps carries a hash of exactly their data, so a changed file rolls it", () => {
    for (const o of objects)
      for (const t of podTemplates(o)) {
        const mounted = ((t.spec as any).volumes ?? []).flatMap((v: any) =>
          v.configMap ? [objects.find((c) => c.kind === "ConfigMap" && c.metadata.name === v.configMap.name)!] : [],
        );
        const hash = (t.metadata as any)?.annotations?.["vllm-fleet/config-hash"];
        if (!mounted.length) {
          expect(hash).toBeUndefined();
          continue;
        }
        const h = createHash("sha256");
        for (const c of mounted) for (const text of Object.values(c.data as Record<string, string>)) h.update(text);
        expect(hash, o.metadata.name).toBe(h.digest("hex").slice(0, 16));
      }
  });

  it("every name is a DNS label of at most 63 characters, unique per kind", () => {
    for (const o of objects) expect(o.metadata.name).toMatch(/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/);
    const keys = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const i of fleet.islands) for (const p of i.endpoints.pods) expect(p.pod.length).toBeLessThanOrEqual(63);
  });

  it("outputs: the router and admin URLs are in-cluster DNS names, in the planner's order and roles", () => {
    for (const i of fleet.islands) {
      const island = plan.islands[i.island];
      expect(i.endpoints.roles).toEqual(island.endpoints.engines.map((e) => e.role));
      expect(i.endpoints.adminUrls).toHaveLength(island.endpoints.engines.length);
      for (const u of i.endpoints.adminUrls)
        expect(u).toMatch(
          new RegExp(
            `^http://[a-z0-9.-]+\\.${i.endpoints.namespace}\\.svc\\.cluster\\.local:\\d+${engineNamed(island.engines[0].engine).routes.admin}$`,
          ),
        );
      if (island.router)
        expect(i.endpoints.routerUrl).toBe(
          `http://${k8sNames(plan).routerService(i.island)}.${i.endpoints.namespace}.svc.cluster.local:${island.endpoints.router!.port}/v1`,
        );
    }
  });
});

/** The labels an object selects pods by: a Service's selector, or a workload's, budget's, monitor's or pool's matchLabels. */
function selectorOf(o: K8sObject): Record<string, string> | undefined {
  const spec = (o as any).spec;
  if (o.kind === "Service") return spec.selector;
  return spec?.selector?.matchLabels;
}

describe.each(K8S_SERVICES_STACKS)("%s: several services in one namespace", (name) => {
  const stack = servicesPlan(name);
  const rendered = renderK8sStack(stack, ["hfToken", "apiKey"]);
  const objects = allK8sStackObjects(rendered);

  it("has two named services, each rendered exactly as on its own", () => {
    expect(stack.services.map((p) => p.service)).toEqual(["policy", "judge"]);
    expect(rendered.services).toEqual(stack.services.map((p) => renderK8sFleet(p, ["hfToken", "apiKey"])));
  });

  it("one Namespace and one Secret for the stack; every other object belongs to one service", () => {
    expect(objects.filter((o) => o.kind === "Namespace").map((o) => o.metadata.name)).toEqual([`vllm-fleet-${name}`]);
    expect(objects.filter((o) => o.kind === "Secret").map((o) => o.metadata.name)).toEqual([`${name}-secrets`]);
    for (const f of rendered.services)
      for (const o of f.islands.flatMap(islandK8sObjects)) {
        expect(o.metadata.name, `${o.kind} ${o.metadata.name}`).toContain(`${name}-${f.service}-i`);
        expect(o.metadata.labels["vllm-fleet/service"], `${o.kind} ${o.metadata.name}`).toBe(f.service);
      }
  });

  it("no two objects of the stack share a kind and name, and no two pods a hostname", () => {
    const keys = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(keys.length).toBeGreaterThan(10);
    expect(new Set(keys).size).toBe(keys.length);
    const hosts = stack.services.flatMap((p) => k8sEndpoints(p).flatMap((e) => e.pods.map((pod) => pod.host)));
    expect(new Set(hosts).size).toBe(hosts.length);
    const routers = stack.services.flatMap((p) => k8sEndpoints(p).map((e) => e.routerUrl));
    expect(routers.every((u) => u !== null)).toBe(true);
    expect(new Set(routers).size).toBe(routers.length);
  });

  it("every selector picks pods of its own service only (both services number their islands from 0)", () => {
    // Which service rendered each object: from the per-service renders, not from the labels under test.
    const owned = rendered.services.flatMap((f) =>
      f.islands.flatMap(islandK8sObjects).map((o) => ({ o, service: f.service })),
    );
    const pods = owned.flatMap(({ o, service }) =>
      podTemplates(o).map((t) => ({ labels: (t.metadata as any).labels as Record<string, string>, service })),
    );
    const selectors = owned.filter(({ o }) => selectorOf(o) !== undefined);
    // Router and engine Services, StatefulSets, router Deployments and budgets.
    expect(selectors.length).toBeGreaterThanOrEqual(8);
    for (const { o, service } of selectors) {
      const sel = selectorOf(o)!;
      const matched = pods.filter((p) => Object.entries(sel).every(([k, v]) => p.labels[k] === v));
      expect(matched.length, `${o.kind} ${o.metadata.name} selects some pod`).toBeGreaterThan(0);
      for (const p of matched) expect(p.service, `${o.kind} ${o.metadata.name}`).toBe(service);
    }
  });

  it("every object validates against the Kubernetes OpenAPI schema", () => {
    for (const o of objects) expect(validate(o as any), `${o.kind} ${o.metadata.name}`).toEqual([]);
  });
});

describe("swapping [slurm] for [kubernetes] keeps the fleet", () => {
  it.each(SLURM_STACKS)("%s: same engines, roles and admin order", (name) => {
    // Kubernetes runs one engine per pod: compare with the SLURM plan of one engine per node.
    const perNode = load(stackText(name)).prime_rl ? '\n[vllm_fleet]\nengine_processes = "per_node"\n' : "";
    const slurm = k8sPlan(stackText(name) + perNode, name);
    const kube = k8sPlan(swapToKubernetes(stackText(name)), name);
    expect(kube.target).toBe("kubernetes");
    expect(kube.totals.engines).toBe(slurm.totals.engines);
    expect(kube.islands.map((i) => i.endpoints.engines.map((e) => [e.id, e.role]))).toEqual(
      slurm.islands.map((i) => i.endpoints.engines.map((e) => [e.id, e.role])),
    );
    const fleet = renderK8sFleet(kube, []);
    expect(fleet.islands.map((i) => i.endpoints.roles)).toEqual(
      slurm.islands.map((i) => i.endpoints.engines.map((e) => e.role)),
    );
    // Same admin order: URL k belongs to the engine the SLURM plan lists k-th.
    const names = k8sNames(kube);
    fleet.islands.forEach((i) => {
      const island = slurm.islands[i.island];
      expect(i.endpoints.adminUrls).toEqual(
        island.endpoints.engines.map(
          (e) => `http://${names.pod(kube.islands[i.island], e.url.node).host}:${e.url.port}${e.url.path}`,
        ),
      );
    });
    expect(fleet.islands.filter((i) => i.router.length > 0)).toHaveLength(slurm.totals.routers);
  });
});

/** A stack's text with `keys` added to its [kubernetes] table. */
const withKubernetes = (name: string, keys: string) =>
  stackText(name).replace("[kubernetes]\n", `[kubernetes]\n${keys}\n`);

describe("Kubernetes pod resources, probes, disk and placement (issue 20)", () => {
  const aux = (fleet: K8sFleetObjects) =>
    allK8sObjects(fleet).filter((o): o is Extract<K8sObject, { kind: "Deployment" }> => o.kind === "Deployment");

  it("prime-rl's server gets the Kubernetes-only flags in its own spelling (--vllm.<flag>)", () => {
    const text = stackText("k8s-prime-multi-replica") + '\n[vllm_fleet]\nengine = "prime-rl"\n';
    const sts = renderK8sFleet(k8sPlan(text, "k8s-prime-multi-replica"), []).islands[0].replicas[0].object as any;
    const script: string = sts.spec.template.spec.containers[0].command.join("\n");
    expect(script).toContain("exec inference \\\n  --vllm.model");
    expect(script).toContain("--vllm.disable-access-log-for-endpoints /health,/metrics");
    expect(script).toMatch(/--vllm\.shutdown-timeout \d+/);
    expect(script).not.toMatch(/ --(disable-access-log-for-endpoints|shutdown-timeout) /);
  });

  it("engines request 4 CPUs and 16Gi per GPU by default (llm-d's P/D guide: 16 CPUs / 64Gi per 4 GPUs), plus /dev/shm", () => {
    const sts = renderK8sFleet(stackPlan("k8s-single-node"), []).islands[0].replicas[0].object as any;
    const r = sts.spec.template.spec.containers[0].resources;
    // 8 GPUs x 16Gi + 16Gi of /dev/shm = 144Gi; the model cache is a PVC, so only the compile cache is on disk.
    expect(r).toEqual({
      requests: { "nvidia.com/gpu": "8", cpu: "32", memory: "144Gi", "ephemeral-storage": "20Gi" },
      limits: { "nvidia.com/gpu": "8", memory: "144Gi" },
    });
  });

  it("compile_cache.pvc: VLLM_CACHE_ROOT is the island's folder of the claim, keyed by the image; not ephemeral storage (issue 32)", async () => {
    const text = withKubernetes("k8s-single-node", 'compile_cache = { pvc = "vllm-compile" }');
    const fleet = renderK8sFleet(k8sPlan(text, "k8s-single-node"), []);
    const sts = fleet.islands[0].replicas[0].object as any;
    const pod = sts.spec.template.spec;
    expect(pod.volumes).toContainEqual({ name: "vllm-cache", persistentVolumeClaim: { claimName: "vllm-compile" } });
    const mount = pod.containers[0].volumeMounts.find((m: any) => m.name === "vllm-cache");
    expect(mount.mountPath).toBe("/root/.cache/vllm");
    expect(mount.subPath).toMatch(/^Qwen--Qwen3-8B\/vllm-vllm--vllm-openai-v0\.32\.0-[0-9a-f]{12}\/tp8-dp1$/);
    // The model cache is a PVC in this stack: nothing is left on the node's disk to request.
    expect(pod.containers[0].resources.requests["ephemeral-storage"]).toBeUndefined();
    // Another image is another folder.
    const other = renderK8sFleet(
      k8sPlan(
        text.replace('image = "vllm/vllm-openai:v0.32.0"', 'image = "vllm/vllm-openai:v0.33.0"'),
        "k8s-single-node",
      ),
      [],
    );
    const otherMount = (other.islands[0].replicas[0].object as any).spec.template.spec.containers[0].volumeMounts.find(
      (m: any) => m.name === "vllm-cache",
    );
    expect(otherMount.subPath).not.toBe(mount.subPath);
    for (const o of allK8sObjects(fleet)) expect(validate(o), `${o.kind}`).toEqual([]);
  });

  it("native CPU offload: the tier, its headroom and /dev/shm on top of the per-GPU memory", () => {
    const sts = renderK8sFleet(stackPlan("k8s-kv-offload-native"), []).islands[0].replicas[0].object as any;
    const r = sts.spec.template.spec.containers[0].resources;
    const bytes = 8 * 16 * 2 ** 30 + 16 * 2 ** 30 + 128e9 + 8 * 2 ** 30;
    // 128e9 bytes are no whole number of GiB: the sum stays in MiB.
    expect(r.requests.memory).toBe(`${Math.ceil(bytes / 2 ** 20)}Mi`);
    expect(r.limits.memory).toBe(r.requests.memory);
    // No model_cache: the Hugging Face cache is an emptyDir, requested as ephemeral storage.
    expect(r.requests["ephemeral-storage"]).toBe("320Gi");
    expect(sts.spec.template.spec.volumes).toContainEqual({ name: "hf-cache", emptyDir: { sizeLimit: "300Gi" } });
  });

  it("Mooncake: the client sidecar requests its store share plus headroom; the master has small requests", () => {
    const fleet = renderK8sFleet(stackPlan("k8s-kv-offload-mooncake"), []);
    const all = allContainers(allK8sObjects(fleet));
    const client = all.find((c) => c.name === "mooncake-client")!;
    const tier = stackPlan("k8s-kv-offload-mooncake").kvTiers!.cpuBytes;
    expect((client.resources as any).requests.memory).toBe(`${Math.ceil((tier + 8 * 2 ** 30) / 2 ** 20)}Mi`);
    expect(all.find((c) => c.name === "mooncake-master")!.resources).toEqual({
      requests: { cpu: "1", memory: "2Gi" },
      limits: { memory: "2Gi" },
    });
  });

  it("every request is a [kubernetes] setting", () => {
    const text = withKubernetes(
      "k8s-llm-d-pd",
      [
        'cpu_per_gpu = "2500m"',
        'memory_per_gpu = "10Gi"',
        'shm_size = "1Gi"',
        'compile_cache_size = "5Gi"',
        'hf_cache_size = "100Gi"',
        'epp_resources = { cpu = "3", memory = "6Gi" }',
        'envoy_resources = { cpu = "2", memory = "1Gi" }',
        'sidecar_resources = { cpu = "100m", memory = "64Mi" }',
      ].join("\n"),
    );
    const plan = k8sPlan(text, "k8s-llm-d-pd");
    const all = allContainers(allK8sObjects(renderK8sFleet(plan, [])));
    const vllm = all.find((c) => isEngineContainer(c))!;
    const gpus = Number((vllm.resources as any).limits["nvidia.com/gpu"]);
    expect((vllm.resources as any).requests).toMatchObject({
      cpu: gpus % 2 ? `${2500 * gpus}m` : String(2.5 * gpus),
      memory: `${10 * gpus + 1}Gi`,
      "ephemeral-storage": "105Gi",
    });
    expect(all.find((c) => c.name === "epp")!.resources).toEqual({
      requests: { cpu: "3", memory: "6Gi" },
      limits: { memory: "6Gi" },
    });
    expect((all.find((c) => c.name === "envoy")!.resources as any).requests).toEqual({ cpu: "2", memory: "1Gi" });
    expect((all.find((c) => c.name === "routing-proxy")!.resources as any).requests).toEqual({
      cpu: "100m",
      memory: "64Mi",
    });
  });

  it("vllm-router: ready on /readiness (its /health fails while any one worker is down), alive on /liveness", () => {
    const router = allContainers(allK8sObjects(renderK8sFleet(stackPlan("k8s-multi-replica"), []))).find(
      (c) => c.name === "vllm-router",
    )!;
    expect(router.readinessProbe).toMatchObject({ httpGet: { path: "/readiness" } });
    expect(router.livenessProbe).toMatchObject({ httpGet: { path: "/liveness" } });
    expect(router.resources).toEqual({ requests: { cpu: "1", memory: "1Gi" }, limits: { memory: "1Gi" } });
  });

  it("issue 20 #8: serving engines sleep in preStop, then drain within a grace period of 75 s (decode 90 s)", () => {
    for (const stack of ["k8s-single-node", "k8s-disaggregated"]) {
      const plan = stackPlan(stack);
      for (const { template, engines } of templates(renderK8sFleet(plan, []), plan)) {
        const spec = template.spec as any;
        expect(spec.terminationGracePeriodSeconds).toBe(engines[0].role === "decode" ? 90 : 75);
        if (engines[0].port !== undefined)
          expect(spec.containers[0].lifecycle).toEqual({ preStop: { exec: { command: ["sleep", "5"] } } });
      }
    }
  });

  it("priority_class names the PriorityClass of every fleet pod", () => {
    const stack = "k8s-llm-d-pd";
    const fleet = renderK8sFleet(k8sPlan(withKubernetes(stack, 'priority_class = "inference-high"'), stack), []);
    const specs = allK8sObjects(fleet).flatMap((o) =>
      o.kind === "Deployment" || o.kind === "StatefulSet"
        ? [(o.spec.template as any).spec]
        : o.kind === "LeaderWorkerSet"
          ? [o.spec.leaderWorkerTemplate.leaderTemplate.spec, o.spec.leaderWorkerTemplate.workerTemplate.spec]
          : [],
    );
    expect(specs.length).toBeGreaterThan(1);
    for (const s of specs) expect((s as any).priorityClassName).toBe("inference-high");
    for (const o of allK8sObjects(renderK8sFleet(stackPlan(stack), [])))
      expect(JSON.stringify(o)).not.toContain("priorityClassName");
  });

  it("one timeout: the startup budget, VLLM_ENGINE_READY_TIMEOUT_S and the router's wait for its workers agree", () => {
    const plan = stackPlan("k8s-multi-replica");
    expect(WORKER_STARTUP_TIMEOUT_S).toBe(ENGINE_READY_TIMEOUT_S);
    for (const e of plan.islands[0].engines)
      expect(new Map(e.env).get("VLLM_ENGINE_READY_TIMEOUT_S")).toBe(String(ENGINE_READY_TIMEOUT_S));
    const sts = renderK8sFleet(plan, []).islands[0].replicas[0].object as any;
    const s = sts.spec.template.spec.containers[0].startupProbe;
    expect(s.periodSeconds * s.failureThreshold).toBe(ENGINE_READY_TIMEOUT_S);
  });

  it("the disk tier's claims are deleted with their pods (persistentVolumeClaimRetentionPolicy)", () => {
    const sts = renderK8sFleet(stackPlan("k8s-kv-offload-native"), []).islands[0].replicas[0].object as any;
    expect(sts.spec.persistentVolumeClaimRetentionPolicy).toEqual({ whenDeleted: "Delete", whenScaled: "Delete" });
  });

  it("router, EPP and Mooncake master pods do not take the GPU node selector and tolerations, but their own", () => {
    const gpuOnly = renderK8sFleet(stackPlan("k8s-single-node"), []);
    const deployments = aux(gpuOnly);
    expect(deployments.length).toBeGreaterThan(0);
    for (const d of deployments) {
      expect((d.spec.template as any).spec.nodeSelector).toBeUndefined();
      expect((d.spec.template as any).spec.tolerations).toBeUndefined();
      expect((d.spec.template as any).spec.imagePullSecrets).toEqual([{ name: "regcred" }]);
    }
    for (const stack of ["k8s-llm-d", "k8s-kv-offload-mooncake"]) {
      const text = withKubernetes(
        stack,
        'aux_node_selector = { "node-role/cpu" = "true" }\naux_tolerations = [{ key = "dedicated", operator = "Equal", value = "cpu", effect = "NoSchedule" }]',
      );
      const fleet = renderK8sFleet(k8sPlan(text, stack), []);
      expect(aux(fleet).length).toBeGreaterThan(0);
      for (const d of aux(fleet)) {
        expect((d.spec.template as any).spec.nodeSelector).toEqual({ "node-role/cpu": "true" });
        expect((d.spec.template as any).spec.tolerations).toEqual([
          { key: "dedicated", operator: "Equal", value: "cpu", effect: "NoSchedule" },
        ]);
      }
      for (const { template } of templates(fleet, k8sPlan(text, stack)))
        expect((template.spec as any).nodeSelector).toBeUndefined();
    }
  });
});

describe("Kubernetes rendering details", () => {
  it("kubelet cannot expand config text: a model name and env value full of $( ) and quotes reach vLLM unchanged", () => {
    const model = `org/it's-$(touch /tmp/pwned)-"$HOME"-$(POD_IP)`;
    const text = `[model]\nname = ${JSON.stringify(model)}\n[env_vars]\nMY_FLAG = "$(POD_IP)-$$-\`id\`"\n[kubernetes]\nrouter_image = "r.example/vllm-router:1"\n`;
    const plan = k8sPlan(text, "quoting");
    const fleet = renderK8sFleet(plan, []);
    const [{ template, engines }] = templates(fleet, plan);
    const vllm = containers(template).find((c) => isEngineContainer(c))!;
    expect(runEngine(vllm, {})[2]).toBe(model);
    expect(containerEnv(vllm).MY_FLAG).toBe("$(POD_IP)-$$-`id`");
    expect(plannedPodArgv(plan, engines[0])[2]).toBe(model);
  });

  it("NIXL advertises the pod IP from the downward API on every P/D engine", () => {
    const plan = stackPlan("k8s-disaggregated");
    for (const c of allContainers(allK8sObjects(renderK8sFleet(plan, [])))) {
      if (c.name !== "vllm") continue;
      expect((c.env as any[]).find((e) => e.name === "VLLM_NIXL_SIDE_CHANNEL_HOST")).toEqual({
        name: "VLLM_NIXL_SIDE_CHANNEL_HOST",
        valueFrom: { fieldRef: { fieldPath: "status.podIP" } },
      });
    }
  });

  /** The pods a workload makes, with the labels its controller adds (StatefulSet's pod-name, LWS's worker index of group 0). */
  function podsOf(o: K8sObject): { name: string; labels: Record<string, string>; ports: number[] }[] {
    const ports = (t: PodTemplateSpec) =>
      containers(t).flatMap((c) => ((c.ports ?? []) as any[]).map((p: any) => p.containerPort));
    const labelsOf = (t: PodTemplateSpec) => (t.metadata as any).labels as Record<string, string>;
    if (o.kind === "StatefulSet") {
      const t = o.spec.template as PodTemplateSpec;
      const name = `${o.metadata.name}-0`;
      return [{ name, labels: { ...labelsOf(t), "statefulset.kubernetes.io/pod-name": name }, ports: ports(t) }];
    }
    if (o.kind !== "LeaderWorkerSet") return [];
    const { size, leaderTemplate, workerTemplate } = o.spec.leaderWorkerTemplate;
    return Array.from({ length: size }, (_, k) => {
      const t = (k === 0 ? leaderTemplate : workerTemplate) as PodTemplateSpec;
      const labels = {
        ...labelsOf(t),
        "leaderworkerset.sigs.k8s.io/group-index": "0",
        "leaderworkerset.sigs.k8s.io/worker-index": String(k),
      };
      return { name: k === 0 ? `${o.metadata.name}-0` : `${o.metadata.name}-0-${k}`, labels, ports: ports(t) };
    });
  }

  it("issue 41: vllm-router in P/D mode (no follower) reaches each engine through a Service that selects exactly its pod and routes only while it is Ready; a followed router keeps the pod DNS names", () => {
    const plan = stackPlan("k8s-disaggregated");
    const objects = allK8sObjects(renderK8sFleet(plan, []));
    const ns = k8sNames(plan).namespace;
    const pods = objects.flatMap(podsOf);
    const router = objects.find((o) => o.kind === "Deployment" && o.metadata.name.endsWith("-router")) as any;
    const command: string[] = router.spec.template.spec.containers[0].command;
    expect(plan.islands[0].router).toMatchObject({ pd: true });
    expect((plan.islands[0].router as any).follow).toBeUndefined();
    expect(objects.some((o) => o.metadata.name.endsWith("-follower"))).toBe(false);
    const workers = command.flatMap((w, k) => (["--prefill", "--decode"].includes(command[k - 1]) ? [new URL(w)] : []));
    expect(workers).toHaveLength(plan.islands[0].engines.filter((e) => e.port !== undefined).length);
    for (const u of workers) {
      const [name, ...rest] = u.hostname.split(".");
      expect(rest.join(".")).toBe(`${ns}.svc.cluster.local`);
      const service = objects.find((o) => o.kind === "Service" && o.metadata.name === name) as any;
      expect(service, u.hostname).toBeDefined();
      // ClusterIP: routes only to Ready endpoints (not headless, not publishing not-ready addresses).
      expect(service.spec.clusterIP).toBeUndefined();
      expect(service.spec.publishNotReadyAddresses).toBeUndefined();
      expect(service.spec.ports).toEqual([{ name: "http", port: Number(u.port), targetPort: Number(u.port) }]);
      // pulumi-kubernetes' Service await would hold an up while an engine is not Ready (await/service.go).
      expect(service.metadata.annotations).toEqual({ "pulumi.com/skipAwait": "true" });
      const selected = pods.filter((p) => Object.entries(service.spec.selector).every(([k, v]) => p.labels[k] === v));
      expect(selected.map((p) => p.name)).toEqual([name]);
      expect(selected[0].ports).toContain(Number(u.port));
    }
    // The trainer's admin URLs still name every pod through the headless Service (Ready or not).
    for (const u of k8sEndpoints(plan)[0].adminUrls) {
      const [pod, subdomain] = new URL(u).hostname.split(".");
      expect(pods.map((p) => p.name)).toContain(pod);
      expect(subdomain).not.toBe(ns);
    }

    // Regular mode without a follower (power_of_two: no /add_worker) takes the same Services.
    const text = stackText("k8s-prime-multi-replica").replace(
      'type = "vllm-router"',
      'type = "vllm-router"\npolicy = "power_of_two"',
    );
    const p2 = k8sPlan(text, "k8s-prime-multi-replica");
    expect((p2.islands[0].router as any).follow).toBeUndefined();
    const o2 = allK8sObjects(renderK8sFleet(p2, []));
    const r2 = o2.find((o) => o.kind === "Deployment" && o.metadata.name.endsWith("-router")) as any;
    const hosts = (r2.spec.template.spec.containers[0].command as string[])
      .filter((w) => w.startsWith("http://"))
      .map((w) => new URL(w).hostname.split(".")[0]);
    expect(hosts).toHaveLength(2);
    for (const h of hosts) expect(o2.filter((o) => o.kind === "Service" && o.metadata.name === h)).toHaveLength(1);

    const followed = stackPlan("k8s-multi-replica");
    const fo = allK8sObjects(renderK8sFleet(followed, []));
    expect((followed.islands[0].router as any).follow).toBeDefined();
    const names = fo.filter((o) => o.kind === "Service").map((o) => o.metadata.name);
    expect(names.every((n) => n.endsWith("-engines") || n.endsWith("-router"))).toBe(true);
    const fr = fo.find((o) => o.kind === "Deployment" && o.metadata.name.endsWith("-router")) as any;
    const urls = (fr.spec.template.spec.containers[0].command as string[]).filter((w) => w.startsWith("http://"));
    expect(urls.length).toBeGreaterThan(0);
    for (const w of urls) expect(new URL(w).hostname).toContain(`.${k8sNames(followed).engineService(0)}.`);
  });

  it("wide-EP: one LeaderWorkerSet whose workers take their start rank from the worker index", () => {
    const plan = stackPlan("k8s-wide-ep");
    const fleet = renderK8sFleet(plan, []);
    const lws = fleet.islands[0].replicas.map((r) => r.object);
    expect(lws.map((o) => o.kind)).toEqual(["LeaderWorkerSet"]);
    const spec = (lws[0] as Extract<K8sObject, { kind: "LeaderWorkerSet" }>).spec;
    expect(spec.leaderWorkerTemplate.size).toBe(2);
    expect(spec.leaderWorkerTemplate.restartPolicy).toBe("RecreateGroupOnPodRestart");
    const worker = containers(spec.leaderWorkerTemplate.workerTemplate).find((c) => isEngineContainer(c))!;
    const argv = runEngine(worker, {}, lwsEnv(plan, fleet.islands[0].replicas[0].workload.engines[1]));
    expect(argv[argv.indexOf("--data-parallel-start-rank") + 1]).toBe("4");
  });

  // Issue 20: no hard-coded svc.<cluster domain> in a group's DP address; LWS gives the leader's.
  it("LWS pods dial the leader at the LWS_LEADER_ADDRESS LeaderWorkerSet injects, which resolves to the leader pod", () => {
    for (const stack of ["k8s-wide-ep", "k8s-disaggregated"]) {
      const plan = k8sPlan(withKubernetes(stack, 'cluster_domain = "corp.example"'), stack);
      for (const { workload, object } of renderK8sFleet(plan, []).islands.flatMap((i) => i.replicas)) {
        if (object.kind !== "LeaderWorkerSet") continue;
        const t = object.spec.leaderWorkerTemplate;
        for (const [template, e] of [
          [t.leaderTemplate, workload.engines[0]],
          [t.workerTemplate, workload.engines[1]],
        ] as const) {
          const vllm = containers(template).find((c) => isEngineContainer(c))!;
          const script = kubeletExpand((vllm.command as string[])[2], {});
          // Bash expands it from the env LWS injects (kubelet would leave an unset $(VAR) to bash as a
          // command substitution); without it the script stops rather than dial nowhere.
          expect(script).toContain('--data-parallel-address "${LWS_LEADER_ADDRESS:?');
          expect(script, "no leader DNS name of the fleet's own").not.toContain(".svc.");
          // As kubernetes-sigs/lws AddLWSVariables spells it: <lws>-<group>.<subdomain = lws>.<namespace>.
          const lws = lwsEnv(plan, e)!;
          expect(lws.LWS_LEADER_ADDRESS).toBe(`${object.metadata.name}-0.${object.metadata.name}.vllm-fleet-${stack}`);
          // The leader pod's own name under the Service LWS creates (names.ts: <lws>-0.<lws>.<ns>.svc.<domain>).
          expect(k8sNames(plan).pod(plan.islands[e.island], workload.engines[0].node).host).toBe(
            `${lws.LWS_LEADER_ADDRESS}.svc.corp.example`,
          );
          const argv = runEngine(vllm, {}, lws);
          expect(argv[argv.indexOf("--data-parallel-address") + 1]).toBe(lws.LWS_LEADER_ADDRESS);
          expect(argv).toEqual([...plannedPodArgv(plan, e), ...kubernetesEngineFlags(e)]);
        }
      }
    }
  });

  it("internal-LB wide-EP (headless workers): workers serve nothing, so they get no probes and no serving label", () => {
    const plan = k8sPlan(
      stackText("k8s-wide-ep").replace(
        "enable_expert_parallel = true",
        "enable_expert_parallel = true\n[inference.vllm_extra]\nheadless = true",
      ),
      "headless",
    );
    const lws = renderK8sFleet(plan, []).islands[0].replicas[0].object as Extract<
      K8sObject,
      { kind: "LeaderWorkerSet" }
    >;
    const worker = lws.spec.leaderWorkerTemplate.workerTemplate;
    const leader = lws.spec.leaderWorkerTemplate.leaderTemplate;
    expect((worker.metadata as any).labels["vllm-fleet/serving"]).toBe("false");
    expect((leader.metadata as any).labels["vllm-fleet/serving"]).toBe("true");
    const c = containers(worker)[0];
    expect([c.startupProbe, c.readinessProbe, c.livenessProbe, c.ports]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(
      runEngine(c, {}, lwsEnv(plan, renderK8sFleet(plan, []).islands[0].replicas[0].workload.engines[1])),
    ).toContain("--headless");
    expect(k8sEndpoints(plan)[0].adminUrls).toHaveLength(1);
  });

  it("llm-d on Kubernetes: pod discovery through the InferencePool, no file discovery, P/D sidecar on the pool's target port", () => {
    const plan = stackPlan("k8s-llm-d-pd");
    const fleet = renderK8sFleet(plan, []);
    const r = plan.islands[0].router;
    if (r?.kind !== "llm-d") throw new Error("expected llm-d");
    const config = r.epp.config as any;
    expect(config.plugins.map((p: any) => p.type)).not.toContain("file-discovery");
    expect(config.dataLayer).toBeUndefined();
    // llm-d-router v0.10.0 parsers/README.md: OpenAI paths need openai-parser beside vllmhttp-parser.
    expect(config.requestHandler.parsers.map((p: any) => p.pluginRef)).toEqual(["vllmhttp-parser", "openai-parser"]);
    for (const p of config.plugins) expect(eppManifest.plugin_types).toContain(p.type);
    // The pool is in the fleet's own namespace (kubernetes.namespace unset), as the EPP is told.
    expect(r.epp.argv.slice(1, 5)).toEqual([
      "--pool-name",
      "k8s-llm-d-pd-i0",
      "--pool-namespace",
      "vllm-fleet-k8s-llm-d-pd",
    ]);
    const pool = fleet.islands[0].router.find((o) => o.kind === "InferencePool") as Extract<
      K8sObject,
      { kind: "InferencePool" }
    >;
    const prefillPort = plan.islands[0].engines.find((e) => e.role === "prefill")!.port;
    expect(pool.spec.targetPorts).toEqual([{ number: prefillPort }]);
    expect(r.sidecars.map((s) => s.port)).toEqual([prefillPort]);
    // Only serving pods are endpoints; prefill and decode pods carry the role label the filters read.
    const podLabels = templates(fleet, plan).map((t) => (t.template.metadata as any).labels as Record<string, string>);
    for (const l of podLabels) expect(l).toMatchObject(pool.spec.selector.matchLabels);
    expect(podLabels.map((l) => l["llm-d.ai/role"]).sort()).toEqual(["decode", "prefill", "prefill"]);
  });

  it("kubernetes.cluster_domain names every in-cluster address: DP address, router worker URLs, outputs, Mooncake", () => {
    for (const stack of ["k8s-multi-replica", "k8s-wide-ep", "k8s-kv-offload-mooncake", "k8s-disaggregated"]) {
      const text = stackText(stack).replace("[kubernetes]\n", '[kubernetes]\ncluster_domain = "corp.example"\n');
      const plan = k8sPlan(text, stack);
      const everything = JSON.stringify([renderK8sFleet(plan, []), k8sEndpoints(plan)]);
      expect(everything, stack).not.toContain("cluster.local");
      expect(everything, stack).toContain(".svc.corp.example");
    }
    expect(JSON.stringify(k8sEndpoints(stackPlan("k8s-multi-replica")))).toContain(".svc.cluster.local");
    expect(() =>
      loadConfigText(
        '[model]\nname = "m"\n[kubernetes]\nrouter_image = "r:1"\ncluster_domain = "Corp_Local"\n',
        "t.toml",
      ),
    ).toThrow(/kubernetes\.cluster_domain/);
  });

  // llm-d-router v0.10.0 pkg/epp/server/controller_config.go: the EPP finds InferenceObjective and
  // InferenceModelRewrite in llm-d.ai (preferred) or inference.networking.x-k8s.io and watches them.
  it("the EPP's Role lets it get, list and watch InferenceObjectives and InferenceModelRewrites in both groups", () => {
    const fleet = renderK8sFleet(stackPlan("k8s-llm-d"), []);
    const role = fleet.islands[0].router.find((o) => o.kind === "Role") as any;
    const can = (group: string, resource: string) =>
      role.rules
        .filter((r: any) => r.apiGroups.includes(group) && r.resources.includes(resource))
        .flatMap((r: any) => r.verbs)
        .sort();
    for (const group of ["llm-d.ai", "inference.networking.x-k8s.io"])
      for (const resource of ["inferenceobjectives", "inferencemodelrewrites"])
        expect(can(group, resource)).toEqual(["get", "list", "watch"]);
    expect(can("inference.networking.k8s.io", "inferencepools")).toEqual(["get", "list", "watch"]);
  });

  // llm-d-router v0.10.0 publishes these two (Makefile EPP_IMAGE_NAME / SIDECAR_IMAGE_NAME under
  // IMAGE_REGISTRY ghcr.io/llm-d; .github/ISSUE_TEMPLATE/new-release.md lists both per release).
  it("llm-d images default to the names llm-d-router v0.10.0 publishes", () => {
    const plan = stackPlan("k8s-llm-d-pd");
    const fleet = renderK8sFleet(plan, []);
    const images = fleet.islands[0].router.flatMap((o) =>
      o.kind === "Deployment" ? (o.spec.template as any).spec.containers.map((c: Container) => c.image) : [],
    );
    expect(images).toContain("ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0");
    const sidecars = templates(fleet, plan).flatMap((t) => containers(t.template).filter((c) => c.name !== "vllm"));
    expect(sidecars.map((c) => c.image)).toContain("ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.10.0");
  });

  it("vllm-router's image has no default: a Kubernetes fleet must name one, pinned", () => {
    const base = `[model]\nname = "Qwen/Qwen3-8B"\n[kubernetes]\n`;
    const fail = (text: string) => {
      try {
        loadConfigText(text, "t.toml");
      } catch (e: any) {
        return (e.issues ?? []).map((i: any) => `${i.path}: ${i.message}`).join("\n");
      }
      return "";
    };
    expect(fail(base)).toMatch(/^kubernetes\.router_image: .*vllm-project\/router publishes no container image/);
    for (const bad of ["ghcr.io/vllm-project/router:latest", "ghcr.io/vllm-project/router", "localhost:5000/router"])
      expect(fail(`${base}router_image = "${bad}"\n`)).toContain("kubernetes.router_image: must be pinned");
    for (const good of ["localhost:5000/router:0.1.17", "r.example/router@sha256:" + "a".repeat(64)])
      expect(fail(`${base}router_image = "${good}"\n`)).toBe("");
    // llm-d needs no vllm-router image (k8s-llm-d sets none).
    expect((k8sPlan(stackText("k8s-llm-d"), "k8s-llm-d").islands[0].router as any).kind).toBe("llm-d");
    const plan = stackPlan("k8s-single-node");
    const router = renderK8sFleet(plan, []).islands[0].router.find((o) => o.kind === "Deployment") as any;
    expect(router.spec.template.spec.containers[0].image).toBe("registry.example.com/vllm-router:0.1.17");
  });

  it("Mooncake on Kubernetes: master Deployment + Service, client config by Service DNS, a client sidecar in every engine pod", () => {
    const plan = stackPlan("k8s-kv-offload-mooncake");
    const fleet = renderK8sFleet(plan, []);
    const [cm, master, svc] = fleet.islands[0].mooncake as any[];
    expect([cm.kind, master.kind, svc.kind]).toEqual(["ConfigMap", "Deployment", "Service"]);
    const host = `${svc.metadata.name}.vllm-fleet-k8s-kv-offload-mooncake.svc.cluster.local`;
    const config = JSON.parse(cm.data["mooncake.json"]);
    expect(config.master_server_address).toBe(`${host}:50051`);
    expect(config.metadata_server).toBe(`http://${host}:8080/metadata`);
    expect(svc.spec.ports.map((p: any) => p.port)).toEqual([50051, 8080, 9003]);
    for (const { template } of templates(fleet, plan)) {
      const [client] = (template.spec as any).initContainers;
      expect(client).toMatchObject({ name: "mooncake-client", restartPolicy: "Always" });
      const env = containerEnv(containers(template).find((c) => isEngineContainer(c))!);
      expect(env).toMatchObject({
        MOONCAKE_CONFIG_PATH: "/etc/vllm-fleet/mooncake/mooncake.json",
        PYTHONHASHSEED: "0",
      });
    }
  });

  it("disk offload: a per-pod PVC from [kubernetes], mounted at the tier's path", () => {
    const plan = stackPlan("k8s-kv-offload-native");
    const sts = renderK8sFleet(plan, []).islands[0].replicas[0].object as Extract<K8sObject, { kind: "StatefulSet" }>;
    expect(sts.spec.volumeClaimTemplates).toEqual([
      {
        metadata: { name: "kv-disk" },
        spec: {
          accessModes: ["ReadWriteOnce"],
          storageClassName: "local-nvme",
          resources: { requests: { storage: "1Ti" } },
        },
      },
    ]);
    const vllm = containers(sts.spec.template as PodTemplateSpec)[0];
    expect(vllm.volumeMounts).toContainEqual({ name: "kv-disk", mountPath: "/mnt/kv" });
    expect((vllm.resources as any).requests).toMatchObject({ "nvidia.com/gpu": "8" });
  });

  it("engine pods: GPUs, /dev/shm in memory, probes on the engine port, [kubernetes] placement and pull secrets", () => {
    const plan = stackPlan("k8s-single-node");
    const sts = renderK8sFleet(plan, []).islands[0].replicas[0].object as Extract<K8sObject, { kind: "StatefulSet" }>;
    const spec = (sts.spec.template as any).spec;
    expect(spec.volumes).toContainEqual({ name: "dshm", emptyDir: { medium: "Memory", sizeLimit: "16Gi" } });
    expect(spec.volumes).toContainEqual({ name: "model-cache", persistentVolumeClaim: { claimName: "hf-cache" } });
    expect(spec.imagePullSecrets).toEqual([{ name: "regcred" }]);
    expect(spec.nodeSelector).toEqual({ "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3" });
    expect(spec.tolerations).toEqual([{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }]);
    expect(spec.enableServiceLinks).toBe(false);
    const c = spec.containers[0];
    expect(c.resources.limits).toMatchObject({ "nvidia.com/gpu": "8" });
    expect(c.startupProbe).toMatchObject({
      httpGet: { path: "/health", port: 8100 },
      periodSeconds: 10,
      failureThreshold: 420,
    });
    // Ready: /health, and not the base model while a peer serves an update (weights-readiness.ts).
    expect(c.readinessProbe.exec.command.slice(0, 2)).toEqual(["python3", "-c"]);
    expect(c.readinessProbe.exec.command.slice(3, 6)).toEqual(["8100", "/weight_info", "default"]);
    expect(c.livenessProbe).toMatchObject({ httpGet: { path: "/health", port: 8100 } });
  });

  it("secrets are referenced, never rendered: the Secret carries keys only and pods use secretKeyRef", () => {
    const fleet = renderK8sFleet(stackPlan("k8s-multi-replica"), ["apiKey", "hfToken"]);
    expect(fleet.secret?.stringData).toEqual({ HF_TOKEN: "", VLLM_API_KEY: "" });
    // The router forwards the caller's Authorization; holding the key it would let anyone in.
    const router = allContainers(allK8sObjects(fleet)).find((c) => c.name === "vllm-router")!;
    expect(router.command as string[]).not.toContain("--api-key");
    expect(router.env ?? []).toEqual([]);
    expect(renderK8sFleet(stackPlan("k8s-multi-replica"), []).secret).toBeUndefined();
  });

  it("a long Pulumi stack name is shortened with a hash; names stay unique per stack", () => {
    const text = stackText("k8s-disaggregated");
    const a = renderK8sFleet(k8sPlan(text, "a-very-long-pulumi-stack-name-for-production-rl-runs"), []);
    const b = renderK8sFleet(k8sPlan(text, "a-very-long-pulumi-stack-name-for-production-rl-runs-2"), []);
    // The namespace is the stack file's: two stacks may share it (only one creates it).
    const names = (f: K8sFleetObjects) =>
      allK8sObjects(f)
        .filter((o) => o.kind !== "Namespace")
        .map((o) => o.metadata.name);
    for (const n of names(a)) expect(n.length).toBeLessThanOrEqual(63);
    expect(names(a).filter((n) => names(b).includes(n))).toEqual([]);
  });

  it("plan --out YAML is one object per file", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "k8s-out-"));
    const run = runBuiltCli("plan", ["k8s-llm-d-pd", "--out", dir]);
    expect(run.status, run.stderr).toBe(0);
    const files = fs.readdirSync(path.join(dir, "island-0")).sort();
    const expected = renderK8sStack(servicesPlan("k8s-llm-d-pd"), []);
    expect(files).toEqual(
      allK8sObjects(expected.services[0])
        .map((o) => `${o.kind.toLowerCase()}-${o.metadata.name}.yaml`)
        .sort(),
    );
    // The namespace is the fleet's, not an island's: `kubectl apply -f dir/namespace-<ns>.yaml` first.
    const nsFile = `namespace-${expected.namespace}.yaml`;
    expect(fs.readdirSync(dir).filter((f) => f.endsWith(".yaml"))).toEqual([nsFile]);
    expect(YAML.parse(fs.readFileSync(path.join(dir, nsFile), "utf8"))).toEqual(expected.namespaceObject);
    for (const f of files) {
      const docs = YAML.parseAllDocuments(fs.readFileSync(path.join(dir, "island-0", f), "utf8"));
      expect(docs).toHaveLength(1);
      const o = docs[0].toJS();
      expect(`${o.kind.toLowerCase()}-${o.metadata.name}.yaml`).toBe(f);
      expect(validate(o)).toEqual([]);
    }
  });
});
