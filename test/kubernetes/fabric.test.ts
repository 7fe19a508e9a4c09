/**
 * [kubernetes] fabric settings (issue 20): extra_resources, pod_annotations, pod_labels,
 * capabilities and env reach the engine pods and nothing else; cross-pod DeepEP and Mooncake over
 * RDMA are refused until the engine pods get an RDMA device.
 */
import { engineContainers } from "../../components/plan/engines";
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfigText } from "../../components/config";
import { buildPlan } from "../../components/planner";
import { DEFAULT_ENV, PRIME_DEFAULT_ENV } from "../../components/plan/engines/vllm/env";
import { allK8sObjects, renderK8sFleet } from "../../components/kubernetes/fleet-objects";
import { podTemplates } from "../../components/kubernetes/rollout";
import type { Container, K8sObject, PodTemplateSpec } from "../../components/kubernetes/objects";
import { ROOT, stackText } from "../helpers";
import { k8sValidator, type Validator } from "./validate";

/** The engine container of a pod, whichever engine runs in it. */
const isEngineContainer = (c: { name?: unknown }) => engineContainers().includes(c.name as string);

const FABRIC = [
  'extra_resources = { "rdma/ib" = "1", "example.com/nic" = 2 }',
  'pod_annotations = { "k8s.v1.cni.cncf.io/networks" = "ib-net-1,ib-net-2", "example.com/note" = "$(NOT_A_VAR) \\"quoted\\"" }',
  'pod_labels = { "example.com/team" = "rl", tier = "gpu" }',
  'capabilities = ["SYS_RAWIO", "IPC_LOCK"]',
  'env = { NCCL_SOCKET_IFNAME = "eth0", NVSHMEM_HCA_PREFIX = "ibp", NCCL_IB_HCA = "$(mlx5)" }',
].join("\n");

/** A stack's text with `keys` added to its [kubernetes] table (in place of its own fabric settings, if any). */
const withKubernetes = (name: string, keys: string) =>
  stackText(name)
    .replace(/^(extra_resources|pod_annotations|pod_labels|capabilities|env) = .*\n/gm, keys.trim() ? "" : "$&")
    .replace("[kubernetes]\n", `[kubernetes]\n${keys}\n`);

