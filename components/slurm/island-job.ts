import { createHash } from "node:crypto";
import type { DeploymentPlan, IslandPlan, NodeUrl } from "../plan/deployment-plan";
import { engineNamed } from "../plan/engines";
import { dryRunLine, NODE_TOKENS, resultTemplate, TOKENS } from "./island-result";
import { islandDir, jobName, renderIslandScript } from "./sbatch";
import { secretsDir } from "./secret-files";
import { SECRETS, type SecretName } from "../credentials";
import { heredocDelimiter, loginShellArg, shq } from "../shell";
import { renderOneLine, renderTemplate } from "./templates";
import { boundedOnLogin, type LoginBound } from "./login-bound";
import { slurmSettings } from "./settings";

/** Slack on top of the pending and ready timeouts for cancelling stale jobs, submitting and failing. */
const CREATE_SLACK_S = 300;
/** The delete command gives up after 120 s of waiting; this leaves room for squeue and scancel. */
const DELETE_TIMEOUT_S = 300;

/**
 * The longest line, in characters, the create and delete commands write to stderr. remote.Command
 * logs stderr through a bufio.Scanner with the default 64 KiB token limit (pulumi-command v1.2.1,
 * provider/pkg/provider/util/util.go LogOutput, fed by remote/commandOutputs.go run through an
 * io.Pipe): at a longer line the scanner stops reading, the pipe's writer blocks, and `pulumi up`
 * hangs for good, even after the command ended. 2000 characters stay under 64 KiB in any encoding.
 */
export const STDERR_LINE_BOUND = 2000;

/** Room for create's own cleanup after the SIGTERM: the logs' tails, scancel, and at most 60 s of waiting. */
const CREATE_KILL_AFTER_S = 120;
/** delete has nothing to clean up after the SIGTERM. */
const DELETE_KILL_AFTER_S = 30;

/** One endpoint the create command waits for. */
export interface ReadinessProbe {
  /** Who answers: an engine id or "router". */
  name: string;
  url: NodeUrl;
  /** The body must list the served model (a /v1/models call). */
  model: boolean;
}

/**
 * What "serving" means for an island: every engine with an API answers /health and lists the model
 * in /v1/models; the router answers through its own /health (vllm-router) and lists the model
 * through its proxy path, which proves it reaches a worker. Envoy routes only the API, so llm-d is
 * checked by /v1/models through the listener (Envoy → EPP → engine).
 */
export function readinessProbes(island: IslandPlan): ReadinessProbe[] {
  const probes: ReadinessProbe[] = [];
  for (const e of island.engines) {
    if (e.port === undefined) continue;
    const { health, models } = engineNamed(e.engine).routes;
    probes.push({ name: e.id, url: { node: e.node, port: e.port, path: health }, model: false });
    probes.push({ name: e.id, url: { node: e.node, port: e.port, path: models }, model: true });
  }
  const r = island.router;
  if (r) {
    if (r.kind === "vllm-router")
      probes.push({ name: "router", url: { node: r.node, port: r.port, path: "/health" }, model: false });
    probes.push({ name: "router", url: { node: r.node, port: r.port, path: "/v1/models" }, model: true });
  }
  return probes;
}

/** Everything one island's remote.Command needs: the command strings and the replacement key. */
export interface IslandJob {
  jobName: string;
  islandDir: string;
  /**
   * The command sshd runs: `timeout ... bash -s` (see LoginBound). The create script comes on
   * stdin so no argument-length limit applies.
   */
  create: string;
  stdin: string;
  /** `timeout ... bash -c '<one line>'`, so it runs under any login shell (csh included). */
  delete: string;
  /** Hash of the submitted script: a new hash means a new job (the old one is cancelled first). */
  scriptHash: string;
  dryRun: boolean;
  /** The bounds `timeout` enforces on create (and update) and on delete. */
  bounds: { create: LoginBound; delete: LoginBound };
}

const probeUrl = (u: NodeUrl) => `"http://\${addrs[${u.node}]}"${shq(`:${u.port}${u.path}`)}`;

/** The create script: this template and its partials (templates/slurm/create/), one view for all. */
export const CREATE_TEMPLATE = "slurm/create.sh.mustache";

