/**
 * Issue 41 on Kubernetes: the router pod's follower (components/kubernetes/router-follower.ts) beside
 * the REAL vllm-router 0.1.17 from the pinned venv. The control-plane fixture's kwok pods run no
 * processes, so the rendered follower container runs here as the kubelet would run it, against two
 * engine STAND-INS (HTTP servers: /health, /weight_info, completions) behind the real router; one
 * engine "restarts" as the kubelet restarts a container (its listener gone, then back on the same
 * address with the base weights). The drill: test/kubernetes/router-follower-drill.ts.
 */
import { spawn } from "node:child_process";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { drillRouterArgs, followerDrill } from "../kubernetes/router-follower-drill";
import { launcherDir, pythonEnv } from "./real-parts";

describe("vllm-router's follower on Kubernetes, beside the REAL vllm-router", () => {
  it("REAL vllm-router, STAND-IN engines: a restarted engine is out of the router while it serves the base weights and its peer v2 (no request reaches it, none fails), and back within seconds of serving v2", async () => {
    const { dir } = launcherDir(pythonEnv(), "k8s-router-follower", ["vllm-router"]);
    const d = await followerDrill((port, workers) =>
      spawn(path.join(dir, "vllm-router"), drillRouterArgs(port, workers)),
    );
    console.log(
      `[k8s router follower, real vllm-router] out ${d.outAfterS.toFixed(1)} s after the engine's listener closed; ` +
        `${d.whileOut.failed}/${d.whileOut.sent} failed and ${d.whileOut.toA} reached it while it served the base weights; ` +
        `back in the router ${d.backAfterS.toFixed(1)} s after it served v2`,
    );
    expect(d.whileOut).toEqual({ sent: 20, failed: 0, toA: 0 });
    expect(d.outAfterS).toBeLessThan(3);
    expect(d.backAfterS).toBeLessThan(4);
  }, 180_000);
});