function issues(text: string): { path: string; message: string }[] {
  try {
    loadConfigText(text, "t.toml");
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  return [];
}

const render = (text: string, stack: string) =>
  allK8sObjects(renderK8sFleet(buildPlan(loadConfigText(text, `${stack}.toml`), stack), []));

/** Each pod template with its object and containers (init containers first). */
const pods = (objects: K8sObject[]) =>
  objects.flatMap((o) =>
    podTemplates(o).map((t: PodTemplateSpec) => ({
      object: o,
      template: t,
      containers: [
        ...(((t.spec as any).initContainers ?? []) as Container[]),
        ...((t.spec as any).containers as Container[]),
      ],
    })),
  );
const isEngine = (t: PodTemplateSpec) => (t.metadata as any)?.labels?.["app.kubernetes.io/component"] === "engine";

let validate: Validator;
beforeAll(async () => {
  validate = await k8sValidator();
});

describe("[kubernetes] fabric settings (issue 20)", () => {
  it("default to none: no engine pod changes without them", () => {
    const t = loadConfigText(stackText("k8s-single-node"), "k8s-single-node.toml").target as any;
    expect([t.extra_resources, t.pod_annotations, t.pod_labels, t.capabilities, t.env]).toEqual([{}, {}, {}, [], {}]);
  });

  it("reach every engine container and engine pod, and nothing else: router, EPP + Envoy, Mooncake master, sidecars", () => {
    for (const stack of ["k8s-disaggregated", "k8s-llm-d-pd", "k8s-kv-offload-mooncake", "k8s-wide-ep"]) {
      const objects = render(withKubernetes(stack, FABRIC), stack);
      let engines = 0;
      for (const { object, template, containers } of pods(objects)) {
        expect(validate(object as any), `${object.kind} ${object.metadata.name}`).toEqual([]);
        const meta = template.metadata as any;
        for (const c of containers) {
          const r = c.resources as any;
          const env = Object.fromEntries(((c.env ?? []) as any[]).map((e) => [e.name, e.value]));
          const caps = (c.securityContext as any)?.capabilities?.add ?? [];
          if (isEngine(template) && isEngineContainer(c)) {
            engines++;
            for (const q of ["requests", "limits"] as const)
              expect(r[q], `${object.metadata.name} ${q}`).toMatchObject({ "rdma/ib": "1", "example.com/nic": "2" });
            // Kubelet expands $(VAR) in env values: config text has its $ doubled, as everywhere else.
            expect(env).toMatchObject({
              NCCL_SOCKET_IFNAME: "eth0",
              NVSHMEM_HCA_PREFIX: "ibp",
              NCCL_IB_HCA: "$$(mlx5)",
            });
            // The fleet's own IPC_LOCK (P/D, offload) and the stack's, once each.
            expect([...caps].sort()).toEqual(["IPC_LOCK", "SYS_RAWIO"]);
          } else {
            expect(Object.keys({ ...r?.requests, ...r?.limits }), `${object.metadata.name}/${c.name}`).not.toContain(
              "rdma/ib",
            );
            expect(env, `${object.metadata.name}/${c.name}`).not.toHaveProperty("NCCL_SOCKET_IFNAME");
            expect(caps).not.toContain("SYS_RAWIO");
          }
        }
        if (isEngine(template)) {
          // Annotations are not expanded by kubelet: they are the text as written.
          expect(meta.annotations).toMatchObject({
            "k8s.v1.cni.cncf.io/networks": "ib-net-1,ib-net-2",
            "example.com/note": '$(NOT_A_VAR) "quoted"',
          });
          expect(meta.labels).toMatchObject({
            "example.com/team": "rl",
            tier: "gpu",
            "app.kubernetes.io/component": "engine",
          });
        } else {
          expect(meta?.annotations ?? {}).not.toHaveProperty("k8s.v1.cni.cncf.io/networks");
          expect(meta?.labels ?? {}).not.toHaveProperty("tier");
        }
      }
      expect(engines, stack).toBeGreaterThan(0);
      // The selectors stay the fleet's: pod_labels are on the pods only.
      for (const o of objects)
        expect(JSON.stringify((o as any).spec?.selector ?? {}), `${o.kind} ${o.metadata.name}`).not.toContain("tier");
    }
  });

  it("the fleet adds IPC_LOCK where engines pin memory: cross-pod DeepEP too, not plain wide-EP", () => {
    const caps = (text: string, stack: string) =>
      pods(render(text, stack))
        .filter((p) => isEngine(p.template))
        .map((p) => (p.containers.find((c) => isEngineContainer(c))!.securityContext as any)?.capabilities?.add);
    expect(caps(stackText("k8s-wide-ep"), "k8s-wide-ep")).toEqual([undefined, undefined]);
    const deepep = withKubernetes("k8s-wide-ep", 'extra_resources = { "rdma/ib" = "1" }').replace(
      "[inference.parallel]",
      '[inference.vllm_extra]\nall2all_backend = "deepep_low_latency"\n\n[inference.parallel]',
    );
    expect(caps(deepep, "k8s-wide-ep")).toEqual([["IPC_LOCK"], ["IPC_LOCK"]]);
    expect(caps(withKubernetes("k8s-wide-ep", 'capabilities = ["SYS_RAWIO"]'), "k8s-wide-ep")).toEqual([
      ["SYS_RAWIO"],
      ["SYS_RAWIO"],
    ]);
  });

  it("values in forms Kubernetes or Linux cannot take are refused, naming the key", () => {
    const bad = (keys: string) => issues(withKubernetes("k8s-single-node", keys));
    const at = (keys: string) => bad(keys).map((i) => i.path);
    expect(at('capabilities = ["ipc_lock"]')).toEqual(["kubernetes.capabilities.0"]);
    expect(bad('capabilities = ["CAP_IPC_LOCK"]')[0].message).toMatch(/without the CAP_ prefix/);
    expect(at('capabilities = ["IPC LOCK"]')).toEqual(["kubernetes.capabilities.0"]);
    expect(at('extra_resources = { "rdma/ib" = "one" }')).toEqual(["kubernetes.extra_resources.rdma/ib"]);
    expect(at('extra_resources = { "rdma/ib" = 0 }')).toEqual(["kubernetes.extra_resources.rdma/ib"]);
    expect(at('extra_resources = { "rdma/ib" = "0" }')).toEqual(["kubernetes.extra_resources.rdma/ib"]);
    expect(at('extra_resources = { "rdma/ib" = "500m" }')).toEqual(["kubernetes.extra_resources.rdma/ib"]);
    expect(bad('extra_resources = { "rdma/ib" = "1.5" }')[0].message).toMatch(/whole number/);
    expect(at('extra_resources = { "rdma ib" = "1" }')[0]).toMatch(/^kubernetes\.extra_resources/);
    expect(at('env = { "NCCL-IFNAME" = "eth0" }')[0]).toMatch(/^kubernetes\.env/);
    expect(at('pod_labels = { tier = "two words" }')).toEqual(["kubernetes.pod_labels.tier"]);
    expect(at('pod_annotations = { "bad key!" = "x" }')[0]).toMatch(/^kubernetes\.pod_annotations/);
    // And the good forms load.
    expect(
      bad(
        'extra_resources = { "rdma/ib" = 1, "hugepages-2Mi" = "1Gi" }\ncapabilities = ["SYS_RAWIO"]\nenv = { NCCL_DEBUG = 1 }',
      ),
    ).toEqual([]);
  });

  it("names the fleet (or LeaderWorkerSet) sets are refused, each naming its key", () => {
    const refused = (keys: string) => issues(withKubernetes("k8s-single-node", keys)).map((i) => i.path);
    for (const k of ["app.kubernetes.io/name", "app.kubernetes.io/instance", "vllm-fleet/serving", "llm-d.ai/role"])
      expect(refused(`pod_labels = { "${k}" = "x" }`)).toEqual([`kubernetes.pod_labels.${k}`]);
    expect(refused('pod_labels = { "llm-d.ai/model" = "x", "app.kubernetes.io/part-of" = "rl" }')).toEqual([]);
    expect(refused('pod_annotations = { "vllm-fleet/secrets-digest" = "x" }')).toEqual([
      "kubernetes.pod_annotations.vllm-fleet/secrets-digest",
    ]);
    expect(
      refused('gpu_resource = "amd.com/gpu"\nextra_resources = { "amd.com/gpu" = "1", "nvidia.com/gpu" = "1" }'),
    ).toEqual(["kubernetes.extra_resources.amd.com/gpu"]);
    // Every name the fleet's launcher defaults set, and every env name an engine container gets.
    const fleetNames = [...DEFAULT_ENV, ...PRIME_DEFAULT_ENV].map(([n]) => n);
    const objects = render(stackText("k8s-kv-offload-mooncake"), "k8s-kv-offload-mooncake");
    const engineEnv = pods(objects)
      .filter((p) => isEngine(p.template))
      .flatMap((p) => p.containers.flatMap((c) => ((c.env ?? []) as any[]).map((e) => e.name as string)));
    const names = [
      ...new Set([
        ...fleetNames,
        ...engineEnv,
        "HF_TOKEN",
        "VLLM_API_KEY",
        "LWS_LEADER_ADDRESS",
        "LWS_WORKER_INDEX",
        "LWS_GROUP_SIZE",
        "UCX_TLS",
        "VLLM_NIXL_SIDE_CHANNEL_HOST",
      ]),
    ];
    for (const n of names) expect(refused(`env = { ${n} = "x" }`), n).toEqual([`kubernetes.env.${n}`]);
    // A name env_vars sets belongs in one place.
    const both = issues(
      withKubernetes("k8s-single-node", 'env = { NCCL_DEBUG = "INFO" }') + '\n[env_vars]\nNCCL_DEBUG = "WARN"\n',
    );
    expect(both.map((i) => [i.path, i.message])).toEqual([
      ["kubernetes.env.NCCL_DEBUG", expect.stringContaining("also set in env_vars.NCCL_DEBUG")],
    ]);
  });
});

describe("cross-pod DeepEP and Mooncake over RDMA need the fabric (issue 20)", () => {
  const deepepWideEp = (kubernetes = "") =>
    withKubernetes("k8s-wide-ep", kubernetes).replace(
      "[inference.parallel]",
      '[inference.vllm_extra]\nall2all_backend = "deepep_high_throughput"\n\n[inference.parallel]',
    );

  it("wide-EP over pods with a DeepEP backend: refused without extra_resources, naming the keys and the fix", () => {
    const found = issues(deepepWideEp());
    expect(found.map((i) => i.path)).toEqual(["kubernetes.extra_resources"]);
    const m = found[0].message;
    for (const s of [
      "inference.vllm_extra.all2all_backend",
      "deepep_high_throughput",
      "kubernetes.extra_resources",
      'extra_resources = { "rdma/ib" = "1" }',
      "kubernetes.capabilities",
      '["SYS_RAWIO"]',
      "IPC_LOCK",
      "NCCL_SOCKET_IFNAME",
    ])
      expect(m).toContain(s);
    // Capabilities alone are not the device.
    expect(issues(deepepWideEp('capabilities = ["IPC_LOCK", "SYS_RAWIO"]')).map((i) => i.path)).toEqual([
      "kubernetes.extra_resources",
    ]);
    expect(issues(deepepWideEp('extra_resources = { "rdma/ib" = "1" }'))).toEqual([]);
    // The default backend, one pod, or SLURM: nothing to refuse.
    expect(issues(stackText("k8s-wide-ep"))).toEqual([]);
    expect(
      issues(
        stackText("wide-ep").replace(
          "enable_expert_parallel = true",
          'enable_expert_parallel = true\nvllm_extra = { all2all_backend = "deepep_low_latency" }',
        ),
      ),
    ).toEqual([]);
    // prime-rl's layout names its own key.
    const prime = fs.readFileSync(path.join(ROOT, "stacks", "prime-rl-wide-ep.toml"), "utf8");
    const primeK8s =
      prime.replace(/\n\[slurm\][^[]*/, "\n") + '\n[kubernetes]\nrouter_image = "r.example/vllm-router:1"\n';
    const primeIssues = issues(primeK8s);
    expect(primeIssues.map((i) => i.path)).toEqual(["kubernetes.extra_resources"]);
    expect(primeIssues[0].message).toContain("inference.vllm.all2all_backend");
  });

  it("P/D roles over several pods (DeepEP by default): refused without extra_resources; one-pod roles are not", () => {
    const unfabric = stackText("k8s-disaggregated").replace(/\nextra_resources = .*\n/, "\n");
    const found = issues(unfabric);
    expect(found.map((i) => i.path)).toEqual(["kubernetes.extra_resources"]);
    expect(found[0].message).toContain("each prefill replica (2 pods) runs deepep_high_throughput (the P/D default)");
    expect(found[0].message).toContain("each decode replica (2 pods) runs deepep_low_latency (the P/D default)");
    expect(issues(stackText("k8s-disaggregated"))).toEqual([]);
    expect(issues(stackText("k8s-llm-d-pd"))).toEqual([]);
    // A role's own all2all override is named where prime-rl's layout writes it.
    const prime = fs
      .readFileSync(path.join(ROOT, "test", "fixtures", "prime-rl", "disaggregated-overrides.toml"), "utf8")
      .replace(/\n\[slurm\][^[]*/, "\n")
      .replace(
        "max_num_batched_tokens = 16384",
        'max_num_batched_tokens = 16384\nall2all_backend = "deepep_low_latency"',
      );
    const p = issues(prime + '\n[kubernetes]\nrouter_image = "r.example/vllm-router:1"\n');
    expect(p.map((i) => i.path)).toEqual(["kubernetes.extra_resources"]);
    expect(p[0].message).toContain("deployment.prefill_vllm_overrides.all2all_backend");
    // A non-DeepEP override lifts the refusal for that role (decode is on one pod here).
    expect(
      issues(
        prime.replace('all2all_backend = "deepep_low_latency"', 'all2all_backend = "allgather_reducescatter"') +
          '\n[kubernetes]\nrouter_image = "r.example/vllm-router:1"\n',
      ),
    ).toEqual([]);
  });

  it('Mooncake protocol = "rdma" on Kubernetes: refused without extra_resources; tcp and SLURM are not', () => {
    const rdma = stackText("k8s-kv-offload-mooncake").replace('protocol = "tcp"', 'protocol = "rdma"');
    const found = issues(rdma);
    expect(found.map((i) => i.path)).toEqual(["kubernetes.extra_resources"]);
    expect(found[0].message).toContain('inference.kv_cache_offload.protocol = "rdma"');
    expect(found[0].message).toContain("kubernetes.capabilities");
    expect(issues(rdma.replace("[kubernetes]\n", '[kubernetes]\nextra_resources = { "rdma/ib" = "1" }\n'))).toEqual([]);
    expect(issues(stackText("kv-offload-mooncake"))).toEqual([]);
  });
});
