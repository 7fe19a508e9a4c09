import { describe, expect, it } from "vitest";
import { loadConfigText } from "../../components/config";
import { buildPlan } from "../../components/planner";
import { checkArgv } from "../../components/upstream/check";
import { stackText } from "../helpers";
import { allK8sObjects, renderK8sFleet } from "../../components/kubernetes/fleet-objects";
import type { Container } from "../../components/kubernetes/objects";

const plan = (name: string) => buildPlan(loadConfigText(stackText(name), `${name}.toml`), name);

/** kv_cache_offload.type = "lmcache" on Kubernetes: LMCache's server as a native sidecar of every engine pod. */
describe("LMCache offload on Kubernetes", () => {
  it("Kubernetes: a native sidecar server in every engine pod, sized by the tier, probed on its HTTP port", () => {
    const k8s = plan("k8s-kv-offload-lmcache");
    const objects = allK8sObjects(renderK8sFleet(k8s, []));
    const sidecars = objects
      .filter((o) => o.kind === "StatefulSet")
      .flatMap((o) => ((o.spec as any).template.spec.initContainers ?? []) as Container[])
      .filter((c) => c.name === "lmcache-server");
    expect(sidecars).toHaveLength(2);
    for (const c of sidecars) {
      expect(c.image).toBe("registry.example.com/lmcache:0.5.5");
      expect((c as any).restartPolicy).toBe("Always");
      expect(checkArgv("lmcache", (c.command as string[]).slice(2))).toEqual([]);
      expect((c as any).startupProbe.tcpSocket.port).toBe(8080);
      expect((c.resources as any).requests.memory).toBe(`${Math.ceil((64_000_000_000 + 8 * 2 ** 30) / 2 ** 20)}Mi`);
    }
  });
});
