/**
 * How long `npm run plan -- <stack>` keeps a user waiting: the plan CLI as its own process, wall
 * time from spawn to exit, for every stack in stacks/, compiled (`node dist/bin/plan.js`, what
 * `npm run plan` runs) and through tsx (`tsx bin/plan.ts`, what it ran before, compiling the
 * TypeScript on every start) side by side. Target: the slowest stack's compiled run <= 0.35 s.
 *
 * dist/ is built first (`npm run build`), so the figures are the current source's. npm's own start
 * (about 0.3 s more for `npm run`) is not included, for either. Runs are interleaved, stack by
 * stack and compiled/tsx alternately, so a slow moment of the machine hits both alike; a warm-up
 * run of each is not counted (the OS file cache, tsx's transform cache).
 *
 * On Linux the notes also give the CPU time the plan process (with its own children: tsx runs the
 * program in a second node process) used, which a busy machine inflates less than the wall time.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { listStacks } from "../components/stack-file";
import { median, round, type Section } from "./report";

const ROOT = path.resolve(__dirname, "..");
const RUNS = Number(process.env.BENCH_CLI_START_RUNS ?? 5);
const TARGET = { op: "<=" as const, value: 0.35 };

type How = "built" | "tsx";

const COMMAND: Record<How, string[]> = {
  built: [process.execPath, path.join(ROOT, "dist", "bin", "plan.js")],
  tsx: [path.join(ROOT, "node_modules", ".bin", "tsx"), path.join(ROOT, "bin", "plan.ts")],
};

/**
 * CPU seconds (user + system) of this process's finished, waited-for children so far: cutime and
 * cstime of /proc/self/stat, in clock ticks of 1/100 s. Undefined where there is no /proc.
 */
function childrenCpu(): number | undefined {
  try {
    const stat = fs.readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}

interface Run {
  /** Seconds from spawn to exit. */
  wall: number;
  cpu?: number;
}

/** One plan as a process; throws unless it printed the stack's plan and exited 0. */
function timePlan(how: How, stack: string): Run {
  const [cmd, ...args] = COMMAND[how];
  const cpu0 = childrenCpu();
  const t0 = performance.now();
  const r = spawnSync(cmd, [...args, stack], { cwd: ROOT, encoding: "utf8", maxBuffer: 64 << 20 });
  const wall = (performance.now() - t0) / 1000;
  const cpu1 = childrenCpu();
  if (r.error) throw r.error;
  if (r.status !== 0 || !r.stdout.startsWith(`stack ${stack} `))
    throw new Error(`${how} plan ${stack} exited ${r.status}: ${r.stderr.trim().slice(-1000)}`);
  return { wall, cpu: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0 };
}

function build(): number {
  const t0 = performance.now();
  // npm run build, not tsc alone: its last step writes the catalog JSON that plan reads at start.
  const r = spawnSync("npm", ["run", "-s", "build"], { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`npm run build failed:\n${r.stdout}${r.stderr}`);
  return (performance.now() - t0) / 1000;
}

export async function run(): Promise<Section> {
  const section: Section = {
    id: "cli-start",
    title: "plan CLI start to exit per stack: compiled JS vs tsx",
    figures: [],
  };
  process.stderr.write("bench: cli-start: building dist/ ...\n");
  const buildS = build();
  const stacks = listStacks();
  // Warm-up: every stack loads the same modules, so one plan of each kind warms them all.
  for (const how of ["built", "tsx"] as How[]) timePlan(how, stacks[0]);
  const runs: Record<How, Map<string, Run[]>> = { built: new Map(), tsx: new Map() };
  for (let r = 0; r < RUNS; r++) {
    process.stderr.write(`bench: cli-start round ${r + 1} of ${RUNS} ...\n`);
    const order: How[] = r % 2 ? ["tsx", "built"] : ["built", "tsx"];
    for (const stack of stacks) {
      for (const how of order) runs[how].set(stack, [...(runs[how].get(stack) ?? []), timePlan(how, stack)]);
    }
  }
  const wall = (how: How, stack: string) => runs[how].get(stack)!.map((x) => round(x.wall));
  /** Median wall and CPU seconds of one kind of run of one stack. */
  const medianOf = (how: How, stack: string) => {
    const cpu = runs[how].get(stack)!.flatMap((x) => (x.cpu === undefined ? [] : [x.cpu]));
    return { wall: median(wall(how, stack)), cpu: cpu.length ? round(median(cpu), 2) : undefined };
  };
  const cpuText = (cpu: number | undefined) => (cpu === undefined ? "" : `, CPU ${cpu} s`);
  const slowest = (how: How) => stacks.reduce((a, b) => (medianOf(how, b).wall > medianOf(how, a).wall ? b : a));
  for (const stack of stacks) {
    const [b, t] = [medianOf("built", stack), medianOf("tsx", stack)];
    section.figures.push({
      name: `plan ${stack}, compiled`,
      value: round(b.wall),
      unit: "s",
      samples: wall("built", stack),
      note: `medians of ${RUNS}${cpuText(b.cpu)}; tsx ${round(t.wall)} s${cpuText(t.cpu)}, ${round(t.wall / b.wall, 1)}x`,
    });
  }
  const [slowBuilt, slowTsx] = [slowest("built"), slowest("tsx")];
  section.figures.push(
    {
      name: `slowest stack, compiled (${slowBuilt})`,
      value: round(medianOf("built", slowBuilt).wall),
      unit: "s",
      target: TARGET,
      // Issue 32 saw 0.46-0.56 s on a busy machine; the last idle figure before it:
      baseline: { value: 0.326, from: "session 15, idle, prime-rl-wide-ep" },
      samples: wall("built", slowBuilt),
      note: `node dist/bin/plan.js, what npm run plan runs${cpuText(medianOf("built", slowBuilt).cpu)}`,
    },
    {
      name: `slowest stack, tsx (${slowTsx})`,
      value: round(medianOf("tsx", slowTsx).wall),
      unit: "s",
      samples: wall("tsx", slowTsx),
      note: `tsx bin/plan.ts, what npm run plan ran before${cpuText(medianOf("tsx", slowTsx).cpu)}`,
    },
    {
      name: "npm run build (tsc -p tsconfig.build.json, then the catalog JSON)",
      value: round(buildS, 1),
      unit: "s",
      note: "once per change to the TypeScript; npm ci and npm test run it",
    },
  );
  return section;
}