/** The result protocol's tokens (TOKENS) as the result partial writes them; a node's are prefix, `${k}`, end. */
const RESULT_TOKENS = {
  jobId: shq(TOKENS.jobId),
  adopted: shq(TOKENS.adopted),
  submittedAt: shq(TOKENS.submittedAt),
  runningAt: shq(TOKENS.runningAt),
  readyAt: shq(TOKENS.readyAt),
  hostPrefix: shq(NODE_TOKENS.host),
  addrPrefix: shq(NODE_TOKENS.addr),
  nodeEnd: shq(NODE_TOKENS.end),
};

/** The create script's view (every value shell-quoted) and the hash of the sbatch script it submits. */
export function createScriptView(
  plan: DeploymentPlan,
  island: IslandPlan,
  secrets: readonly SecretName[] = [],
): { view: object; scriptHash: string } {
  const t = slurmSettings(plan, "renderIslandJob");
  const name = jobName(plan, island.index);
  const dir = islandDir(plan, island);
  const { script } = renderIslandScript(plan, island, secrets);
  const scriptHash = createHash("sha256").update(name).update("\0").update(script).digest("hex").slice(0, 16);
  const scriptName = `${name}.sbatch`;
  const probes = readinessProbes(island);
  const modelEntry = JSON.stringify({ id: plan.model }).slice(1, -1).replace(/\s/g, "");
  const view = {
    jobName: shq(name),
    island: island.name,
    islandDir: shq(dir),
    scriptName: shq(scriptName),
    comment: shq(`vllm-fleet:${scriptHash}`),
    nodeCount: island.nodes.length,
    pendingTimeout: t.pending_timeout,
    readyTimeout: t.ready_timeout,
    pendingTimeoutKey: "slurm.pending_timeout",
    readyTimeoutKey: "slurm.ready_timeout",
    script: script.trimEnd(),
    scriptDelimiter: heredocDelimiter("FLEET_SCRIPT", script),
    dryRun: plan.dryRun,
    dryRunLine: shq(dryRunLine(plan, island, name, `${dir}/${scriptName}`)),
    probes: probes.map((p) => ({ name: shq(p.name), url: probeUrl(p.url), model: p.model ? 1 : 0 })),
    modelEntry: shq(modelEntry),
    apiKeyFile: secrets.includes("apiKey") ? shq(`${secretsDir(dir)}/${SECRETS.apiKey.file}`) : undefined,
    resultTemplate: shq(resultTemplate(plan, island, name)),
    tokens: RESULT_TOKENS,
    lineBound: STDERR_LINE_BOUND,
  };
  return { view, scriptHash };
}

/**
 * The create and delete commands of one island's SLURM job (pure; the SlurmJob component runs them).
 * `secrets` names the configured credentials: the job reads them from their files, and with an API
 * key the readiness probes authenticate (the key goes to curl on a pipe, never on a command line).
 */
export function renderIslandJob(
  plan: DeploymentPlan,
  island: IslandPlan,
  secrets: readonly SecretName[] = [],
): IslandJob {
  const { view, scriptHash } = createScriptView(plan, island, secrets);
  const t = slurmSettings(plan, "renderIslandJob");
  const name = jobName(plan, island.index);
  const dir = islandDir(plan, island);
  const stdin = renderTemplate(CREATE_TEMPLATE, view);
  const del = renderOneLine("slurm/delete.sh.mustache", {
    jobName: shq(name),
    islandDir: shq(dir),
    lineBound: STDERR_LINE_BOUND,
  });
  const bounds = {
    create: { seconds: t.pending_timeout + t.ready_timeout + CREATE_SLACK_S, killAfter: CREATE_KILL_AFTER_S },
    delete: { seconds: DELETE_TIMEOUT_S, killAfter: DELETE_KILL_AFTER_S },
  };
  return {
    jobName: name,
    islandDir: dir,
    create: boundedOnLogin(bounds.create, "bash -s"),
    stdin,
    delete: boundedOnLogin(bounds.delete, `bash -c ${loginShellArg(del)}`),
    scriptHash,
    dryRun: plan.dryRun,
    bounds,
  };
}
