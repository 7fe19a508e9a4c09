/**
 * The prime-rl compatibility survey: loads every inference-bearing TOML of a prime-rl checkout
 * (configs/, examples/, k8s/, and the ```toml snippets of docs/inference.md) through vllm-fleet's
 * loader and planner, and prints what vllm-fleet would run for each. Not part of `npm test` (it
 * needs a prime-rl checkout):
 *
 *   PRIME_RL_DIR=/tmp/prime-rl npx tsx test/compat/prime-rl-survey.ts [--json]
 *
 * With PRIME_RL_VERDICTS naming the JSON that test/compat/prime-rl-verdicts.py writes (prime-rl's
 * own config classes on the same files), each line also says what prime-rl does, and whether the two
 * agree: both refuse, or both accept with the same number of inference nodes. docs/prime-rl.md holds
 * the table for a pinned prime-rl commit.
 *
 * Which files: a file with [trainer] or [orchestrator] is an `rl` file, else one with [data], [eval]
 * or [optim] an `sft` file, else one with an InferenceConfig root key ([vllm], [router], [deployment],
 * ...) an `inference` file, else whatever `<entrypoint> @ <path>` prime-rl's own scripts and manifests
 * pass it to. rl and sft files count when they have [inference]; inference files always do. A file
 * without [slurm] or [kubernetes] is loaded with the target slurm (as `plan --target slurm`). The
 * documentation snippets are completed into the smallest RL file around them (completeSnippet).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { ConfigError, loadConfigText, type FleetConfig } from "../../components/config";
import { parseToml, type TomlTable } from "../../components/config/toml";
import { buildPlan } from "../../components/planner";

const ROOTS = ["configs", "examples", "k8s"];
const DOCS = "docs/inference.md";
/** Keys only an InferenceConfig root has (prime-rl's configs/inference.py). */
const INFERENCE_ROOT_KEYS = ["vllm", "router", "deployment", "kv_cache_offload", "server", "backend_port"];
const MULTI = ["multi_node", "disaggregated"];

type Entrypoint = "rl" | "sft" | "inference";

export interface SurveyFile {
  file: string;
  entrypoint: Entrypoint;
  text: string;
}

export interface SurveyRow {
  file: string;
  entrypoint: Entrypoint;
  verdict: "ok" | "refused";
  error?: string;
  islands?: number;
  nodes?: number;
  engines?: number;
  routers?: number;
  shape?: string;
  tp?: number;
  dp?: number;
  enable_lora?: boolean;
  max_lora_rank?: number;
  enable_expert_parallel?: boolean;
}

const isTable = (v: unknown): v is TomlTable => typeof v === "object" && v !== null && !Array.isArray(v);
const tableAt = (t: TomlTable, key: string): TomlTable => (isTable(t[key]) ? t[key] : {});

function parse(text: string, name: string): TomlTable {
  const r = parseToml(text);
  if (!r.ok) throw new Error(`${name}: ${r.issue.message}`);
  return r.value;
}

function entrypointOf(doc: TomlTable): Entrypoint | undefined {
  if ("orchestrator" in doc || "trainer" in doc) return "rl";
  if ("data" in doc || "eval" in doc || "optim" in doc) return "sft";
  if (INFERENCE_ROOT_KEYS.some((k) => k in doc)) return "inference";
  return undefined;
}

function walk(dir: string, keep: (f: string) => boolean): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((e) => {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) return [".git", "node_modules", "deps"].includes(e.name) ? [] : walk(p, keep);
      return keep(e.name) ? [p] : [];
    });
}

/** `<entrypoint> @ <path>` in prime-rl's scripts, docs and manifests (its Helm chart runs `inference @ ...`). */
function references(root: string): Map<string, string> {
  const found = new Map<string, string>();
  const pattern = /\b(rl|sft|inference|trainer|orchestrator|evals) @ (?:\/app\/)?([\w./-]+\.toml)/g;
  for (const f of walk(root, (n) => /\.(md|ya?ml|py|sh)$/.test(n))) {
    for (const m of fs.readFileSync(f, "utf8").matchAll(pattern)) if (!found.has(m[2])) found.set(m[2], m[1]);
  }
  return found;
}

