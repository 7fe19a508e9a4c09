/**
 * Issue 41: on Kubernetes, vllm-router's follower (components/kubernetes/router-follower.ts) keeps a
 * restarted engine, back on the base model while its peers serve an update, out of the router until
 * the update reaches it. kwok's pods run no processes, so the rendered container runs here; this file
 * with the vllm-router TEST STAND-IN, test/e2e/k8s-router-follower.e2e.test.ts with the REAL one.
 */
import { afterEach, describe, expect, it } from "vitest";
import { BIN, start, stopAll } from "../standins-harness";
import { drillRouterArgs, followerDrill, httpEngines, k8sContainers } from "./router-follower-drill";

afterEach(stopAll);

describe("vllm-router's follower on Kubernetes", () => {
  it("beside vllm-router (regular mode) only, with the engines' weight route, base version and the router's own worker URLs", () => {
    const containers = k8sContainers("k8s-multi-replica");
    const router = containers.find((c) => c.command?.includes("--worker-urls"))!;
    const follower = containers.find((c) => c.name === "router-follower")!;
    const urls = router.command!.slice(router.command!.indexOf("--worker-urls") + 1);
    const port = router.command![router.command!.indexOf("--port") + 1];
    expect(follower.command!.slice(0, 2)).toEqual(["python3", "-c"]);
    // The router through its Service: the follower's own Deployment, so its death leaves the router's pod Ready.
    expect(follower.command!.slice(3)).toEqual([
      expect.stringMatching(
        new RegExp(`^http://k8s-multi-replica-i0-router\\.[^:/]+\\.svc\\.cluster\\.local:${port}$`),
      ),
      "query",
      "/weight_info",
      "default",
      ...urls.slice(0, 2),
    ]);
    expect(containers.filter((c) => c.command?.includes("--worker-urls"))).toHaveLength(1);
    expect(urls).toHaveLength(2);
    // P/D (no run-time add or remove) and llm-d (the EPP follows Ready) have none.
    for (const stack of ["k8s-disaggregated", "k8s-llm-d"])
      expect(k8sContainers(stack).map((c) => c.name)).not.toContain("router-follower");
    // sglang-router's follower speaks its /workers routes.
    const sglang = k8sContainers("k8s-sglang-wide-ep").find((c) => c.name === "router-follower")!;
    expect(sglang.command!.slice(4, 7)).toEqual(["workers", "/model_info", "default"]);
  });

  it("an engine whose listener is gone is taken out at once, kept out (named) while it serves the base weights and its peer v2, and told again once it serves v2; no request fails meanwhile (vllm-router STAND-IN)", async () => {
    const d = await followerDrill(
      "k8s-multi-replica",
      (port, workers, metrics) => start("vllm-router", drillRouterArgs(port, workers, metrics)).proc,
      await httpEngines(),
    );
    expect(BIN).toContain("standins");
    expect(d.whileOut).toEqual({ sent: 20, failed: 0, toA: 0 });
    expect(d.outAfterS).toBeLessThan(3);
    expect(d.backAfterS).toBeLessThan(4);
  }, 60_000);
});
