import { z } from "zod";
import { type Catalog, lookupModel, nearMiss, type ResolvedModel } from "./catalog";
import type { ConfigIssue } from "./issues";
import { UserPaths } from "./paths";
import { applyAutoSetup } from "./auto-setup";
import { catalogEntry } from "./schema/catalog";
import { everyKey } from "./schema/every-key";
import { inferenceShape, inferenceTable } from "./schema/inference";
import {
  RL_PASSENGERS,
  rlDeploymentTable,
  standaloneLayout,
  type RlLayout,
  type StandaloneLayout,
} from "./schema/layouts";
import { modelTable, parallelTable } from "./schema/model";
import { serverTable } from "./schema/server";
import { DEFAULT_TARGET, TARGET_PARTS, targetPart, TARGETS } from "./target-registry";
import type { DeploymentConfig, FleetConfig, OffloadConfig, PrimeEngineConfig } from "./types";
import { ENGINE_PARTS } from "./engine-registry";
import { checkRouterExtra } from "./router-flags";

type Raw = Record<string, any>;

/**
 * Maps a validated stack file of either layout onto canonical names (the standalone layout's, with
 * [deployment.router] lifted to `router`), as the file wrote it: no defaults yet, so "was it set?"
 * stays answerable.
 */
export function toCanonicalInput(file: Raw, layout: "standalone" | "rl", paths: UserPaths): Raw {
  if (layout === "standalone") {
    const s = file as StandaloneLayout;
    const { router, ...deployment } = (s.deployment ?? {}) as Raw;
    return dropUndefined({
      ...pickInference(s as Raw),
      model: s.model,
      deployment: s.deployment ? deployment : undefined,
      router,
      ...targetTablesOf(s as Raw),
      output_dir: outputDir(s as Raw, paths),
      dry_run: s.dry_run,
    });
  }
  const r = file as RlLayout;
  const inf = r.inference as Raw;
  const { router, ...deployment } = (inf.deployment ?? {}) as Raw;
  // The loader expanded `model = "<id>"` into a table before validation.
  let model = inf.model as Raw | undefined;
  if (!model && r.model) {
    model = { name: r.model.name };
    paths.record("model.name", "model.name");
  }
  // prime-rl's auto_setup_router_replay: the trainer's router replay forces routed experts on.
  const replay = r.trainer?.enable_router_replay === true;
  const routedExperts = replay ? true : inf.enable_return_routed_experts;
  if (replay) paths.record("enable_return_routed_experts", "trainer.enable_router_replay");
  return dropUndefined({
    ...pickInference(inf),
    model,
    deployment: inf.deployment ? deployment : undefined,
    router,
    enable_return_routed_experts: routedExperts,
    islands: r.deployment?.num_infer_replicas,
    rl_deployment: r.deployment,
    rl_model_name: inf.model !== undefined && r.model ? r.model.name : undefined,
    ...targetTablesOf(r as Raw),
    output_dir: outputDir(r as Raw, paths),
    dry_run: r.dry_run,
  });
}

/** The file's target tables (`[slurm]`, `[kubernetes]`, ...), by kind. */
const targetTablesOf = (src: Raw): Raw => Object.fromEntries(TARGETS.map((kind) => [kind, src[kind]]));

/**
 * The older RL layout's keys vllm-fleet accepts and does not act on: prime-rl's RL tables of a whole
 * RL file, and [trainer]'s keys but enable_router_replay.
 */
export function olderRlIgnored(file: Raw): string[] {
  const trainer = Object.keys(file.trainer ?? {})
    .filter((k) => k !== "enable_router_replay")
    .map((k) => `trainer.${k}`);
  return [...trainer, ...RL_PASSENGERS.filter((k) => file[k] !== undefined)];
}

/** Every inference key the schema knows, under its own name; model and deployment are mapped on their own. */
function pickInference(src: Raw): Raw {
  return Object.fromEntries(
    Object.keys(inferenceShape)
      .filter((k) => k !== "model" && k !== "deployment" && src[k] !== undefined)
      .map((k) => [k, src[k]]),
  );
}

function outputDir(src: Raw, paths: UserPaths): string | undefined {
  if (src.output_dir === undefined && src.slurm?.output_dir !== undefined) {
    paths.record("output_dir", "slurm.output_dir");
    return src.slurm.output_dir;
  }
  return src.output_dir;
}