/**
 * The smallest RL file around a documentation snippet that keeps its meaning: [trainer] and
 * [orchestrator] (prime-rl's RLConfig requires them), [inference], [model] naming the snippet's
 * inference model (prime-rl requires the orchestrator's model to be the served one; the orchestrator
 * then needs a renderer for a model outside its renderer map), and for the shapes prime-rl runs only
 * under SLURM (multi-node inference, Mooncake offload) the multi-node RL deployment and [slurm].
 */
export function completeSnippet(text: string, doc: TomlTable): string {
  const inf = tableAt(doc, "inference");
  const inner = (tableAt(inf, "deployment").type as string | undefined) ?? "single_node";
  let top = (tableAt(doc, "deployment").type as string | undefined) ?? "single_node";
  const model = tableAt(inf, "vllm").model;
  const mooncake = tableAt(inf, "kv_cache_offload").type === "mooncake";
  const add = ["trainer", "orchestrator", "inference"].filter((t) => !(t in doc)).map((t) => `[${t}]`);
  if (model !== undefined && !("model" in doc)) {
    add.push(`[model]\nname = ${JSON.stringify(model)}`);
    if (!("orchestrator" in doc)) add[add.indexOf("[orchestrator]")] = '[orchestrator.renderer]\nname = "default"';
  }
  if (MULTI.includes(inner) && !("deployment" in doc)) {
    add.push('[deployment]\ntype = "multi_node"\nnum_train_nodes = 1');
    top = "multi_node";
  }
  if ((MULTI.includes(inner) || top === "multi_node" || mooncake) && !("slurm" in doc)) add.push("[slurm]");
  return add.join("\n") + "\n" + text;
}

