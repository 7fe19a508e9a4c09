/**
 * Idle release on Kubernetes under the REAL Pulumi engine and the real kubernetes provider 4.34.2
 * (test/e2e/pulumi-cli.ts), against the test control plane: what `pulumi up` does with an island its
 * activity monitor scaled to zero. k8s-multi-replica with `idle_release_after = "20s"` is deployed
 * with `pulumi up` (the monitor's ConfigMap, ServiceAccount, Role, RoleBinding and Deployment are
 * created by the provider, and the up waits for the monitor's pod); then the release is made as the
 * monitor makes it (a merge patch of each StatefulSet's scale subresource, by a field manager other
 * than Pulumi's, and the mark in the ConfigMap), and:
 *
 * 1. `pulumi preview` warns that the island was released and shows its engine workloads updated,
 *    and a plain `pulumi up` brings the replicas back. The provider diffs the inputs against its
 *    checkpoint, not the live object (pulumi-kubernetes provider/pkg/provider/provider.go Diff), so
 *    the scale alone is invisible to it; the program reads the mark before planning and puts the
 *    release's time in an annotation on each workload (components/kubernetes/release-observe.ts),
 *    and the update's server-side apply of the planned workload (provider/pkg/await/await.go
 *    ssaUpdate) takes spec.replicas back from the scale's field manager without a conflict. A
 *    preview afterwards has nothing to change, with the mark still there and once it is cleared;
 * 2. released again, `fleet wake` brings the replicas back and clears the mark, and the next
 *    preview has nothing to change (each workload keeps the annotation the cluster has);
 * 3. released again, `pulumi up --refresh` brings them back too.
 *
 * docs/idle-release.md says what this finds. Skipped, with one loud line, without the toolchain and
 * the control plane (as k8s-pulumi.e2e.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtCliOn, controlPlaneMissing, startControlPlane, type ControlPlane } from "./control-plane";
import {
  configPairs,
  disposeToolchain,
  KUBERNETES_PROVIDER_VERSION,
  PulumiProject,
  pulumiToolchain,
  type Toolchain,
} from "./pulumi-cli";

const cpMissing = controlPlaneMissing();
const toolchain = cpMissing ? { missing: cpMissing } : pulumiToolchain({ kubernetes: true });
const missing = "missing" in toolchain ? toolchain.missing : undefined;
if (missing)
  console.warn(
    `\n*** SKIPPED: idle release under the real Pulumi engine (k8s-idle-pulumi.e2e.test.ts) needs the kubernetes provider ${KUBERNETES_PROVIDER_VERSION} and the test control plane: ${missing} ***\n`,
  );

const STACK = "k8s-multi-replica";
const OVERRIDES = { "inference.idle_release_after": "20s" };
let cp: ControlPlane;
let project: PulumiProject;

describe.skipIf(!!missing)("idle release on Kubernetes under the real Pulumi engine", () => {
  beforeAll(async () => {
    cp = await startControlPlane();
    project = new PulumiProject(toolchain as Toolchain);
  }, 180_000);
  afterAll(() => {
    console.log(`pulumi runs:\n${project?.log.join("\n")}`);
    project?.dispose();
    disposeToolchain(toolchain as Toolchain);
    cp?.down();
  }, 120_000);

  it("a released island: preview shows it and a plain pulumi up brings it back, without a field-manager conflict; fleet wake and pulumi up --refresh bring it back too; no change planned afterwards", async () => {
    const ns = `vllm-fleet-${STACK}`;
    const kubectl = (args: string[]) => cp.kubectl(args);
    const replicas = () =>
      [0, 1].map((k) =>
        Number(
          kubectl(["get", "statefulset", `${STACK}-i0-replica${k}`, "-n", ns, "-o", "jsonpath={.spec.replicas}"])
            .stdout,
        ),
      );
    await project.ok(["stack", "init", STACK]);
    try {
      await project.ok(["config", "set", "kubeconfig", cp.env.KUBECONFIG]);
      await project.ok(["config", "set", "stackFile", `stacks/${STACK}.toml`]);
      await project.ok(["config", "set-all", "--path", ...configPairs({}, OVERRIDES)]);
      const up = await project.ok(["up", "--yes", "--skip-preview"], { timeoutMs: 400_000 });
      console.log(`first up: ${(up.ms / 1000).toFixed(1)} s`);
      const monitor = JSON.parse(kubectl(["get", "deployment", `${STACK}-i0-activity`, "-n", ns, "-o", "json"]).stdout);
      expect(monitor.status.readyReplicas).toBe(1);
      const role = JSON.parse(kubectl(["get", "role", `${STACK}-i0-activity`, "-n", ns, "-o", "json"]).stdout);
      expect(role.rules[1].resources).toEqual(["statefulsets/scale"]);
      expect(
        JSON.parse(kubectl(["get", "configmap", `${STACK}-i0-activity`, "-n", ns, "-o", "json"]).stdout).data,
      ).toBe(undefined);
      expect(replicas()).toEqual([1, 1]);

      // The monitor's writes to its ConfigMap: a merge patch of its keys (null removes one).
      const patchActivity = (data: Record<string, string | null>) => {
        const p = kubectl([
          "patch",
          "configmap",
          `${STACK}-i0-activity`,
          "-n",
          ns,
          "--type=merge",
          "-p",
          JSON.stringify({ data }),
        ]);
        expect(p.status, p.stderr).toBe(0);
      };
      // The release, as the monitor makes it: the mark, then each workload's scale to 0.
      const release = () => {
        const now = Math.floor(Date.now() / 1000);
        patchActivity({ activity: `${now - 25} idle\n`, "idle-released": `${now} ${now - 25}` });
        for (const k of [0, 1]) {
          const s = kubectl([
            "patch",
            "statefulset",
            `${STACK}-i0-replica${k}`,
            "-n",
            ns,
            "--subresource=scale",
            "--type=merge",
            "--field-manager=activity-monitor",
            "-p",
            '{"spec":{"replicas":0}}',
          ]);
          expect(s.status, s.stderr).toBe(0);
        }
        expect(replicas()).toEqual([0, 0]);
        return `${now} ${now - 25}`;
      };
      const marked = () =>
        JSON.parse(kubectl(["get", "configmap", `${STACK}-i0-activity`, "-n", ns, "-o", "json"]).stdout).data?.[
          "idle-released"
        ];
      const mark = release();
      const noChanges = async (when: string) => {
        const p = await project.pulumi(["preview", "--expect-no-changes"]);
        expect(p.code, `${when}: ${(p.stdout + p.stderr).slice(-2000)}`).toBe(0);
      };

      // 1. preview sees the release (the program read the mark), and a plain up brings it back.
      const preview = await project.pulumi(["preview", "--diff"]);
      const shown = preview.stdout + preview.stderr;
      expect(preview.code, shown.slice(-2000)).toBe(0);
      expect(shown).toContain(`${STACK}-i0: its activity monitor released it at`);
      // Both engine StatefulSets (their annotation) and the engines' wait: nothing else.
      expect(shown).toContain(`+ vllm-fleet/idle-released-at: "${mark.split(" ")[0]}"`);
      expect(shown).toMatch(/~ 3 to update/);
      const up1 = await project.pulumi(["up", "--yes", "--skip-preview"], { timeoutMs: 300_000 });
      const upText = up1.stdout + up1.stderr;
      console.log(
        `plain up of a released island: exit ${up1.code} in ${(up1.ms / 1000).toFixed(1)} s, replicas ${JSON.stringify(replicas())}`,
      );
      expect(up1.code, upText.slice(-2000)).toBe(0);
      expect(upText).not.toMatch(/conflict/i);
      expect(replicas()).toEqual([1, 1]);
      const annotation = (k: number) =>
        kubectl([
          "get",
          "statefulset",
          `${STACK}-i0-replica${k}`,
          "-n",
          ns,
          "-o",
          "jsonpath={.metadata.annotations.vllm-fleet/idle-released-at}",
        ]).stdout;
      expect([annotation(0), annotation(1)]).toEqual([mark.split(" ")[0], mark.split(" ")[0]]);
      // The ledger and the mark are the monitor's: an up leaves them, and the plan holds still.
      expect(marked()).toBe(mark);
      await noChanges("after the up, the mark still there");
      // The monitor clears the mark once it sees the replicas back (activity-monitor.py).
      patchActivity({ "idle-released": null });
      await noChanges("after the mark was cleared");

      // 2. Released again: fleet wake brings it back and clears the mark; a second wake finds nothing.
      release();
      const wake = () =>
        builtCliOn(cp, "fleet.js", [
          "wake",
          STACK,
          "--json",
          "--kubeconfig",
          cp.env.KUBECONFIG,
          "--inference.idle_release_after",
          "20s",
        ]);
      const woken = wake();
      expect(woken.status, woken.stderr).toBe(0);
      expect(JSON.parse(woken.stdout).woken.map((w: { island: number }) => w.island)).toEqual([0]);
      expect(replicas()).toEqual([1, 1]);
      expect(marked()).toBeUndefined();
      expect(JSON.parse(wake().stdout).woken).toEqual([]);
      await noChanges("after fleet wake");

      // 3. Released again: `pulumi up --refresh` reads the live replicas into the checkpoint first, and
      // its server-side apply of the planned replica takes spec.replicas back from the scale's field
      // manager: no conflict, the replicas back at 1.
      release();
      const up2 = await project.pulumi(["up", "--refresh", "--yes", "--skip-preview"], { timeoutMs: 300_000 });
      const text = up2.stdout + up2.stderr;
      console.log(
        `up --refresh of a released island: exit ${up2.code} in ${(up2.ms / 1000).toFixed(1)} s, replicas ${JSON.stringify(replicas())}`,
      );
      expect(up2.code, text.slice(-2000)).toBe(0);
      expect(text).not.toMatch(/conflict/i);
      expect(replicas()).toEqual([1, 1]);
      const managers = JSON.parse(
        kubectl(["get", "statefulset", `${STACK}-i0-replica0`, "-n", ns, "-o", "json", "--show-managed-fields"]).stdout,
      ).metadata.managedFields.map(
        (f: { manager: string; operation: string; subresource?: string }) =>
          `${f.manager}/${f.operation}/${f.subresource ?? ""}`,
      );
      console.log(`StatefulSet field managers after up --refresh: ${managers.join(", ")}`);
      // Stable afterwards: nothing more to change.
      const again = await project.pulumi(["preview", "--expect-no-changes"]);
      expect(again.code, (again.stdout + again.stderr).slice(-2000)).toBe(0);
    } finally {
      const destroyed = await project.pulumi(["destroy", "--yes", "--skip-preview"], { timeoutMs: 300_000 });
      expect(destroyed.code, (destroyed.stdout + destroyed.stderr).slice(-2000)).toBe(0);
      await project.pulumi(["stack", "rm", "--yes", STACK]);
    }
  }, 900_000);
});
