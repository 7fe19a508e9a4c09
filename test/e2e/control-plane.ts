/**
 * The test control plane (test/kubernetes/control-plane) for an end-to-end file: whether it can be
 * had, starting it in beforeAll and stopping exactly it in afterAll, and kubectl against it.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ROOT } from "../helpers";

export const CONTROL_PLANE = path.join(ROOT, "test", "kubernetes", "control-plane");

/** Why the binaries cannot be had (no cached build and no Go toolchain), or undefined. */
export function controlPlaneMissing(): string | undefined {
  const cached =
    spawnSync("bash", ["-c", `. ${CONTROL_PLANE}/versions.sh && test -f "$(cp_cache_dir)/COMPLETE"`]).status === 0;
  if (cached) return undefined;
  if (!spawnSync("go", ["version"]).error) return undefined;
  return "no Go toolchain on PATH and no cached build under /var/cache/vllm-fleet";
}

export interface ControlPlane {
  /** KUBECONFIG, CP_BIN, CP_API, ... as up.sh wrote them. */
  env: Record<string, string>;
  /** up.sh's exit status: 0, or 4 when it came up without LWS. */
  upCode: number;
  kubectl(args: string[], input?: string): { status: number | null; stdout: string; stderr: string };
  down(): void;
}

/** Starts a control plane (build on first use); `extraEnv` such as CP_FAKE_NODES. Throws when up.sh fails. */
export function startControlPlane(extraEnv: Record<string, string> = {}): ControlPlane {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), "k8s-cp-"));
  const started = Date.now();
  const up = spawnSync("bash", [path.join(CONTROL_PLANE, "up.sh"), state], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...extraEnv },
  });
  console.log(`up.sh exited ${up.status} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (up.status !== 0 && up.status !== 4) throw new Error(`up.sh failed (${up.status}):\n${up.stderr}`);
  const env = Object.fromEntries(
    fs
      .readFileSync(path.join(state, "env"), "utf8")
      .trim()
      .split("\n")
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
  return {
    env,
    upCode: up.status,
    kubectl: (args, input) => {
      const r = spawnSync(env.CP_BIN + "/kubectl", ["--kubeconfig", env.KUBECONFIG, ...args], {
        input,
        encoding: "utf8",
        maxBuffer: 64 << 20,
      });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    },
    down: () => {
      const down = spawnSync("bash", [path.join(CONTROL_PLANE, "down.sh"), state], { encoding: "utf8" });
      if (down.status !== 0) throw new Error(`down.sh failed (${down.status}):\n${down.stderr}`);
    },
  };
}