/** The ```toml blocks of docs/inference.md that carry inference settings, completed into RL files. */
function docSnippets(root: string): SurveyFile[] {
  const file = path.join(root, DOCS);
  if (!fs.existsSync(file)) return [];
  const blocks = [...fs.readFileSync(file, "utf8").matchAll(/^```toml\n([\s\S]*?)^```/gm)].map((m) => m[1]);
  const out: SurveyFile[] = [];
  blocks.forEach((raw, i) => {
    const block = raw
      .split("\n")
      .filter((l) => l.trim() !== "...")
      .join("\n");
    // Alternatives one after another (a comment line after a blank line starts each).
    const parts = parseToml(block).ok ? [block] : block.split(/\n\n(?=#)/);
    parts.forEach((part, j) => {
      const doc = parse(part, `${DOCS} block ${i + 1}`);
      if (!("inference" in doc) && !("deployment" in doc)) return; // no inference settings
      const name = `${DOCS}#${i + 1}${parts.length > 1 ? String.fromCharCode(97 + j) : ""}`;
      out.push({ file: name, entrypoint: "rl", text: completeSnippet(part, doc) });
    });
  });
  return out;
}

/** Every inference-bearing file of a prime-rl checkout, then the documentation snippets. */
export function surveyFiles(root: string): SurveyFile[] {
  const refs = references(root);
  const out: SurveyFile[] = [];
  for (const base of ROOTS) {
    for (const abs of walk(path.join(root, base), (n) => n.endsWith(".toml"))) {
      const file = path.relative(root, abs).split(path.sep).join("/");
      const text = fs.readFileSync(abs, "utf8");
      const doc = parse(text, file);
      const entrypoint = entrypointOf(doc) ?? (refs.get(file) as Entrypoint | undefined);
      const bearing =
        entrypoint === "inference" || ((entrypoint === "rl" || entrypoint === "sft") && "inference" in doc);
      if (bearing) out.push({ file, entrypoint: entrypoint!, text });
    }
  }
  return [...out, ...docSnippets(root)];
}

const hasTarget = (doc: TomlTable) => ["slurm", "kubernetes"].some((k) => k in doc || k in tableAt(doc, "inference"));

/** What vllm-fleet makes of one file: its verdict and first error, or the plan's counts. */
export function surveyOne(root: string, f: SurveyFile): SurveyRow {
  const row = { file: f.file, entrypoint: f.entrypoint };
  const target = hasTarget(parse(f.text, f.file)) ? undefined : "slurm";
  const baseDir = path.dirname(path.join(root, f.file.split("#")[0]));
  let cfg: FleetConfig;
  try {
    cfg = loadConfigText(f.text, f.file, [], baseDir, { target });
    const plan = buildPlan(cfg, "survey");
    return {
      ...row,
      verdict: "ok",
      islands: plan.islands.length,
      nodes: plan.totals.nodes,
      engines: plan.totals.engines,
      routers: plan.totals.routers,
      shape: plan.shape,
      tp: cfg.parallel.tp,
      dp: cfg.parallel.dp,
      enable_lora: cfg.enable_lora,
      max_lora_rank: cfg.max_lora_rank,
      enable_expert_parallel: cfg.enable_expert_parallel,
    };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const first = err.issues[0];
    return { ...row, verdict: "refused", error: first.path ? `${first.path}: ${first.message}` : first.message };
  }
}

interface PrimeVerdict {
  file: string;
  verdict: "accept" | "refuse";
  error?: string;
  nodes?: number;
  servers_per_node?: number;
  routers?: number;
}

/** Agreement: both refuse, or both run it on the same number of inference nodes. */
export function agrees(ours: SurveyRow, prime: PrimeVerdict): boolean {
  if (prime.verdict === "refuse") return ours.verdict === "refused";
  return ours.verdict === "ok" && ours.nodes === prime.nodes;
}

function main(): void {
  const root = process.env.PRIME_RL_DIR;
  if (!root || !fs.existsSync(path.join(root, "configs"))) {
    process.stderr.write("set PRIME_RL_DIR to a prime-rl checkout\n");
    process.exit(2);
  }
  const rows = surveyFiles(root).map((f) => surveyOne(root, f));
  const verdictsFile = process.env.PRIME_RL_VERDICTS;
  const prime = new Map<string, PrimeVerdict>(
    verdictsFile ? (JSON.parse(fs.readFileSync(verdictsFile, "utf8")) as PrimeVerdict[]).map((v) => [v.file, v]) : [],
  );
  if (process.argv.includes("--json")) {
    const out = rows.map((r) => (prime.has(r.file) ? { ...r, prime: prime.get(r.file) } : r));
    process.stdout.write(JSON.stringify(out, null, 1) + "\n");
    return;
  }
  let agreed = 0;
  for (const r of rows) {
    const ours =
      r.verdict === "ok"
        ? `ok      islands=${r.islands} nodes=${r.nodes} engines=${r.engines} routers=${r.routers}`
        : `refused ${r.error}`;
    const p = prime.get(r.file);
    let theirs = "";
    if (p) {
      const same = agrees(r, p);
      if (same) agreed++;
      theirs =
        (same ? "  agree" : "  DIFFER") +
        (p.verdict === "accept"
          ? ` | prime-rl: accept nodes=${p.nodes} servers/node=${p.servers_per_node} routers=${p.routers}`
          : ` | prime-rl: refuse ${p.error}`);
    }
    process.stdout.write(`${r.file.padEnd(56)} ${r.entrypoint.padEnd(9)} ${ours}${theirs}\n`);
  }
  const ok = rows.filter((r) => r.verdict === "ok").length;
  process.stdout.write(`\n${rows.length} files: vllm-fleet runs ${ok}, refuses ${rows.length - ok}\n`);
  if (prime.size) {
    const missing = rows.filter((r) => !prime.has(r.file)).length;
    process.stdout.write(`agreement with prime-rl: ${agreed} of ${rows.length - missing}`);
    process.stdout.write(missing ? ` (${missing} files not in ${verdictsFile})\n` : "\n");
  }
}

if (require.main === module) main();
