/**
 * Bench (a): the Pulumi program (index.ts) built under Pulumi's mocks for SLURM P/D fleets of 8, 64,
 * 512 and 4096 nodes, from loading the stack file to the last output resolved. The fleets grow by
 * islands of 8 nodes (2 prefill + 2 decode replicas of 2 nodes, GLM-4.5-Air at tp = 2); one more
 * fleet puts 512 nodes in a single island, to show that resources follow islands, not GPUs.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { requireProgramFresh } from "../test/e2e/program-capture";
import { installMocks, setConfig, settle, slurmConfig, value, type Registered } from "../test/program-harness";
import { median, round, type Figure, type Section } from "./report";

const RUNS = 7;

interface Fleet {
  name: string;
  islands: number;
  /** Replicas of each role per island; every replica spans 2 nodes. */
  replicasPerRole: number;
  /** Measured runs, when fewer than RUNS. */
  runs?: number;
}

const nodesOf = (f: Fleet) => f.islands * f.replicasPerRole * 2 * 2;

const FLEETS: Fleet[] = [
  { name: "8 nodes", islands: 1, replicasPerRole: 2 },
  { name: "64 nodes", islands: 8, replicasPerRole: 2 },
  { name: "512 nodes", islands: 64, replicasPerRole: 2 },
  // 32k GPUs. One run takes seconds, so it runs in the first 5 of the 7 interleaved rounds only.
  { name: "4096 nodes", islands: 512, replicasPerRole: 2, runs: 5 },
  { name: "512 nodes, one island", islands: 1, replicasPerRole: 128 },
];

/** The fleets the targets compare, by name (FLEETS' order is the table's). */
const fleetIndex = (name: string): number => FLEETS.findIndex((f) => f.name === name);

function stackFile(dir: string, f: Fleet): string {
  const file = path.join(dir, `bench-pd-${f.islands}x${f.replicasPerRole}.toml`);
  fs.writeFileSync(
    file,
    [
      "[inference]",
      'model = "zai-org/GLM-4.5-Air"',
      "[inference.parallel]",
      "tp = 2",
      "[inference.deployment]",
      'type = "disaggregated"',
      'gpu_type = "H100"',
      "num_prefill_nodes = 2",
      "num_decode_nodes = 2",
      `num_prefill_replicas = ${f.replicasPerRole}`,
      `num_decode_replicas = ${f.replicasPerRole}`,
      "[deployment]",
      `num_infer_replicas = ${f.islands}`,
      "[slurm]",
      'job_name = "bench"',
      'partition = "cluster"',
      "",
    ].join("\n"),
  );
  return file;
}

/**
 * One `pulumi up` of the program under mocks: milliseconds until every output has resolved, and the
 * CPU time this process spent meanwhile (less distorted than wall time when others load the machine).
 */
async function buildOnce(file: string): Promise<{ ms: number; cpuMs: number; resources: Registered[] }> {
  const registered = installMocks("bench");
  setConfig(slurmConfig({ stackFile: file }));
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  // Loads index.ts and the project's modules anew, so the program runs with this run's config.
  const program = (await requireProgramFresh()) as typeof import("../index");
  await value(program.endpoints);
  await value(program.planned);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  // Component outputs are still being recorded; the next run's mocks must not receive them.
  await settle(registered);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, resources: registered };
}

export async function run(): Promise<Section> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-bench-"));
  try {
    const files = FLEETS.map((f) => stackFile(dir, f));
    // Warm-up: the first run pays for compiling the TypeScript and loading Pulumi's modules.
    await buildOnce(files[0]);
    const times = FLEETS.map(() => [] as number[]);
    const cpuTimes = FLEETS.map(() => [] as number[]);
    const counts: number[] = [];
    // Interleaved rounds, so a slow moment of the machine hits every size alike.
    for (let r = 0; r < RUNS; r++) {
      for (let k = 0; k < FLEETS.length; k++) {
        if (r >= (FLEETS[k].runs ?? RUNS)) continue;
        const { ms, cpuMs, resources } = await buildOnce(files[k]);
        times[k].push(round(ms, 1));
        cpuTimes[k].push(round(cpuMs, 1));
        counts[k] = resources.length;
      }
    }
    const t = times.map(median);
    const [nodes8, nodes64, nodes512, oneIsland512, nodes4096] = [
      "8 nodes",
      "64 nodes",
      "512 nodes",
      "512 nodes, one island",
      "4096 nodes",
    ].map(fleetIndex);
    const timeTargets = new Map([
      [nodes512, 1000],
      [nodes4096, 2000],
    ]);
    const figures: Figure[] = FLEETS.map((f, k) => ({
      name: `program under mocks, P/D ${f.name} (${f.islands} island${f.islands === 1 ? "" : "s"}, ${nodesOf(f) * 8} GPUs)`,
      value: t[k],
      unit: "ms",
      samples: times[k],
      note: `${times[k].length} runs, CPU ${median(cpuTimes[k])} ms`,
      ...(timeTargets.has(k) && { target: { op: "<=" as const, value: timeTargets.get(k)! } }),
      ...(k === nodes512 && { baseline: { value: 601.4, from: "session 15, idle" } }),
    }));
    figures.push(
      {
        name: "t(512 nodes) / t(64 nodes)",
        value: round(t[nodes512] / t[nodes64], 2),
        unit: "x",
        target: { op: "<=", value: 8.5 },
        baseline: { value: 3.24, from: "session 15, idle" },
      },
      {
        name: "t(4096 nodes) / t(512 nodes)",
        value: round(t[nodes4096] / t[nodes512], 2),
        unit: "x",
        target: { op: "<=", value: 8.5 },
      },
    );
    FLEETS.forEach((f, k) =>
      figures.push({
        name: `resources registered, P/D ${f.name}`,
        value: counts[k],
        unit: "resources",
        note: `${round(counts[k] / f.islands, 2)} per island`,
      }),
    );
    // Islands, not GPUs: n islands register n x what one does, and one island of 512 nodes what one of 8 does.
    figures.push({
      name: "resources: 64 islands / 8 islands",
      value: round(counts[nodes512] / counts[nodes64], 3),
      unit: "x",
      target: { op: "<=", value: 8 },
      note: "islands grew 8x",
    });
    figures.push({
      name: "resources: 512 islands / 64 islands",
      value: round(counts[nodes4096] / counts[nodes512], 3),
      unit: "x",
      target: { op: "<=", value: 8 },
      note: "islands grew 8x",
    });
    figures.push({
      name: "resources: one 512-node island / one 8-node island",
      value: round(counts[oneIsland512] / counts[nodes8], 3),
      unit: "x",
      target: { op: "<=", value: 1 },
      note: "GPUs grew 64x",
    });
    return { id: "program", title: "Pulumi program under mocks (SLURM P/D fleets)", figures };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
