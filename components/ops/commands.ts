import { fleetEndpoints, type IslandUrls } from "../outputs";
import type { Role } from "../plan/deployment-plan";
import { engineNamed, sharedRoutes } from "../plan/engines";
import { shq } from "../shell";
import { parseIslandResult } from "../host/island-result";
import { queryJobs, type JobReport } from "../host/job-report";
import { renderTemplate } from "../templates";
import { targetOf } from "../targets";
import type { FleetEndpoints } from "../trainer/contract";
import { processesOf, processUrl, type FleetView, type IslandView } from "./fleet-view";
import { apiKeyBesideJob, envApiKey, refusedProbes, type ApiKey } from "./api-key";
import { failureText, getText, probeAll, probeWeightVersions } from "./http";
import type { Probe } from "./status";
import { engineMetrics, parseScrape, totalMetrics, type EngineMetrics, type Scrape } from "./metrics";
import type { ClusterScrape } from "../target";
import { runChecked, type Shell } from "./remote";
import { fleetStatus, islandStatus, islandStatusFromCluster, type IslandStatus, type Status } from "./status";
import type { ClusterAccess } from "../target";
import type { DeploymentPlan } from "../plan/deployment-plan";
import { replaceHint, type ReplaceHint } from "./replace-hint";

/**
 * Asks the target's scheduler (SLURM's squeue, local's run records) about every island in one
 * round trip; targets without one (Kubernetes) and endpoints-only views skip it.
 */
export async function querySchedulers(
  view: FleetView,
  shell: Shell | undefined,
): Promise<Map<number, JobReport> | undefined> {
  const scheduler = targetOf(view.target).fleet.scheduler;
  if (!shell || !scheduler || !view.islands.some((i) => i.jobName)) return undefined;
  return queryJobs(shell, scheduler, view.islands);
}

const addrsOf = (jobs: Map<number, JobReport> | undefined, island: IslandView) => {
  const a = jobs?.get(island.island)?.addrs;
  return a && a.length ? a : undefined;
};

export interface FleetStatusReport {
  status: Status;
  model: string;
  target: FleetView["target"];
  islands: IslandStatus[];
  /** SLURM islands whose job was seen gone, and the `pulumi up --replace` that starts new ones (replace-hint.ts). */
  replace?: ReplaceHint;
}

/** A fleet whose target's API can be asked (Kubernetes): the plan says what to read there. */
export interface ClusterSource {
  plan: DeploymentPlan;
  access: ClusterAccess;
}

/**
 * Scheduler first, then every process's /health and /v1/models, all probed at once; or, for a
 * target whose cluster API answers for it (Kubernetes, from a stack), that API.
 */
export async function statusCommand(
  view: FleetView,
  shell: Shell | undefined,
  cluster?: ClusterSource,
): Promise<FleetStatusReport> {
  const observe = targetOf(view.target).fleet.cluster?.observe;
  if (observe && cluster) {
    const reports = await observe(cluster.plan, cluster.access);
    const islands = view.islands.map((i) => {
      const r = reports.find((x) => x.island === i.island);
      if (!r) throw new Error(`internal error: the cluster's report has no island ${i.island}`);
      return islandStatusFromCluster(i, r);
    });
    return { status: fleetStatus(islands), model: view.model, target: view.target, islands };
  }
  const jobs = await querySchedulers(view, shell);
  const urls = view.islands.flatMap((i) => {
    const job = jobs?.get(i.island);
    if (job && job.state !== "RUNNING") return []; // nothing to probe until the job runs
    return processesOf(i)
      .map((p) => processUrl(p, addrsOf(jobs, i)))
      .filter((u): u is string => !!u);
  });
  let key = envApiKey();
  let probes = await probeAll(urls, view.model, key?.value);
  // A fleet with an API key answers /v1/models with 401 to a probe without it: find the key and ask again.
  if (!key && refusedProbes(probes).length) {
    key = await apiKeyBesideJob(view, shell);
    if (key) probes = await probeAll(urls, view.model, key.value);
  }
  const engineUrls = view.islands.flatMap((i) =>
    i.engines.map((p) => processUrl(p, addrsOf(jobs, i))).filter((u): u is string => !!u),
  );
  await probeWeightVersions(probes, engineUrls, engineNamed(view.engine).routes.weightVersion, key?.value);
  unresolvableHere(view, probes);
  refusedHere(probes, key);
  const islands = view.islands.map((i) => islandStatus(i, jobs?.get(i.island), probes));
  const replace = replaceHint(view, jobs);
  return {
    status: fleetStatus(islands),
    model: view.model,
    target: view.target,
    islands,
    ...(replace ? { replace } : {}),
  };
}

/** Name-resolution failures: the host name itself is unknown here, so nothing about the process was seen. */
const DNS_FAILURES = new Set(["ENOTFOUND", "EAI_AGAIN"]);

/**
 * A Kubernetes fleet's URLs are in-cluster DNS names (<service>.<namespace>.svc...). Probed from a
 * machine outside the cluster none of them resolves, and "LAUNCHING, 0 serving" would be a state
 * nobody observed: say where the command can see the fleet instead.
 */
