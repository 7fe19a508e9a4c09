import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { allK8sStackObjects, renderK8sStack, type K8sIslandEndpoints } from "../../components/kubernetes/fleet-objects";
import { loadStackFile } from "../../components/config/load";
import { buildStackPlan } from "../../components/planner";
import { resolveStackFile } from "../../components/stack-file";
import { K8S_STACKS, singleService } from "../helpers";
import { drainRpcs, installMocks, type Registered, setConfig, settle, value } from "../program-harness";
import { ENGINE_READY_TIMEOUT_S } from "../../components/config/timeouts";

// A finished test's outstanding Pulumi RPCs must not reach the next test's mocks.
afterEach(drainRpcs);

const HF_TOKEN = "hf_SECRET_token_4f2a9c";
const API_KEY = "sk-SECRET-api-key-77d1";
const SECRET_KEYS = ["vllm-fleet:hfToken", "vllm-fleet:apiKey", "vllm-fleet:kubeconfig"];

/** Imports index.ts afresh under mocks; config keys in `secret` are marked as config secrets. */
async function program(stack: string, config: Record<string, string> = {}, secret = SECRET_KEYS) {
  const registered = installMocks(stack);
  setConfig(Object.fromEntries(Object.entries(config).map(([k, v]) => [`vllm-fleet:${k}`, v])), secret);
  vi.resetModules();
  const infra = await import("../../index");
  const islands = (await value(infra.islands)) as K8sIslandEndpoints[];
  await settle(registered);
  return { infra, islands, registered };
}

const k8sResources = (rs: Registered[]) => rs.filter((r) => r.type.startsWith("kubernetes:"));
/** Matches r's URN in a dependsOn list. */
const urn = (r: Registered) => expect.stringMatching(new RegExp(`\\$${r.type.replaceAll("/", "\\/")}::${r.name}$`));
/** The pod templates of a registered workload. */
const podTemplatesOf = (r: Registered): any[] =>
  r.inputs.kind === "LeaderWorkerSet"
    ? [r.inputs.spec.leaderWorkerTemplate.leaderTemplate, r.inputs.spec.leaderWorkerTemplate.workerTemplate]
    : ["StatefulSet", "Deployment"].includes(r.inputs.kind)
      ? [r.inputs.spec.template]
      : [];
const readsSecret = (t: any, secret: string) =>
  [...(t.spec.initContainers ?? []), ...t.spec.containers].some((c: any) =>
    (c.env ?? []).some((e: any) => e.valueFrom?.secretKeyRef?.name === secret),
  );
const DIGEST = "vllm-fleet/secrets-digest";

