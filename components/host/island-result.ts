import { z } from "zod";
import type { DeploymentPlan, IslandPlan, NodeUrl } from "../plan/deployment-plan";
import { ROLES } from "../plan/roles";
import { ENGINE_NAMES } from "../plan/engine-names";
import { TARGETS } from "../config/target-registry";
import { islandRouterSchema } from "../trainer/contract";
import { islandRouter } from "../trainer/router-contract";

/**
 * The contract between an island's create command and the program: one JSON line on stdout (and
 * the same object in <island dir>/endpoints.json for trainers on the cluster). The program renders
 * it with tokens for what only the running job knows (job id, node hosts and addresses, timings);
 * the create command fills them in from validated values, so no shell code ever builds JSON.
 */
export const RESULT_FORMAT = "vllm-fleet/island/v1";

const ipv4 = z.string().regex(/^(\d{1,3}\.){3}\d{1,3}$/, "must be an IPv4 address");
const url = z.string().regex(/^http:\/\/[^\s]+$/, "must be an http URL");
const role = z.enum(ROLES);

/** Fields both kinds of result carry. */
const base = {
  format: z.literal(RESULT_FORMAT),
  stack: z.string(),
  island: z.number().int().min(0),
  jobName: z.string(),
};

/** A job that runs: its create command's result line, and <island dir>/endpoints.json (schema/island.schema.json). */
export const runningIslandSchema = z.object({
  ...base,
  dryRun: z.literal(false),
  jobId: z.string().regex(/^\d+$/),
  adopted: z.boolean(),
  model: z.string(),
  // Results written before a second engine existed are vLLM's.
  engine: z.enum(ENGINE_NAMES).default("vllm"),
  // The target that runs it (the fleet CLI observes it there). Results written before it existed have
  // none: SLURM's, as every host island was then.
  target: z.enum(TARGETS).optional(),
  nodes: z.array(z.object({ name: z.string(), host: z.string().min(1), addr: ipv4 })).min(1),
  routerUrl: url.nullable(),
  engines: z.array(z.object({ id: z.string(), role, replica: z.number().int(), url })),
  adminUrls: z.array(url),
  roles: z.array(role),
  // Results written before it existed have none.
  router: islandRouterSchema.nullable().optional(),
  mooncake: z.object({ master: z.string(), metadata: url }).nullable(),
  timing: z.object({ submittedAt: z.number(), runningAt: z.number(), readyAt: z.number() }),
});

const dryRun = z.object({ ...base, dryRun: z.literal(true), script: z.string() });

export const islandResultSchema = z.discriminatedUnion("dryRun", [runningIslandSchema, dryRun]);
export type IslandResult = z.infer<typeof islandResultSchema>;
export type RunningIsland = z.infer<typeof runningIslandSchema>;

/** A node's tokens: prefix, node index, `end`; the trailing `__` keeps `_1__` from matching inside `_10__`. */
export const NODE_TOKENS = { host: "__FLEET_NODE_HOST_", addr: "__FLEET_NODE_ADDR_", end: "__" } as const;

/** Tokens the create command replaces (its result partial gets them from the renderer, never spelled in bash). */
export const TOKENS = {
  jobId: "__FLEET_JOB_ID__",
  adopted: "__FLEET_ADOPTED__",
  submittedAt: "__FLEET_T_SUBMITTED__",
  runningAt: "__FLEET_T_RUNNING__",
  readyAt: "__FLEET_T_READY__",
  host: (node: number) => `${NODE_TOKENS.host}${node}${NODE_TOKENS.end}`,
  addr: (node: number) => `${NODE_TOKENS.addr}${node}${NODE_TOKENS.end}`,
} as const;

/** The tokens that stand bare in the result (a boolean and numbers once replaced), not in a JSON string. */
const BARE_TOKENS = [TOKENS.adopted, TOKENS.submittedAt, TOKENS.runningAt, TOKENS.readyAt];

const tokenUrl = (u: NodeUrl) => `http://${TOKENS.addr(u.node)}:${u.port}${u.path}`;

/**
 * The island's result with tokens in place of run-time facts. Strings are JSON-encoded here; the
 * non-string tokens (adopted, timings) sit bare and are only valid JSON once replaced.
 */
export function resultTemplate(plan: DeploymentPlan, island: IslandPlan, jobName: string): string {
  const m = island.mooncake;
  const engineReplica = new Map(island.engines.map((e) => [e.id, e.replica]));
  const doc = {
    format: RESULT_FORMAT,
    dryRun: false,
    stack: plan.stack,
    island: island.index,
    jobName,
    jobId: TOKENS.jobId,
    adopted: TOKENS.adopted,
    model: plan.model,
    engine: plan.engine,
    target: plan.target,
    nodes: island.nodes.map((n) => ({ name: n.name, host: TOKENS.host(n.index), addr: TOKENS.addr(n.index) })),
    routerUrl: island.endpoints.router ? tokenUrl(island.endpoints.router) : null,
    engines: island.endpoints.engines.map((e) => ({
      id: e.id,
      role: e.role,
      replica: engineReplica.get(e.id) ?? 0,
      url: tokenUrl(e.url),
    })),
    adminUrls: island.endpoints.engines.map((e) => tokenUrl(e.url)),
    roles: island.endpoints.engines.map((e) => e.role),
    router: islandRouter(plan.routerSettings),
    mooncake: m
      ? {
          master: `${TOKENS.addr(m.headNode)}:${m.masterPort}`,
          metadata: `http://${TOKENS.addr(m.headNode)}:${m.metadataPort}/metadata`,
        }
      : null,
    timing: { submittedAt: TOKENS.submittedAt, runningAt: TOKENS.runningAt, readyAt: TOKENS.readyAt },
  };
  return BARE_TOKENS.reduce((json, t) => json.replaceAll(JSON.stringify(t), t), JSON.stringify(doc));
}

/** The line a dry run prints: where the script was written; nothing was submitted. */
export function dryRunLine(plan: DeploymentPlan, island: IslandPlan, jobName: string, script: string): string {
  return JSON.stringify({
    format: RESULT_FORMAT,
    dryRun: true,
    stack: plan.stack,
    island: island.index,
    jobName,
    script,
  });
}

/**
 * Reads a create command's stdout: progress goes to stderr, so the result is the last non-empty
 * line, checked against `schema`. Anything else is a broken contract and says so with the text it
 * got; `whose` names the command's job in the message ("the island's").
 */
export function parseResultLine<T>(stdout: string, schema: z.ZodType<T>, whose: string): T {
  const line = stdout.trim().split("\n").pop() ?? "";
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    throw new Error(`${whose} create command printed no result line; its last line was: ${line.slice(0, 300)}`);
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success)
    throw new Error(
      `${whose} result line is malformed (${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}): ${line.slice(0, 300)}`,
    );
  return parsed.data;
}

/** An island's create command's result (its own job's, or its entry of a co-scheduled job's). */
export const parseIslandResult = (stdout: string): IslandResult =>
  parseResultLine(stdout, islandResultSchema, "the island's");
