/**
 * `pulumi preview` and `up` see an island its activity monitor released (release-observe.ts): the
 * program reads each releasable island's mark and its engine workloads' annotation before planning,
 * under Pulumi's mocks with a mocked cluster (test/program-harness.ts MockCluster). What the real
 * engine and provider do with the annotation is test/e2e/k8s-idle-pulumi.e2e.test.ts.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ClusterReader } from "../../components/kubernetes/cluster-reader";
import { observeReleases, RELEASE_ANNOTATION, releaseAnnotation } from "../../components/kubernetes/release-observe";
import { loadStackFile, overridesFromObject } from "../../components/config";
import { buildStackPlan } from "../../components/planner";
import { resolveStackFile } from "../../components/stack-file";
import {
  drainRpcs,
  installMocks,
  type MockCluster,
  type Registered,
  setConfig,
  settle,
  value,
} from "../program-harness";

afterEach(drainRpcs);

const STACK = "k8s-multi-replica";
const NS = `vllm-fleet-${STACK}`;
const CONFIG_MAP = `${STACK}-i0-activity`;
const WORKLOADS = [0, 1].map((k) => `${STACK}-i0-replica${k}`);
const path = (w: string) => `/apis/apps/v1/namespaces/${NS}/statefulsets/${w}`;
const IDLE = { "vllm-fleet:overrides": JSON.stringify({ "inference.idle_release_after": "20s" }) };

async function program(config: Record<string, string>, cluster: MockCluster) {
  const registered: Registered[] = installMocks(STACK, { cluster });
  setConfig(config, []);
  vi.resetModules();
  const infra = await import("../../index");
  await value(infra.islands);
  await settle(registered);
  const workloads = registered
    .filter((r) => r.type === "kubernetes:apps/v1:StatefulSet" && WORKLOADS.includes(r.name))
    .sort((a, b) => a.name.localeCompare(b.name));
  const wait = registered.find((r) => r.type === "command:local:Command" && r.name === `${STACK}-i0-engines-ready`)!;
  return { workloads, wait };
}

describe("pulumi up brings back a released Kubernetes island (the program under mocks)", () => {
  it("a stack without idle_release_after reads nothing from the cluster and plans no annotation", async () => {
    const reads: string[] = [];
    const { workloads, wait } = await program({}, { reads });
    expect(reads).toEqual([]);
    expect(workloads).toHaveLength(2);
    for (const w of workloads) expect(w.inputs.metadata.annotations[RELEASE_ANNOTATION]).toBeUndefined();
    expect(wait.inputs.environment.FLEET_WAIT_RELEASED_AT).toBeUndefined();
  });

  it("never released: the mark and each workload are read, no annotation, the engines' wait says never", async () => {
    const reads: string[] = [];
    const { workloads, wait } = await program(IDLE, { reads });
    expect(reads).toEqual([`configmap ${CONFIG_MAP}`, ...WORKLOADS.map(path)]);
    for (const w of workloads) {
      expect(w.inputs.metadata.annotations[RELEASE_ANNOTATION]).toBeUndefined();
      // The annotations the render made are all still there.
      expect(w.inputs.metadata.annotations["pulumi.com/skipAwait"]).toBe("true");
    }
    expect(wait.inputs.environment.FLEET_WAIT_RELEASED_AT).toBe("never");
  });

  it("released (the mark): every engine workload carries the release's time, so the provider sees a change; the engines are waited for again", async () => {
    const { workloads, wait } = await program(IDLE, {
      configMaps: { [CONFIG_MAP]: { activity: "1700000000 idle\n", "idle-released": "1700000025 1700000000" } },
    });
    for (const w of workloads) expect(w.inputs.metadata.annotations[RELEASE_ANNOTATION]).toBe("1700000025");
    expect(wait.inputs.environment.FLEET_WAIT_RELEASED_AT).toBe("1700000025");
  });

  it("brought back (no mark): each workload keeps the value the cluster has, so nothing changes after fleet wake or the monitor's clearing", async () => {
    const { workloads, wait } = await program(IDLE, {
      configMaps: { [CONFIG_MAP]: { activity: "1700000000 idle\n" } },
      annotations: { [path(WORKLOADS[0])]: { [RELEASE_ANNOTATION]: "1700000025" }, [path(WORKLOADS[1])]: {} },
    });
    expect(workloads.map((w) => w.inputs.metadata.annotations[RELEASE_ANNOTATION])).toEqual(["1700000025", undefined]);
    expect(wait.inputs.environment.FLEET_WAIT_RELEASED_AT).toBe("1700000025");
  });
});

describe("observeReleases", () => {
  const plan = buildStackPlan(
    loadStackFile(resolveStackFile(STACK).file, overridesFromObject({ "inference.idle_release_after": "20s" }, "test")),
    STACK,
  );
  const reader = (over: Partial<ClusterReader>) => async () => ({ ...({} as ClusterReader), ...over });

  it("warns about a marked island, naming it and when, and reads the mark as releaseAnnotation does", async () => {
    const warnings: string[] = [];
    const seen = await observeReleases(
      reader({
        configMapData: async () => ({ "idle-released": "1700000025 1700000000" }),
        objectAnnotations: async () => undefined,
      }),
      plan,
      (m) => warnings.push(m),
    );
    expect(seen[CONFIG_MAP].mark).toEqual({ at: 1700000025, idleSince: 1700000000 });
    expect(releaseAnnotation(seen[CONFIG_MAP], WORKLOADS[0])).toBe("1700000025");
    expect(warnings).toEqual([
      `${STACK}-i0: its activity monitor released it at 2023-11-14T22:13:45.000Z (idle since 2023-11-14T22:13:20.000Z, idle_release_after); pulumi up scales its engine workloads back`,
    ]);
  });

  it("a cluster that does not answer fails the run, saying what it asked and why", async () => {
    await expect(
      observeReleases(
        reader({
          configMapData: async () => {
            throw new Error("GET https://k8s/api/v1/... answered 403: forbidden");
          },
          objectAnnotations: async () => undefined,
        }),
        plan,
        () => {},
      ),
    ).rejects.toThrow(
      /read each island's idle release mark from the cluster.*could not: GET .* answered 403: forbidden/,
    );
  });
});
