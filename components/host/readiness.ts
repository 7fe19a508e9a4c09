import type { DeploymentPlan, IslandPlan, NodeUrl } from "../plan/deployment-plan";
import { engineNamed } from "../plan/engines";
import { SECRETS, type SecretName } from "../credentials";
import { shq } from "../shell";
import { NODE_TOKENS, resultTemplate, TOKENS } from "./island-result";
import { weightsRecordPath } from "./weights-record";

/*
 * What "serving" means for an island, and the view the readiness partials
 * (templates/host/readiness/) render from, for every target whose create command waits for its
 * own processes (SLURM, local). Each target's create script defines, before them: say, note's
 * clock, fail, job_state and final_state, hosts and addrs.
 */

/**
 * The longest line, in characters, the create and delete commands write to stderr (SLURM's over ssh, local's on this machine). remote.Command
 * logs stderr through a bufio.Scanner with the default 64 KiB token limit (pulumi-command v1.2.1,
 * provider/pkg/provider/util/util.go LogOutput, fed by remote/commandOutputs.go run through an
 * io.Pipe): at a longer line the scanner stops reading, the pipe's writer blocks, and `pulumi up`
 * hangs for good, even after the command ended. 2000 characters stay under 64 KiB in any encoding.
 */
export const STDERR_LINE_BOUND = 2000;

/** One endpoint the create command waits for. */
export interface ReadinessProbe {
  /** Who answers: an engine id or "router". */
  name: string;
  url: NodeUrl;
  /** What the body must contain, whitespace removed (the served model in /v1/models, a worker count). */
  expect?: string;
}

/** The weights check's expectation: the record in the island's folder (probes.sh probe_weights). */
const weightsExpect = (islandDir: string) => `@weights=${weightsRecordPath(islandDir)}`;

/** What a /v1/models body contains (whitespace removed) when it lists `model`. */
const modelListed = (model: string) => JSON.stringify({ id: model }).slice(1, -1).replace(/\s/g, "");

/**
 * What "serving" means for an island: every engine with an API answers /health and lists the model
 * in /v1/models; the router answers through its own /health (vllm-router) and lists the model
 * through its proxy path, which proves it reaches a worker. A router told its workers at run time
 * (lateWorkers) answers /readiness from the start, so it must count them all healthy there first.
 * Envoy routes only the API, so llm-d is checked by /v1/models through the listener (Envoy → EPP →
 * engine).
 */
export function readinessProbes(island: IslandPlan, model: string, islandDir?: string): ReadinessProbe[] {
  const probes: ReadinessProbe[] = [];
  const listed = modelListed(model);
  for (const e of island.engines) {
    if (e.port === undefined) continue;
    const { health, models, weightVersion } = engineNamed(e.engine).routes;
    probes.push({ name: e.id, url: { node: e.node, port: e.port, path: health } });
    probes.push({ name: e.id, url: { node: e.node, port: e.port, path: models }, expect: listed });
    // A revived island's engine serves the fleet's recorded weights (probes.sh probe_weights).
    if (islandDir !== undefined)
      probes.push({
        name: e.id,
        url: { node: e.node, port: e.port, path: weightVersion },
        expect: weightsExpect(islandDir),
      });
  }
  const r = island.router;
  if (r) {
    const at = (path: string) => ({ node: r.node, port: r.port, path });
    if (r.kind !== "llm-d" && r.lateWorkers)
      probes.push({ name: "router", url: at("/readiness"), expect: `"healthy_workers":${r.lateWorkers.count},` });
    else if (r.kind !== "llm-d") probes.push({ name: "router", url: at("/health") });
    probes.push({ name: "router", url: at("/v1/models"), expect: listed });
  }
  return probes;
}

/** The result protocol's tokens (TOKENS) as the result partial writes them; a node's are prefix, `${k}`, end. */
export const RESULT_TOKENS = {
  jobId: shq(TOKENS.jobId),
  adopted: shq(TOKENS.adopted),
  submittedAt: shq(TOKENS.submittedAt),
  runningAt: shq(TOKENS.runningAt),
  readyAt: shq(TOKENS.readyAt),
  hostPrefix: shq(NODE_TOKENS.host),
  addrPrefix: shq(NODE_TOKENS.addr),
  nodeEnd: shq(NODE_TOKENS.end),
};

/** A probe's URL in the create script: its node's address from `addrs`, where the island's nodes start at `first`. */
export const probeUrl = (u: NodeUrl, first = 0) => `"http://\${addrs[${first + u.node}]}"${shq(`:${u.port}${u.path}`)}`;

/** The readiness partials' entry for one check: its name, URL and expected body part, shell-quoted. */
export const probeView = (p: ReadinessProbe, name = p.name, first = 0) => ({
  name: shq(name),
  url: probeUrl(p.url, first),
  expect: shq(p.expect ?? ""),
});

/** The API key's file in `secretsDir` when the configured `secrets` hold the key, shell-quoted. */
export const apiKeyFileIn = (secrets: readonly SecretName[], secretsDir: string) =>
  secrets.includes("apiKey") ? shq(`${secretsDir}/${SECRETS.apiKey.file}`) : undefined;

/**
 * The readiness partials' view: what to probe, the model to find, the API key's file (in
 * `secretsDir`, where the island's credentials are written, when the configured `secrets` hold the
 * key), the result line with its tokens, and the stderr line bound.
 */
export function readinessView(
  plan: DeploymentPlan,
  island: IslandPlan,
  name: string,
  secrets: readonly SecretName[],
  secretsDir: string,
  islandDir: string,
) {
  return {
    probes: readinessProbes(island, plan.model, islandDir).map((p) => probeView(p)),
    apiKeyFile: apiKeyFileIn(secrets, secretsDir),
    resultTemplate: shq(resultTemplate(plan, island, name)),
    tokens: RESULT_TOKENS,
    lineBound: STDERR_LINE_BOUND,
  };
}
