import type { Target } from "../target";
import { k8sIslandPrefix } from "./base-name";
import { k8sEndpoints } from "./fleet-objects";
import { observeKubernetesFleet } from "./fleet-status";
import { heldThroughApi } from "./held-pods";
import { logsThroughApi, scrapeThroughApi } from "./pod-reads";
import { fleetNamespace } from "./fleet-namespace";
import { k8sNames } from "./names";
import { kubernetesPlanOut } from "./plan-out";
import { kubernetesSettings } from "./settings";
import { kubernetesStackReport } from "./stack-report";
import { wakeThroughApi } from "./wake";

/** Kubernetes as the planner, `plan` and the fleet CLI see it (the Pulumi side is ./deploy). */
export const kubernetesTarget: Target = {
  kind: "kubernetes",
  title: "Kubernetes",
  namespaceKey: ["kubernetes", "namespace"],
  plan: {
    // A real InferencePool in the fleet's namespace, named like the island's objects.
    poolRef: (settings, { stack, service }, island) => ({
      name: k8sIslandPrefix(stack, island, service),
      namespace: fleetNamespace(kubernetesSettings({ settings }), stack).name,
      discovery: "pool",
    }),
    // Pods request exactly the GPUs their engine uses.
    wholeNodes: () => undefined,
    gpuTypeHint: (settings) => {
      const product = kubernetesSettings({ settings }).node_selector["nvidia.com/gpu.product"];
      return product
        ? { hint: product, from: `kubernetes.node_selector."nvidia.com/gpu.product" = "${product}"` }
        : undefined;
    },
  },
  // Each service's islands are in folders of their own; the namespace and Secret are the stack's.
  planOut: kubernetesPlanOut,
  // The namespace and the Pod Security level the stack's pods need.
  stackReport: kubernetesStackReport,
  // Names are chosen, not allocated: the URLs are final at plan time.
  knownUrls: (plan) => k8sEndpoints(plan),
  placementText: (plan, island) => {
    const names = k8sNames(plan);
    return names
      .workloads(island)
      .map((w) => `    ${w.kind} ${w.name}: ${w.engines.map((e) => names.pod(island, e.node).pod).join(" ")}`);
  },
  // Its URLs resolve only inside the cluster: `fleet status` reads the API server instead.
  fleet: {
    shell: "none",
    inClusterUrls: true,
    cluster: {
      observe: observeKubernetesFleet,
      held: (plan, access) => heldThroughApi(plan, access),
      scrape: (plan, access) => scrapeThroughApi(plan, access),
      logs: (plan, access, select, lines) => logsThroughApi(plan, access, select, lines),
      wake: (plan, access) => wakeThroughApi(plan, access),
    },
  },
};