export function unresolvableHere(view: FleetView, probes: Map<string, Probe>): void {
  if (!targetOf(view.target).fleet.inClusterUrls || probes.size === 0) return;
  if (![...probes.values()].every((p) => p.error !== undefined && DNS_FAILURES.has(p.error))) return;
  const host = new URL([...probes.keys()][0]).hostname;
  // <service>.<namespace>.svc... or, for a pod behind a headless Service, <pod>.<service>.<namespace>.svc...
  const labels = host.split(".");
  const namespace = labels[labels.indexOf("svc") - 1] ?? "<namespace>";
  throw new Error(
    `none of the fleet's in-cluster names resolves from here (${host}: ${[...probes.values()][0].error}), so no state was observed. ` +
      `Run fleet status where they resolve (in a pod of the cluster, e.g. kubectl run -it --rm fleet-status -n ${namespace} --image=node:20 -- bash), ` +
      `name the stack instead of --endpoints (status then reads the cluster's API with the stack's kubeconfig), ` +
      `or read the pods' state with kubectl get pods,leaderworkersets -n ${namespace}.`,
  );
}

/**
 * Engines that refuse the probe's key were seen up (their /health answers) but not seen serving: a
 * LAUNCHING there would be a state nobody observed. Say what refused and how to give the key.
 */
export function refusedHere(probes: Map<string, Probe>, key: ApiKey | undefined): void {
  const refused = refusedProbes(probes);
  if (!refused.length) return;
  const what = `${refused.length} of ${probes.size} endpoint(s) refused GET /v1/models with ${probes.get(refused[0])!.models} (${refused[0]}${refused.length > 1 ? ", ..." : ""})`;
  throw new Error(
    key
      ? `${what} with the API key from ${key.from}: the fleet runs with another key, so whether it serves was not observed. Export the fleet's key as VLLM_API_KEY (pulumi stack output apiKey --show-secrets).`
      : `${what}: the fleet demands an API key, so whether it serves was not observed. Export it as VLLM_API_KEY=$(pulumi stack output apiKey --show-secrets)` +
          `, or give fleet status a login (SLURM), from which it reads the key file beside the job.`,
  );
}

export interface EngineTarget {
  island: number;
  id: string;
  role: string;
  url: string;
}

/** Every engine with an address now (a SLURM job must be running for its engines to have one). */
export async function engineTargets(view: FleetView, shell: Shell | undefined): Promise<EngineTarget[]> {
  const jobs = await querySchedulers(view, shell);
  return view.islands.flatMap((i) =>
    i.engines.flatMap((e) => {
      const url = processUrl(e, addrsOf(jobs, i));
      return url ? [{ island: i.island, id: e.id, role: e.role, url }] : [];
    }),
  );
}

export interface MetricsRow extends EngineMetrics {
  island: number;
  id: string;
  role: string;
  url: string;
  error?: string;
}

/**
 * A target whose cluster's API reads its pods (Kubernetes): every engine's /metrics through it, as
 * `engineTargets` and `scrapeAll` give them for the others. Undefined for the other targets.
 */
export async function scrapeThroughCluster(
  view: FleetView,
  cluster: ClusterSource | undefined,
): Promise<{ engines: EngineTarget[]; scrape: () => Promise<(Scrape | string)[]> } | undefined> {
  const scrape = targetOf(view.target).fleet.cluster?.scrape;
  if (!scrape || !cluster) return undefined;
  const first = await scrape(cluster.plan, cluster.access);
  const asScrape = (all: ClusterScrape[]) =>
    all.map((c) => (c.answer.ok ? parseScrape(c.answer.text, Date.now()) : c.answer.why));
  let pending: (Scrape | string)[] | undefined = asScrape(first);
  return {
    engines: first.map(({ island, id, role, url }) => ({ island, id, role, url })),
    // The first call hands back the scrape read above; each later one reads again.
    scrape: async () => {
      const now = pending ?? asScrape(await scrape(cluster.plan, cluster.access));
      pending = undefined;
      return now;
    },
  };
}

/**
 * `fleet logs` through a cluster's API (Kubernetes): each selected engine's tail under a banner
 * naming its pod and container; `failed` when any could not be read (its reason is printed instead).
 */
export async function logsThroughCluster(
  view: FleetView,
  cluster: ClusterSource,
  select: (id: string) => boolean,
  lines: number,
): Promise<{ text: string; failed: boolean }> {
  const logs = targetOf(view.target).fleet.cluster?.logs;
  if (!logs) throw new Error(`fleet logs cannot read a ${targetOf(view.target).title} fleet's logs`);
  const tails = await logs(cluster.plan, cluster.access, select, lines);
  const text = tails
    .map((t) => {
      const banner = `==> island ${t.island}: ${t.id} (${t.source}) <==`;
      return t.answer.ok ? `${banner}\n${t.answer.text}` : `${banner}\ncould not be read: ${t.answer.why}\n`;
    })
    .join("\n");
  return { text, failed: tails.some((t) => !t.answer.ok) };
}