function dropUndefined(o: Raw): Raw {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/**
 * The schema's output for a canonical input: every key the schema knows, with its default where
 * the input leaves it unset. Canonical names are the standalone layout's, so that layout's schema
 * applies the defaults (the router goes back under [deployment] for it).
 */
function withSchemaDefaults(input: Raw, report: (canonical: string, message: string) => void) {
  const {
    router,
    islands: _i,
    rl_deployment: _d,
    rl_model_name: _m,
    role_vllm_extra: _r,
    prime_engine: _p,
    ...rest
  } = input;
  const data: Raw = structuredClone({ ...rest, deployment: { ...input.deployment, router } });
  // A value another layout's schema let through (prime-rl's layout checks less: a chat template
  // from its RL [tokenizer] table is not checked at all) but this one refuses: reported at the key
  // the file wrote, and left unset.
  for (let attempt = 0; attempt < 8; attempt++) {
    const result = standaloneLayout.safeParse(data);
    if (result.success) return result.data;
    for (const iss of result.error.issues) {
      const at = iss.path.map(String);
      const canonical = (at[0] === "deployment" && at[1] === "router" ? at.slice(1) : at).join(".");
      report(canonical, iss.message.replace(/^Invalid input: /, ""));
      const parent = at.slice(0, -1).reduce<Raw | undefined>((t, k) => t?.[k], data);
      if (parent && typeof parent === "object") delete parent[at[at.length - 1]];
    }
  }
  return standaloneLayout.parse(data);
}

/** The value at a canonical dotted path. */
function valueAt(input: Raw, canonical: string): unknown {
  return canonical.split(".").reduce<any>((v, k) => (v && typeof v === "object" ? v[k] : undefined), input);
}

/** An RL file without top-level [deployment], and every standalone file, describes this many islands. */
const ISLANDS = rlDeploymentTable.parse({}).num_infer_replicas;

/** Dotted paths of every leaf in a canonical input (tables with entries count as their leaves). */
export function explicitPaths(input: Raw, prefix = ""): Set<string> {
  const out = new Set<string>();
  for (const [k, v] of Object.entries(input)) {
    const p = prefix ? `${prefix}.${k}` : k;
    out.add(p);
    if (v && typeof v === "object" && !Array.isArray(v)) for (const q of explicitPaths(v, p)) out.add(q);
  }
  return out;
}

/**
 * Where each catalog launch value goes: the stack-file key of the same name, in [model], in
 * [parallel] or at the inference root (a launch key without one fails here, at load).
 */
const LAUNCH_KEYS: [string, string][] = Object.keys(catalogEntry.shape.launch.shape).map((key) => {
  const at =
    key in modelTable.shape
      ? "model."
      : key in parallelTable.shape
        ? "parallel."
        : key in inferenceShape
          ? ""
          : undefined;
  if (at === undefined) throw new Error(`catalog launch key ${key} names no stack-file key`);
  return [key, at];
});

/**
 * The catalog's launch defaults for every key the stack file left unset, as canonical input, and
 * the canonical paths they filled (these never count as explicit: rules keyed on "did the user set
 * it" must not fire on a catalog default).
 */
export function catalogDefaults(input: Raw, entry: ResolvedModel | undefined): { input: Raw; filled: string[] } {
  if (!entry) return { input, filled: [] };
  const filled: string[] = [];
  const out: Raw = { ...input, model: { ...input.model }, parallel: { ...input.parallel } };
  for (const [key, at] of LAUNCH_KEYS) {
    const table = at ? out[at.slice(0, -1)] : out;
    const value = (entry.launch as Raw)[key];
    if (value === undefined || table[key] !== undefined) continue;
    table[key] = value;
    filled.push(at + key);
  }
  // An alias serves the real id, so trainers and /v1/models see one name.
  out.model.name = entry.id;
  return { input: out, filled };
}

/**
 * Applies the model catalog's launch defaults to the keys the stack file left unset, then the
 * schema's defaults, then the auto-setup rules (auto-setup.ts AUTO_SETUP: backend port, prefix caching
 * under offload, expert parallelism for P/D, ...). Reports what cannot be defaulted: a missing model
 * name, a missing cpu.num_bytes, contradictory duplicates between the layouts. `filled` lists the
 * canonical keys the catalog supplied.
 */
export function applyDefaults(
  userInput: Raw,
  layout: "standalone" | "rl",
  paths: UserPaths,
  catalog?: Catalog,
): { config: FleetConfig; issues: ConfigIssue[]; filled: string[] } {
  const issues: ConfigIssue[] = [];
  const explicit = explicitPaths(userInput);
  const issue = (canonical: string, message: string) => issues.push({ path: paths.user(canonical), message });
  const notes: string[] = [];

  const named = userInput.model?.name as string | undefined;
  const entry = named && catalog ? lookupModel(catalog, named) : undefined;
  // prime-rl's layout has prime-rl's defaults (tp 1, ...), not the model catalog's launch values.
  const { input, filled } = paths.prime
    ? { input: userInput, filled: [] as string[] }
    : catalogDefaults(userInput, entry);
  if (entry && named !== entry.id)
    notes.push(
      `${paths.user("model.name")} = "${named}" is the model catalog's alias of ${entry.id}, which is served under that name`,
    );
  const servedId = (name: string) => (catalog && lookupModel(catalog, name)?.id) ?? name;
  // A name one slip away from a catalog entry would plan without the entry's defaults and facts.
  const meant = named && catalog && !entry ? nearMiss(catalog, named) : undefined;
  if (meant)
    issue(
      "model.name",
      `"${named}" is not in the model catalog, but ${meant.id} is: did you mean "${meant.id}"? (${meant.why})`,
    );

  if (!input.model?.name)
    issue(
      "model",
      layout === "rl"
        ? 'no model: set inference.model = "<hugging face id>"'
        : 'no model: add [model] with name = "<hugging face id>"',
    );
  if (
    input.rl_model_name !== undefined &&
    input.model?.name !== undefined &&
    servedId(input.rl_model_name) !== input.model.name
  ) {
    issues.push({
      path: "model.name",
      message: `differs from ${paths.user("model.name")} ("${named}"); the trainer and the inference fleet must serve the same model`,
    });
  }

  const rlDep = input.rl_deployment as Raw | undefined;
  if (
    input.deployment?.gpus_per_node !== undefined &&
    rlDep?.gpus_per_node !== undefined &&
    input.deployment.gpus_per_node !== rlDep.gpus_per_node
  ) {
    issues.push({
      path: "deployment.gpus_per_node",
      message: `${rlDep.gpus_per_node} contradicts inference.deployment.gpus_per_node = ${input.deployment.gpus_per_node}; set it in one place`,
    });
  }

  const values = withSchemaDefaults(input, issue);
  const {
    model,
    parallel,
    deployment: dep,
    ...inference
  } = everyKey(inferenceTable, values as z.output<typeof inferenceTable>);
  const { router, type, gpus_per_node, gpu_type, gpu_memory_gib, ...size } = dep;
  // The canonical deployment lists the GPU facts first, then the shape's own keys.
  const deployment = {
    type,
    gpus_per_node,
    ...(gpu_type !== undefined && { gpu_type }),
    ...(gpu_memory_gib !== undefined && { gpu_memory_gib }),
    ...size,
  } as DeploymentConfig;

  let offload: OffloadConfig | null = null;
  const o = inference.kv_cache_offload;
  if (o) {
    if (!o.cpu) {
      issue(
        "kv_cache_offload.cpu",
        `a cpu tier is required: add [${paths.user("kv_cache_offload.cpu")}] num_bytes = ... (disk-only offload is not supported; the disk tier sits behind the CPU tier)`,
      );
    } else if (o.cpu.num_bytes === undefined) {
      issue("kv_cache_offload.cpu.num_bytes", "is required: the CPU KV pool size in bytes, e.g. 128_000_000_000");
    } else {
      const disk = "disk" in o && o.disk?.path ? { path: o.disk.path } : undefined;
      if ("disk" in o && o.disk && !o.disk.path)
        issue("kv_cache_offload.disk.path", "is required when [kv_cache_offload.disk] is present");
      offload =
        o.type === "lmcache"
          ? { type: "lmcache", cpu: { num_bytes: o.cpu.num_bytes }, chunk_size: o.chunk_size }
          : o.type === "mooncake"
            ? {
                type: "mooncake",
                cpu: { num_bytes: o.cpu.num_bytes },
                disk,
                device_name: o.device_name,
                protocol: o.protocol,
              }
            : { type: "native", cpu: { num_bytes: o.cpu.num_bytes }, disk };
    }
  }

  // Each engine's table of extra flags, checked against its manifest (whichever engine runs: the
  // other's is refused by a rule naming it).
  const extras = Object.fromEntries(
    ENGINE_PARTS.flatMap((part) => {
      if (!part.extraKey || !part.checkExtra) return [];
      const checked = part.checkExtra(
        inference[part.extraKey],
        paths.user(part.extraKey),
        (c) => paths.user(c),
        inference,
      );
      issues.push(...checked.issues);
      return [[part.extraKey, checked.values]];
    }),
  ) as Pick<FleetConfig, "vllm_extra" | "sglang_extra">;

  const [target, targetIssues] = resolveTarget(values, paths);
  issues.push(...targetIssues);

  if (rlDep?.num_train_nodes !== undefined)
    notes.push(
      `deployment.num_train_nodes = ${rlDep.num_train_nodes} is for the trainer, which this program does not deploy`,
    );

  const config: FleetConfig = {
    layout,
    // No model is being reported: [model]'s defaults, without a name.
    model: everyKey(modelTable, model ?? { ...modelTable.parse({ name: "none" }), name: "" }),
    parallel,
    deployment,
    router,
    // Every other inference key, as the schema gives it.
    ...inference,
    server: everyKey(serverTable, inference.server),
    kv_cache_offload: offload,
    vllm_extra: extras.vllm_extra,
    sglang_extra: extras.sglang_extra,
    backend_port: inference.backend_port as number, // AUTO_SETUP fills it when unset
    islands: input.islands ?? ISLANDS,
    target: target ?? placeholderTarget(),
    output_dir: values.output_dir,
    dry_run: values.dry_run,
    explicit,
    rl_deployment: rlDep
      ? {
          type: rlDep.type,
          num_infer_nodes: rlDep.num_infer_nodes,
          ...(paths.prime &&
            dropUndefined({
              num_train_gpus: rlDep.num_train_gpus,
              num_infer_gpus: rlDep.num_infer_gpus,
              gpus_per_node: rlDep.gpus_per_node,
            })),
        }
      : undefined,
    ...(input.role_vllm_extra && { role_vllm_extra: input.role_vllm_extra }),
    ...(paths.prime && { prime_rl: true as const }),
    ...(input.prime_engine && { prime_engine: input.prime_engine as PrimeEngineConfig }),
    notes,
    ...(entry && { catalog: entry }),
  };
  const given = (canonical: string) => valueAt(input, canonical) !== undefined;
  applyAutoSetup(config, { given, rlDeployment: rlDep, paths: (c) => paths.user(c) });
  // The HTTP router's extra flags against its manifest, once auto-setup has picked the router
  // (SGLang's engines take sglang-router); llm-d's and none's tables have no extra.
  const r = config.router;
  if ((r.type === "vllm-router" || r.type === "sglang-router") && r.extra) {
    const checked = checkRouterExtra(r.type, r.extra, paths.user("router.extra"), (c) => paths.user(c));
    issues.push(...checked.issues);
    r.extra = checked.values;
  }
  return { config, issues, filled };
}

/** The target the file's tables select, with its settings (the target part's `settings`), or an issue naming two. */
function resolveTarget(
  values: z.output<typeof standaloneLayout>,
  paths: UserPaths,
): [FleetConfig["target"] | undefined, ConfigIssue[]] {
  const tables = values as unknown as Record<string, Record<string, unknown> | undefined>;
  const named = TARGET_PARTS.filter((part) => tables[part.kind] !== undefined);
  if (named.length > 1) {
    const [first, second] = named.map((part) => paths.user(part.kind));
    return [
      undefined,
      [
        {
          path: named[1].kind,
          message: `a stack file targets one backend: keep either [${first}] or [${second}], not both`,
        },
      ],
    ];
  }
  // No table names a target: the fleet runs on the default target (this machine), as prime-rl runs a file without [slurm].
  const part = named[0] ?? targetPart(DEFAULT_TARGET);
  return part.settings(tables[part.kind], { outputDir: values.output_dir, user: (c) => paths.user(c) }) as [
    FleetConfig["target"],
    ConfigIssue[],
  ];
}

/** Stand-in used only so rules can still run while a target error is being reported: the default target with its defaults. */
function placeholderTarget(): FleetConfig["target"] {
  return targetPart(DEFAULT_TARGET).settings(undefined, { user: (c) => c })[0] as FleetConfig["target"];
}
