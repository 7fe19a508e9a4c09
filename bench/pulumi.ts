/**
 * The real Pulumi engine as users run it (issue 25): whole `pulumi` processes on a copy of the
 * project (test/e2e/pulumi-cli.ts), against the SLURM test cluster with stand-in engines.
 *
 *   preview, compiled     `pulumi preview` of a deployed, unchanged stack: the program from dist/
 *   preview, ts-node      the same with Pulumi.yaml's old runtime (typescript: true, index.ts):
 *                         Pulumi's ts-node compiles on the first run after `npm ci` or an update
 *                         (its cache empty), and reads its cache on later runs (warm)
 *   up overhead           `pulumi up` of a new stack minus the create command's own time: the same
 *                         create (captured under mocks, as the program hands it to remote.Command)
 *                         run over ssh on its own; both include the stand-ins' start-up delay
 *
 * Runs are interleaved (up, then the bare create) so a slow moment hits both alike. Reported, not
 * asserted: there is no target (issue 25 asks for the figures). Skipped without a toolchain
 * (FLEET_PULUMI_TOOLCHAIN or pulumi on PATH) or without the test cluster.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  captureCommands,
  CLUSTER_ENV_FILE,
  loginOf,
  readClusterEnv,
  requireProgramFresh,
  standinOverrides,
} from "../test/e2e/program-capture";
import { configPairs, PulumiProject, pulumiToolchain } from "../test/e2e/pulumi-cli";
import { runRemote } from "../test/e2e/ssh";
import { median, round, type Section } from "./report";

const ID = "pulumi";
const TITLE = "the real Pulumi engine: preview of an unchanged stack, and up over its create command";
const RUNS = Math.max(1, Number(process.env.FLEET_BENCH_PULUMI_RUNS ?? 3));
const STACK = "single-node";
const log = (msg: string) => process.stderr.write(`bench pulumi: ${msg}\n`);

export async function run(): Promise<Section> {
  const toolchain = pulumiToolchain();
  if ("missing" in toolchain) return { id: ID, title: TITLE, figures: [], skipped: toolchain.missing };
  if (!fs.existsSync(CLUSTER_ENV_FILE))
    return { id: ID, title: TITLE, figures: [], skipped: `no SLURM test cluster (${CLUSTER_ENV_FILE})` };
  const cluster = readClusterEnv();
  const login = loginOf(cluster);
  const privateKey = fs.readFileSync(cluster.FLEET_E2E_SSH_KEY, "utf8");
  const pulumiStack = "bench-pulumi";
  const overrides = standinOverrides(cluster.FLEET_E2E_PARTITION, pulumiStack);
  const project = new PulumiProject(toolchain);
  const caches: string[] = [];
  const cacheDir = () => caches[caches.push(fs.mkdtempSync(path.join(os.tmpdir(), "bench-ts-node-"))) - 1];
  try {
    await project.ok(["stack", "init", pulumiStack]);
    await project.ok([
      "config",
      "set-all",
      "--path",
      "--plaintext",
      `stackFile=${STACK}`,
      ...configPairs(login, overrides),
    ]);
    await project.ok(["config", "set", "--secret", "sshPrivateKey"], { input: privateKey });
    const { commands } = await captureCommands({
      stackFile: STACK,
      pulumiStack,
      overrides,
      login,
      privateKey,
      loadProgram: requireProgramFresh,
    });
    const [create] = commands;

    const up: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i <= RUNS; i++) {
      const u = await project.ok(["up", "--yes", "--skip-preview"]);
      await project.ok(["destroy", "--yes", "--skip-preview"]);
      const c = await runRemote({ ...create.connection, privateKey }, create.create, create.stdin);
      if (c.code !== 0) throw new Error(`the bare create failed (exit ${c.code}): ${c.stderr.slice(-2000)}`);
      await runRemote({ ...create.connection, privateKey }, create.delete);
      if (i === 0) continue; // warm-up: plugin start, file caches
      up.push(u.ms / 1000);
      bare.push(c.ms / 1000);
      log(`run ${i}: up ${u.ms} ms, bare create ${c.ms} ms`);
    }

    await project.ok(["up", "--yes", "--skip-preview"]);
    const previews = async (n: number) => {
      const xs: number[] = [];
      for (let i = 0; i < n; i++) xs.push((await project.ok(["preview", "--expect-no-changes"])).ms / 1000);
      return xs;
    };
    const compiled = await previews(RUNS + 2);
    // The runtime Pulumi.yaml had before issue 25: TypeScript through Pulumi's bundled ts-node.
    const yamlFile = path.join(project.dir, "Pulumi.yaml");
    const yaml = fs.readFileSync(yamlFile, "utf8");
    fs.writeFileSync(
      yamlFile,
      yaml.replace(/^main: dist\/index\.js\n/m, "").replace("typescript: false", "typescript: true"),
    );
    // ts-node keeps what it compiled in a cache folder: empty, as after `npm ci` or an update of
    // this project (each run its own), then warm (one folder for all).
    const tsNodeCold: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      project.env.TS_NODE_CACHE_DIRECTORY = cacheDir();
      tsNodeCold.push(...(await previews(1)));
    }
    project.env.TS_NODE_CACHE_DIRECTORY = cacheDir();
    await previews(1);
    const tsNodeWarm = await previews(RUNS);
    delete project.env.TS_NODE_CACHE_DIRECTORY;
    fs.writeFileSync(yamlFile, yaml);
    await project.ok(["destroy", "--yes", "--skip-preview"]);
    const overhead = up.map((u, i) => u - bare[i]);
    const seconds = (name: string, xs: number[]) => ({
      name,
      value: round(median(xs)),
      unit: "s",
      samples: xs.map((x) => round(x)),
    });
    return {
      id: ID,
      title: TITLE,
      figures: [
        seconds("pulumi preview, unchanged stack, compiled program (dist/)", compiled),
        seconds("pulumi preview, ts-node (the old runtime), its cache empty (after npm ci or an update)", tsNodeCold),
        seconds("pulumi preview, ts-node, its cache warm", tsNodeWarm),
        { name: "preview ts-node cold / compiled", value: round(median(tsNodeCold) / median(compiled), 2), unit: "x" },
        { name: "preview ts-node warm / compiled", value: round(median(tsNodeWarm) / median(compiled), 2), unit: "x" },
        seconds("pulumi up of a new stack (1 island)", up),
        seconds("its create command alone over ssh", bare),
        seconds("pulumi up overhead over the create command", overhead),
      ],
    };
  } finally {
    await project.pulumi(["destroy", "--yes", "--skip-preview"]).catch(() => undefined);
    project.dispose();
    for (const c of caches) fs.rmSync(c, { recursive: true, force: true });
  }
}