/** Scrapes every engine's /metrics at once; an engine that does not answer gets a row that says why. */
export async function scrapeAll(engines: EngineTarget[]): Promise<(Scrape | string)[]> {
  return Promise.all(
    engines.map(async (e) => {
      try {
        const res = await getText(`${new URL(e.url).origin}${sharedRoutes().metrics}`);
        return res.status === 200 ? parseScrape(res.body, Date.now()) : `/metrics answered ${res.status}`;
      } catch (err) {
        return failureText(err);
      }
    }),
  );
}

const EMPTY: EngineMetrics = {
  running: 0,
  waiting: 0,
  kvUsage: null,
  promptTps: null,
  generationTps: null,
  requestsPerS: null,
  prefixHitRate: null,
  windowS: null,
};

/** Rows from the scrape now and the one before (same engine order). */
export function metricsRows(
  engines: EngineTarget[],
  now: (Scrape | string)[],
  before?: (Scrape | string)[],
): { rows: MetricsRow[]; total: EngineMetrics } {
  const rows = engines.map((e, k): MetricsRow => {
    const s = now[k];
    const b = before?.[k];
    if (typeof s === "string") return { ...e, ...EMPTY, error: s };
    return { ...e, ...engineMetrics(s, typeof b === "string" ? undefined : b) };
  });
  return { rows, total: totalMetrics(rows.filter((r) => !r.error)) };
}

/** `tail` of each selected process's log in the job's latest attempt, plus the batch output with `job` (the target's script). */
export function logsScript(view: FleetView, select: (id: string) => boolean, lines: number, job: boolean): string {
  const script = targetOf(view.target).fleet.logsScript;
  if (!script) throw new Error(`fleet logs cannot read a ${targetOf(view.target).title} fleet's logs`);
  const islands = view.islands.flatMap((i) => {
    if (!i.jobName || !i.islandDir) return [];
    const logs = processesOf(i).flatMap((p) => {
      if (!select(p.id) || !p.at) return [];
      const file = `${i.islandDir}/logs/latest/node_${p.at.node}/${p.id}.log`;
      return [{ banner: shq(`==> island ${i.island}: ${p.id} (${file}) <==`), file: shq(file) }];
    });
    return [
      {
        island: i.island,
        jobName: shq(i.jobName),
        islandDir: shq(i.islandDir),
        jobDir: shq(i.jobDir ?? i.islandDir),
        logs,
      },
    ];
  });
  return script(islands, lines, job);
}

/** The endpoints each island's job wrote (endpoints.json appears only once every endpoint serves; slurm/endpoints-read.sh). */
export function endpointsScript(view: FleetView): string {
  const islands = view.islands.flatMap((i) =>
    i.islandDir ? [{ island: i.island, file: shq(`${i.islandDir}/endpoints.json`) }] : [],
  );
  return renderTemplate("host/endpoints-read.sh.mustache", { islands });
}

/**
 * The trainer contract as the fleet reports it now. SLURM: each island's endpoints.json (written
 * once every endpoint serves), so an island not yet READY is missing and said so. Otherwise the
 * URLs the view already has.
 */
export async function endpointsCommand(
  view: FleetView,
  shell: Shell | undefined,
): Promise<{ endpoints: FleetEndpoints; missing: number[] }> {
  const missing: number[] = [];
  let islands: IslandUrls[];
  const planned = view.islands.every((i) => i.islandDir);
  const { shell: where } = targetOf(view.target).fleet;
  // A planned SLURM fleet has no host names until its job runs: only endpoints.json says where it is.
  if (where === "login" && planned && !shell)
    throw new Error(
      "the endpoints of a SLURM fleet are in each island's endpoints.json on the cluster, and nothing says how to read it: " +
        "pass --login user@host[:port] (or --local on the login node), set vllm-fleet:login in Pulumi.<stack>.yaml, or pass --endpoints <file>",
    );
  // Where the target's shell reaches them, each island's endpoints.json: written once it serves.
  if (where !== "none" && shell && planned) {
    const stdout = await runChecked(shell, endpointsScript(view), "reading endpoints.json");
    const found = new Map<number, IslandUrls>();
    for (const line of stdout.split("\n")) {
      const [kind, k, json] = line.split("\t");
      if (kind !== "island" || !json?.trim()) continue;
      const r = parseIslandResult(json);
      if (!r.dryRun)
        found.set(Number(k), { island: r.island, routerUrl: r.routerUrl, adminUrls: r.adminUrls, roles: r.roles });
    }
    islands = view.islands.flatMap((i) =>
      found.has(i.island) ? [found.get(i.island)!] : (missing.push(i.island), []),
    );
  } else {
    islands = view.islands.map((i) => ({
      island: i.island,
      routerUrl: i.router?.url ?? null,
      adminUrls: i.engines.map((e) => e.url).filter((u): u is string => !!u),
      roles: i.engines.filter((e) => e.url).map((e) => e.role as Role),
    }));
  }
  return { endpoints: fleetEndpoints(view, islands, process.env.VLLM_API_KEY !== undefined), missing };
}