describe("the Pulumi program under mocks (Kubernetes)", () => {
  it.each(K8S_STACKS)(
    "%s: creates exactly the rendered objects, parented to their parts, and exports the planned URLs",
    async (stack) => {
      const { infra, islands, registered } = await program(stack);
      const rendered = renderK8sStack(buildStackPlan(loadStackFile(resolveStackFile(stack).file), stack), []);
      const objects = allK8sStackObjects(rendered);
      const created = k8sResources(registered);
      expect(created.map((r) => `${r.inputs.kind}/${r.name}`).sort()).toEqual(
        objects.map((o) => `${o.kind}/${o.metadata.name}`).sort(),
      );
      for (const r of created) {
        const o = objects.find((x) => x.kind === r.inputs.kind && x.metadata.name === r.name)!;
        expect(r.inputs.apiVersion).toBe(o.apiVersion);
        if (r.inputs.kind !== "Namespace") expect(r.inputs.metadata.namespace).toBe(rendered.namespace);
      }
      // Workloads belong to their replica or P/D group; router objects to the Router part.
      const engineWorkloads = created.filter((r) => ["StatefulSet", "LeaderWorkerSet"].includes(r.inputs.kind));
      for (const r of engineWorkloads)
        expect(r.options.parent).toMatch(/vllm-fleet:fleet:(VllmReplica|PrefillDecodeGroup)::/);
      // Every workload is waited for by the island's readiness Command, not by the provider.
      const waits = registered.filter((r) => r.type === "command:local:Command");
      for (const r of created.filter((r) => podTemplatesOf(r).length)) {
        expect(r.inputs.metadata.annotations?.["pulumi.com/skipAwait"], r.name).toBe("true");
        const wait = waits.find((w) => w.inputs.create.includes(` --workload ${r.inputs.kind}/${r.name} `));
        expect(wait, `${r.inputs.kind}/${r.name} has a readiness wait`).toBeDefined();
        expect(wait!.options.dependsOn).toEqual(expect.arrayContaining([urn(r)]));
      }
      const engineWaits = waits.filter((w) => /-engines-ready$/.test(w.name));
      expect(engineWaits).toHaveLength(rendered.services.reduce((n, s) => n + s.islands.length, 0));
      for (const w of engineWaits)
        expect(w.inputs.create).toMatch(new RegExp(` --timeout ${ENGINE_READY_TIMEOUT_S + 600} --stuck-after 300$`));
      for (const r of created.filter((r) => r.inputs.metadata.labels["app.kubernetes.io/component"] === "router"))
        expect(r.options.parent).toMatch(/vllm-fleet:fleet:Router::/);
      const planned = singleService(await value(infra.planned));
      expect(islands.map((i) => i.adminUrls)).toEqual(planned.islands.map((i) => i.adminUrls));
      expect(islands.map((i) => i.routerUrl)).toEqual(planned.islands.map((i) => i.routerUrl));
      expect(islands.map((i) => i.roles)).toEqual(planned.islands.map((i) => i.roles));
      expect(registered.filter((r) => r.type === "command:remote:Command")).toEqual([]);
    },
  );

  it("no Secret value appears outside the Secret; the Secret's data is a Pulumi secret", async () => {
    const { registered } = await program("k8s-disaggregated", { hfToken: HF_TOKEN, apiKey: API_KEY });
    const secrets = registered.filter((r) => r.type === "kubernetes:core/v1:Secret");
    expect(secrets).toHaveLength(1);
    expect(secrets[0].inputs.stringData).toEqual({ HF_TOKEN, VLLM_API_KEY: API_KEY });
    expect(secrets[0].secretInputs).toContain("stringData");
    for (const r of registered.filter((r) => r !== secrets[0])) {
      const text = JSON.stringify(r.inputs);
      expect(text, `${r.type} ${r.name}`).not.toContain(HF_TOKEN);
      expect(text, `${r.type} ${r.name}`).not.toContain(API_KEY);
    }
    // Every engine reads both through secretKeyRef.
    const lws = registered.filter((r) => r.inputs.kind === "LeaderWorkerSet");
    for (const r of lws) {
      const env = r.inputs.spec.leaderWorkerTemplate.leaderTemplate.spec.containers[0].env;
      expect(env).toContainEqual({
        name: "HF_TOKEN",
        valueFrom: { secretKeyRef: { name: "k8s-disaggregated-secrets", key: "HF_TOKEN" } },
      });
    }
  });

  it("refuses a token stored in plain text, naming the config key", async () => {
    await expect(program("k8s-single-node", { hfToken: HF_TOKEN }, [])).rejects.toThrow(
      /vllm-fleet:hfToken is stored in plain text/,
    );
  });

  it("builds the provider from kubeconfig, context and namespace; namespace re-plans the URLs", async () => {
    const { islands, registered } = await program("k8s-multi-replica", {
      kubeconfig: "/home/alice/.kube/prod",
      context: "gpu-east",
      namespace: "rl-prod",
    });
    const [provider] = registered.filter((r) => r.type === "pulumi:providers:kubernetes");
    expect(provider.inputs).toMatchObject({
      kubeconfig: "/home/alice/.kube/prod",
      context: "gpu-east",
      namespace: "rl-prod",
    });
    expect(islands[0].routerUrl).toBe("http://k8s-multi-replica-i0-router.rl-prod.svc.cluster.local:8000/v1");
    // A namespace named there is named all the same: used as it exists, not created (issue 43).
    expect(registered.filter((r) => r.type === "kubernetes:core/v1:Namespace")).toEqual([]);
    for (const r of k8sResources(registered)) expect(r.inputs.metadata.namespace).toBe("rl-prod");
  });

  // Issue 31: unset, the fleet's own namespace is the provider's default too, as the URLs were planned.
  it("without a namespace anywhere, the provider's default namespace is the fleet's own", async () => {
    const { islands, registered } = await program("k8s-llm-d");
    const [provider] = registered.filter((r) => r.type === "pulumi:providers:kubernetes");
    expect(provider.inputs.namespace).toBe("vllm-fleet-k8s-llm-d");
    expect(islands[0].namespace).toBe("vllm-fleet-k8s-llm-d");
  });

  it("a kubeconfig given as file contents must be a secret", async () => {
    const contents = "apiVersion: v1\nkind: Config\nclusters: []\n";
    await expect(program("k8s-single-node", { kubeconfig: contents }, [])).rejects.toThrow(
      /vllm-fleet:kubeconfig is stored in plain text/,
    );
    const { registered } = await program("k8s-single-node", { kubeconfig: contents });
    const [provider] = registered.filter((r) => r.type === "pulumi:providers:kubernetes");
    expect(provider.secretInputs).toContain("kubeconfig");
    // The readiness waits read the same cluster: the contents travel in the environment, as a secret.
    const waits = registered.filter((r) => r.type === "command:local:Command");
    expect(waits.length).toBeGreaterThan(0);
    for (const w of waits) {
      expect(w.inputs.environment).toMatchObject({ FLEET_KUBECONFIG_DATA: contents });
      expect(Object.keys(w.inputs.environment).sort()).toEqual(["FLEET_KUBECONFIG_DATA", "FLEET_WAIT_SPECS"]);
      expect(w.secretInputs).toContain("environment");
      expect(w.inputs.create).not.toContain("clusters");
    }
  });

  it("the readiness waits use the provider's kubeconfig path and context", async () => {
    const { registered } = await program("k8s-multi-replica", {
      kubeconfig: "/home/alice/.kube/prod",
      context: "gpu-east",
    });
    const waits = registered.filter((r) => r.type === "command:local:Command");
    expect(waits.map((w) => w.name).sort()).toEqual([
      "k8s-multi-replica-i0-activity-ready",
      "k8s-multi-replica-i0-engines-ready",
      "k8s-multi-replica-i0-router-ready",
    ]);
    for (const w of waits) {
      expect(w.inputs.environment).toEqual({
        KUBECONFIG: "/home/alice/.kube/prod",
        FLEET_WAIT_SPECS: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(w.inputs.create).toMatch(
        /^node dist\/bin\/k8s-wait\.js --namespace \S+ (--workload \S+ )+--pod-selector \S+ /,
      );
      expect(w.inputs.create).toMatch(/ --context gpu-east$/);
      // Run from the package folder, where dist/bin/k8s-wait.js is (the provider's own folder is dist/).
      expect(fs.existsSync(path.join(w.inputs.dir, "dist", "bin", "k8s-wait.js"))).toBe(true);
    }
  });

  it("namespace on a SLURM stack is an error that says so", async () => {
    await expect(program("single-node", { namespace: "x" })).rejects.toThrow(
      /vllm-fleet:namespace applies to Kubernetes stacks/,
    );
  });

  it("the router waits for its engines, and engines for the Secret and the Mooncake store", async () => {
    const { registered } = await program("k8s-kv-offload-mooncake", { apiKey: API_KEY });
    const kinds = (kind: string) => registered.filter((r) => r.inputs.kind === kind);
    const engines = kinds("StatefulSet");
    const router = registered.find((r) => r.inputs.kind === "Deployment" && r.name.endsWith("-router"))!;
    const enginesReady = registered.find(
      (r) => r.type === "command:local:Command" && r.name.endsWith("-engines-ready"),
    )!;
    expect(router.options.dependsOn).toEqual(expect.arrayContaining([...engines, enginesReady].map(urn)));
    const storeReady = registered.find((r) => r.type === "command:local:Command" && r.name.endsWith("-store-ready"))!;
    expect(storeReady.inputs.create).toContain(" --workload Deployment/");
    const store = registered.filter((r) => r.inputs.metadata?.labels?.["app.kubernetes.io/component"] === "mooncake");
    expect(store.length).toBe(3);
    for (const e of engines)
      expect(e.options.dependsOn).toEqual(expect.arrayContaining([...store, storeReady, ...kinds("Secret")].map(urn)));
  });

  // pulumi-kubernetes hides a missing namespace only in a preview (provider/pkg/await/await.go,
  // Creation: IsNamespaceNotFoundErr returns a namespaceError when c.Preview); `pulumi up` on a
  // fresh cluster fails after its NotFound retries unless the namespace is created first.
  // Issue 31: without kubernetes.namespace, each fleet's own, named after its stack.
  const OWN_NAMESPACE = K8S_STACKS.filter((s) => s !== "k8s-single-node");
  it.each(OWN_NAMESPACE)("%s: creates its namespace, and every namespaced object depends on it", async (stack) => {
    const { registered } = await program(stack, { hfToken: HF_TOKEN, apiKey: API_KEY });
    const namespaces = registered.filter((r) => r.type === "kubernetes:core/v1:Namespace");
    const own = `vllm-fleet-${stack}`;
    expect(namespaces.map((r) => [r.name, r.inputs.metadata.name])).toEqual([[own, own]]);
    for (const r of k8sResources(registered).filter((r) => r !== namespaces[0]))
      expect(r.inputs.metadata.namespace, `${r.type} ${r.name}`).toBe(own);
    expect(namespaces[0].inputs.metadata.namespace).toBeUndefined();
    for (const r of k8sResources(registered).filter((r) => r !== namespaces[0]))
      expect(r.options.dependsOn, `${r.type} ${r.name}`).toEqual(expect.arrayContaining([urn(namespaces[0])]));
  });

  it("kubernetes.create_namespace = false, or a namespace every cluster has, creates no Namespace", async () => {
    const off = await program("k8s-llm-d", { overrides: JSON.stringify({ "kubernetes.create_namespace": false }) });
    expect(off.registered.filter((r) => r.type === "kubernetes:core/v1:Namespace")).toEqual([]);
    expect(k8sResources(off.registered).length).toBeGreaterThan(5);
    const dflt = await program("k8s-llm-d", { namespace: "default" });
    expect(dflt.registered.filter((r) => r.type === "kubernetes:core/v1:Namespace")).toEqual([]);
    // k8s-single-node's PVC is in a namespace that exists: the fleet neither creates nor deletes it.
    const pvc = await program("k8s-single-node");
    expect(pvc.registered.filter((r) => r.type === "kubernetes:core/v1:Namespace")).toEqual([]);
    for (const r of k8sResources(pvc.registered)) expect(r.inputs.metadata.namespace).toBe("inference");
  });

  // Issue 43 item 5: no Namespace resource is what keeps pulumi destroy from deleting a named one.
  it("a namespace the stack names is used as it exists; create_namespace = true creates it", async () => {
    const named = {
      "kubernetes.namespace": "rl-prod",
      "kubernetes.service_account": "rl-sa",
      "kubernetes.image_pull_secrets": ["regcred"],
    };
    const used = await program("k8s-llm-d", { overrides: JSON.stringify(named) });
    expect(used.registered.filter((r) => r.type === "kubernetes:core/v1:Namespace")).toEqual([]);
    for (const r of k8sResources(used.registered)) expect(r.inputs.metadata.namespace).toBe("rl-prod");
    const engines = used.registered.filter((r) => r.inputs.kind === "StatefulSet");
    expect(engines.length).toBeGreaterThan(0);
    for (const t of engines.flatMap(podTemplatesOf)) {
      expect(t.spec.serviceAccountName).toBe("rl-sa");
      expect(t.spec.imagePullSecrets).toEqual([{ name: "regcred" }]);
    }
    const asked = { "kubernetes.namespace": "rl-prod", "kubernetes.create_namespace": true };
    const created = await program("k8s-llm-d", { overrides: JSON.stringify(asked) });
    const ns = created.registered.filter((r) => r.type === "kubernetes:core/v1:Namespace");
    expect(ns.map((r) => r.inputs.metadata.name)).toEqual(["rl-prod"]);
  });

  // Issue 20 #8 and #11: a replica's budget belongs to it and follows its workload; monitors need only the namespace.
  it.each(["k8s-single-node", "k8s-wide-ep", "k8s-disaggregated", "k8s-llm-d-pd"])(
    "%s: one PodDisruptionBudget per replica, after its workload; with monitoring, the PodMonitors",
    async (stack) => {
      const overrides = JSON.stringify({
        "kubernetes.monitoring": true,
        "kubernetes.monitoring_labels": { release: "kps" },
      });
      const { registered } = await program(stack, { overrides });
      const [ns] = registered.filter((r) => r.type === "kubernetes:core/v1:Namespace");
      const workloads = registered.filter((r) => ["StatefulSet", "LeaderWorkerSet"].includes(r.inputs.kind));
      const budgets = registered.filter((r) => r.type === "kubernetes:policy/v1:PodDisruptionBudget");
      expect(budgets.map((b) => b.name).sort()).toEqual(workloads.map((w) => w.name).sort());
      for (const b of budgets) {
        const w = workloads.find((w) => w.name === b.name)!;
        expect(b.options.parent).toBe(w.options.parent);
        const ready = registered.find((r) => r.type === "command:local:Command" && r.name.endsWith("-engines-ready"))!;
        expect(b.options.dependsOn).toEqual(expect.arrayContaining([...(ns ? [urn(ns)] : []), urn(w), urn(ready)]));
        expect(b.inputs.spec).toMatchObject({ maxUnavailable: 0, unhealthyPodEvictionPolicy: "AlwaysAllow" });
      }
      const monitors = registered.filter((r) => r.type === "kubernetes:monitoring.coreos.com/v1:PodMonitor");
      expect(monitors.map((m) => m.inputs.metadata.labels["app.kubernetes.io/component"]).sort()).toEqual([
        "engine",
        "router",
      ]);
      for (const m of monitors) {
        expect(m.inputs.metadata.labels.release).toBe("kps");
        expect(m.options.dependsOn).toEqual(ns ? [urn(ns)] : []);
        expect(m.options.parent).toMatch(
          m.inputs.metadata.labels["app.kubernetes.io/component"] === "router"
            ? /vllm-fleet:fleet:Router::/
            : /vllm-fleet:fleet:InferenceDeployment::/,
        );
      }
      const off = await program(stack, { overrides: JSON.stringify({ "kubernetes.disruption_budget": false }) });
      expect(off.registered.filter((r) => r.type === "kubernetes:policy/v1:PodDisruptionBudget")).toEqual([]);
      expect(off.registered.filter((r) => r.type === "kubernetes:monitoring.coreos.com/v1:PodMonitor")).toEqual([]);
    },
  );

  it("the Mooncake store gets the engines' timeout budget (a multi-GB image; the engines wait for it)", async () => {
    const { registered } = await program("k8s-kv-offload-mooncake");
    const store = registered.filter((r) => r.inputs.metadata?.labels?.["app.kubernetes.io/component"] === "mooncake");
    expect(store.map((r) => r.inputs.kind).sort()).toEqual(["ConfigMap", "Deployment", "Service"]);
    const waits = registered.filter((r) => r.type === "command:local:Command");
    const timeout = (w: Registered) => / --timeout (\d+) /.exec(w.inputs.create)![1];
    const [storeReady] = waits.filter((w) => w.name.endsWith("-store-ready"));
    const [enginesReady] = waits.filter((w) => w.name.endsWith("-engines-ready"));
    expect(timeout(storeReady)).toBe(String(ENGINE_READY_TIMEOUT_S + 600));
    expect(timeout(storeReady)).toBe(timeout(enginesReady));
  });

  it.each(["k8s-llm-d", "k8s-llm-d-pd"])(
    "%s: the EPP Deployment waits for its ConfigMaps, ServiceAccount, Role and RoleBinding",
    async (stack) => {
      const { registered } = await program(stack);
      const router = registered.filter((r) => r.options.parent.includes("vllm-fleet:fleet:Router::"));
      const deployment = router.find((r) => r.inputs.kind === "Deployment")!;
      const reads = router.filter((r) =>
        ["ConfigMap", "ServiceAccount", "Role", "RoleBinding"].includes(r.inputs.kind),
      );
      expect(reads.map((r) => r.inputs.kind).sort()).toEqual(
        ["ConfigMap", "ConfigMap", "Role", "RoleBinding", "ServiceAccount"].sort(),
      );
      expect(deployment.options.dependsOn).toEqual(expect.arrayContaining(reads.map(urn)));
      // And rolls when a config file changes: the files are read once, at start.
      expect(deployment.inputs.spec.template.metadata.annotations["vllm-fleet/config-hash"]).toMatch(/^[0-9a-f]{16}$/);
    },
  );

  // A Secret's data change is a replacement by default (pulumi-kubernetes provider/pkg/provider/diff.go,
  // forceNewProperties) and restarts no pod: pods read secretKeyRef env at container start.
  it("a changed credential rolls every pod that reads the Secret: a digest on the pod template, a Pulumi secret", async () => {
    const run = async (apiKey: string) => {
      const { registered } = await program("k8s-disaggregated", { hfToken: HF_TOKEN, apiKey });
      await drainRpcs();
      return registered;
    };
    const [a, again, b] = [await run(API_KEY), await run(API_KEY), await run(`${API_KEY}-rotated`)];
    const [provider] = a.filter((r) => r.type === "pulumi:providers:kubernetes");
    // Provider config reaches the plugin as strings (provider.go Configure compares with "true").
    expect(provider.inputs.enableSecretMutable).toBe("true");
    const digests = (rs: Registered[]) =>
      k8sResources(rs).flatMap((r) =>
        podTemplatesOf(r).map((t) => {
          // Exactly the pods that read the Secret carry it (the router reads none: it forwards the caller's key).
          expect(t.metadata.annotations?.[DIGEST] !== undefined, `${r.name}`).toBe(
            readsSecret(t, "k8s-disaggregated-secrets"),
          );
          if (t.metadata.annotations?.[DIGEST]) expect(r.secretInputs, r.name).toContain("spec");
          return t.metadata.annotations?.[DIGEST] as string | undefined;
        }),
      );
    const [da, dAgain, db] = [digests(a), digests(again), digests(b)];
    const engineDigests = da.filter((d) => d !== undefined);
    expect(engineDigests.length).toBeGreaterThanOrEqual(2);
    expect(new Set(engineDigests).size).toBe(1);
    expect(engineDigests[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(dAgain).toEqual(da); // stable: an unchanged credential rolls nothing
    expect(db.filter((d) => d !== undefined)[0]).not.toBe(engineDigests[0]);
    // Not a plain hash of a value, which a short key would give away to anyone who reads workloads.
    const { createHash } = await import("node:crypto");
    for (const v of [API_KEY, HF_TOKEN, JSON.stringify({ HF_TOKEN, VLLM_API_KEY: API_KEY })])
      for (const alg of ["sha256", "sha1", "md5"])
        expect(createHash(alg).update(v).digest("hex")).not.toContain(engineDigests[0].slice(0, 16));
  });

  it("without credentials no pod carries a secrets digest", async () => {
    const { registered } = await program("k8s-disaggregated");
    for (const r of k8sResources(registered))
      for (const t of podTemplatesOf(r)) expect(t.metadata.annotations?.[DIGEST]).toBeUndefined();
  });

  // Issue 28 item 3: several services share the namespace and the Secret; each has its own engines and router.
  it("k8s-policy-and-judge: one Namespace and Secret, each service's workloads and router, endpoints per service", async () => {
    const stack = "k8s-policy-and-judge";
    const { infra, islands, registered } = await program(stack, { hfToken: HF_TOKEN, apiKey: API_KEY });
    const plan = buildStackPlan(loadStackFile(resolveStackFile(stack).file), stack);
    const created = k8sResources(registered);
    expect(created.map((r) => `${r.inputs.kind}/${r.name}`).sort()).toEqual(
      allK8sStackObjects(renderK8sStack(plan, ["apiKey", "hfToken"]))
        .map((o) => `${o.kind}/${o.metadata.name}`)
        .sort(),
    );
    const kind = (k: string) => created.filter((r) => r.inputs.kind === k);
    const [ns] = kind("Namespace");
    expect(kind("Namespace").map((r) => r.name)).toEqual([`vllm-fleet-${stack}`]);
    expect(kind("Secret").map((r) => r.name)).toEqual([`${stack}-secrets`]);
    expect(
      kind("Service")
        .map((r) => r.name)
        .sort(),
    ).toEqual(
      [
        `${stack}-judge-i0-engines`,
        `${stack}-judge-i0-router`,
        `${stack}-policy-i0-engines`,
        `${stack}-policy-i0-router`,
      ].sort(),
    );
    // The policy's two tp = 8 replicas and the judge's one engine, each a StatefulSet of its own service.
    expect(
      kind("StatefulSet")
        .map((r) => r.name)
        .sort(),
    ).toEqual([`${stack}-judge-i0-replica0`, `${stack}-policy-i0-replica0`, `${stack}-policy-i0-replica1`]);
    // Each service's router, beside each vllm-router its follower (router-follower.ts), and each
    // island's activity monitor (activity-monitor.ts).
    const deployments = kind("Deployment");
    expect(deployments.map((r) => r.name).sort()).toEqual(
      [
        `${stack}-judge-i0-router`,
        `${stack}-judge-i0-follower`,
        `${stack}-judge-i0-activity`,
        `${stack}-policy-i0-router`,
        `${stack}-policy-i0-follower`,
        `${stack}-policy-i0-activity`,
      ].sort(),
    );
    const routers = deployments.filter((r) => r.name.endsWith("-router"));
    for (const r of kind("StatefulSet")) {
      const service = r.name.startsWith(`${stack}-policy-`) ? "policy" : "judge";
      expect(r.inputs.spec.template.metadata.labels["vllm-fleet/service"]).toBe(service);
      expect(r.options.dependsOn).toEqual(expect.arrayContaining([urn(ns), urn(kind("Secret")[0])]));
      // Every engine of either service reads the one Secret, and rolls with its digest.
      expect(readsSecret(r.inputs.spec.template, `${stack}-secrets`)).toBe(true);
      expect(r.inputs.spec.template.metadata.annotations[DIGEST]).toMatch(/^[0-9a-f]{32}$/);
      // A router waits for its own service's engines only.
      const own = routers.find((d) => d.name.startsWith(`${stack}-${service}-`))!;
      const other = routers.find((d) => d !== own)!;
      expect(own.options.dependsOn).toEqual(expect.arrayContaining([urn(r)]));
      expect(other.options.dependsOn).not.toEqual(expect.arrayContaining([urn(r)]));
    }
    for (const r of created.filter((r) => r !== ns))
      expect(r.options.dependsOn, `${r.type} ${r.name}`).toEqual(expect.arrayContaining([urn(ns)]));

    // `islands` names each island's service; `endpoints` holds each service's contract under services.<name>.
    expect(islands.map((i: any) => [i.service, i.island, i.routerUrl])).toEqual([
      ["policy", 0, `http://${stack}-policy-i0-router.vllm-fleet-${stack}.svc.cluster.local:8000/v1`],
      ["judge", 0, `http://${stack}-judge-i0-router.vllm-fleet-${stack}.svc.cluster.local:9000/v1`],
    ]);
    const endpoints = (await value(infra.endpoints)) as any;
    expect(Object.keys(endpoints.services)).toEqual(["policy", "judge"]);
    expect(endpoints.engineCount).toBe(3);
    const planned = (await value(infra.planned)) as any;
    for (const name of ["policy", "judge"]) {
      const own = endpoints.services[name];
      expect(own.islands.map((i: any) => i.routerUrl)).toEqual(
        planned.services[name].islands.map((i: any) => i.routerUrl),
      );
      expect(own.islands.map((i: any) => i.adminUrls)).toEqual(
        planned.services[name].islands.map((i: any) => i.adminUrls),
      );
      expect(own.islands[0].model).toBe(name === "policy" ? "Qwen/Qwen3-32B" : "Qwen/Qwen3-8B");
    }
  });
});
