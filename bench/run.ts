/**
 * `npm run bench [-- <section>...] [--json <file>]`: the benchmarks of issue 7, each against its
 * target, printed as one table and written as JSON (default bench/out/bench.json).
 *
 *   program    the Pulumi program under mocks for P/D fleets of 8, 64 and 512 nodes
 *   readiness  real SLURM test cluster: endpoints printed minus last engine healthy; 8 vs 1 replicas
 *   readiness-real  the same with a real vLLM engine (CPU build, tiny model) behind the real router
 *   compile-cache  the same real engine deployed twice over one compile cache: second / first create -> ready
 *   fleet-cli  `fleet status` and `fleet metrics` over 64 stand-in engines against one
 *   cli-start  `plan <stack>` as a process for every stack: compiled JS (dist/) vs tsx
 *   pulumi     the real Pulumi engine: preview of an unchanged stack (dist/ vs ts-node), up over create
 *
 * Sections run one after another so they never compete for the machine's cores.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { meets, sectionsTable, type Section } from "./report";

const SECTIONS: Record<string, () => Promise<Section>> = {
  program: async () => (await import("./program")).run(),
  readiness: async () => (await import("./readiness")).run(),
  "readiness-real": async () => (await import("./readiness-real")).run(),
  "compile-cache": async () => (await import("./compile-cache")).run(),
  "fleet-cli": async () => (await import("./fleet-cli")).run(),
  "cli-start": async () => (await import("./cli-start")).run(),
  pulumi: async () => (await import("./pulumi")).run(),
};

async function main(argv: string[]): Promise<number> {
  let out = path.join(__dirname, "out", "bench.json");
  const chosen: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--json") out = path.resolve(argv[++i] ?? "");
    else if (argv[i] in SECTIONS) chosen.push(argv[i]);
    else {
      process.stderr.write(`bench: unknown argument ${argv[i]}; sections are ${Object.keys(SECTIONS).join(", ")}\n`);
      return 2;
    }
  }
  const sections: Section[] = [];
  for (const id of chosen.length ? chosen : Object.keys(SECTIONS)) {
    process.stderr.write(`bench: ${id} ...\n`);
    sections.push(await SECTIONS[id]());
  }
  process.stdout.write(sectionsTable(sections) + "\n");
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify({ at: new Date().toISOString(), sections }, null, 2) + "\n");
  process.stderr.write(`bench: wrote ${out}\n`);
  const missed = sections.flatMap((s) => s.figures.filter((f) => meets(f) === false).map((f) => `${s.id}: ${f.name}`));
  if (missed.length) process.stderr.write(`bench: ${missed.length} target(s) missed: ${missed.join("; ")}\n`);
  return missed.length ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
