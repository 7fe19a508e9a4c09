/**
 * The test control plane (test/kubernetes/control-plane) for an end-to-end file: whether it can be
 * had, starting it in beforeAll and stopping exactly it in afterAll, and kubectl against it.
 *
 * No test builds it: build.sh runs before the suite (.ci/run times it as its own step; by hand, run
 * it once), because a build takes minutes and a hook's timeout cannot stop a synchronous one.
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { expect } from "vitest";
import YAML from "yaml";
import { ROOT } from "../helpers";

export const CONTROL_PLANE = path.join(ROOT, "test", "kubernetes", "control-plane");

/** Why the binaries are not there (build.sh has not run, or failed), or undefined. */
export function controlPlaneMissing(): string | undefined {
  const dir = spawnSync("bash", ["-c", `. ${CONTROL_PLANE}/versions.sh && cp_cache_dir`], { encoding: "utf8" });
  const out = dir.stdout.trim();
  if (dir.status === 0 && fs.existsSync(path.join(out, "COMPLETE"))) return undefined;
  return `the test control plane is not built (no ${out || "cache dir"}/COMPLETE): run test/kubernetes/control-plane/build.sh first (.ci/run does, as its own step)`;
}

export interface ControlPlane {
  /** KUBECONFIG, CP_BIN, CP_API, ... as up.sh wrote them. */
  env: Record<string, string>;
  /** up.sh's exit status: 0, or 4 when it came up without LWS. */
  upCode: number;
  kubectl(args: string[], input?: string): { status: number | null; stdout: string; stderr: string };
  down(): void;
}

/**
 * Starts a control plane from the built binaries (never builds: CP_NO_BUILD=1); `extraEnv` such as
 * CP_FAKE_NODES. Asynchronous, so the calling hook's timeout can fire. Throws when up.sh fails.
 */
export async function startControlPlane(extraEnv: Record<string, string> = {}): Promise<ControlPlane> {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), "k8s-cp-"));
  const started = Date.now();
  const child = spawn("bash", [path.join(CONTROL_PLANE, "up.sh"), state], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...extraEnv, CP_NO_BUILD: "1" },
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const status = await new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  console.log(`up.sh exited ${status} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (status !== 0 && status !== 4) throw new Error(`up.sh failed (${status}):\n${stderr}`);
  const env = Object.fromEntries(
    fs
      .readFileSync(path.join(state, "env"), "utf8")
      .trim()
      .split("\n")
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
  return {
    env,
    upCode: status,
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

/** One of the built CLIs (dist/bin/<script>) from the project root, with the control plane's KUBECONFIG. */
export const builtCliOn = (cp: ControlPlane, script: string, args: string[]) =>
  spawnSync("node", [path.join(ROOT, "dist", "bin", script), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, KUBECONFIG: cp.env.KUBECONFIG },
    timeout: 120_000,
  });

/**
 * `plan --out` of a stack (`args`: overrides), applied for real: the namespace first (kubectl -R
 * applies the files in name order), labelled with `namespaceLabels`, then every object. The
 * namespace's file is applied once and removed, so the labels stay and deleting the folder's objects
 * leaves the namespace to its owner.
 */
export function applyPlanned(
  cp: ControlPlane,
  stack: string,
  args: string[] = [],
  namespaceLabels: Record<string, string> = {},
): { namespace: string; objects: any[]; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `k8s-${stack}-`));
  const planned = builtCliOn(cp, "plan.js", [stack, "--out", dir, ...args]);
  expect(planned.status, planned.stderr).toBe(0);
  // plan.json is for people; kubectl -R would read it as an object.
  fs.rmSync(path.join(dir, "plan.json"));
  const files = fs
    .readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".yaml"));
  const objects = files.map((f) => YAML.parse(fs.readFileSync(path.join(dir, f), "utf8")));
  const namespace = objects.find((o) => o.kind !== "Namespace")!.metadata.namespace as string;
  const ns = objects.findIndex((o) => o.kind === "Namespace");
  if (ns >= 0) {
    const file = path.join(dir, files[ns]);
    expect(cp.kubectl(["apply", "-f", file]).status).toBe(0);
    fs.rmSync(file);
  } else cp.kubectl(["create", "namespace", namespace]);
  for (const [k, v] of Object.entries(namespaceLabels))
    expect(cp.kubectl(["label", "--overwrite", "namespace", namespace, `${k}=${v}`]).status).toBe(0);
  const applied = cp.kubectl(["apply", "-R", "-f", dir]);
  expect(applied.status, applied.stderr).toBe(0);
  return { namespace, objects, dir };
}
