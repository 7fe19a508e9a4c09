import type { IslandView, ProcessView } from "./fleet-view";
import { processesOf, processUrl } from "./fleet-view";
import { jobPhase, nodeLost, type JobReport } from "../slurm";
import type { ClusterIslandReport } from "../target";

/**
 * The states a person needs: vec-inf's five (without its UNAVAILABLE), and for a fleet that is kept
 * up, RESTARTING (a process the keeper is starting again) and DEGRADED (an island that serves while
 * some of its engines restart); IDLE-RELEASED: an island that ended itself after idle_release_after
 * without a request (docs/idle-release.md).
 */
export type Status =
  "PENDING" | "LAUNCHING" | "READY" | "FAILED" | "SHUTDOWN" | "RESTARTING" | "DEGRADED" | "IDLE-RELEASED";

/** One HTTP check of a process: /health and whether /v1/models lists the served model. */
export interface Probe {
  health: number | null;
  /** /v1/models' HTTP status: 401 when the engines demand an API key the probe did not have. */
  models: number | null;
  listsModel: boolean;
  error?: string;
  /** The weight version an engine reports (http.ts probeWeightVersions); null when it reports none. */
  weightVersion?: string | null;
}

export interface ProcessStatus {
  id: string;
  role: ProcessView["role"];
  url: string | null;
  status: Status;
  detail: string;
  /** Restarts of this process during the job or run so far (its group's: templates/host/keeper.sh.mustache). */
  restarts: number;
  /** The exit that caused its last restart: which process of its group, its status, when; null before any. */
  lastRestart: { cause: string; code: number; at: string } | null;
  /** The weight version it serves, where it reports one (engines only). */
  weightVersion: string | null;
}

export interface IslandStatus {
  island: number;
  status: Status;
  jobName: string | null;
  jobId: string | null;
  /** SLURM's own state, for people who know it; the status above is what to act on. */
  schedulerState: string | null;
  detail: string;
  nodes: string[];
  processes: ProcessStatus[];
}

/** READY needs the server, not a log line: /health answers 200 and /v1/models lists the model. */
function serving(p: ProcessView, probe: Probe | undefined): boolean {
  if (!probe) return false;
  // Envoy (llm-d) routes only the API, so the router is judged by /v1/models through it.
  return p.role === "router" ? probe.listsModel : probe.health === 200 && probe.listsModel;
}

function probeDetail(probe: Probe | undefined): string {
  if (!probe) return "not probed";
  if (probe.error) return `not answering (${probe.error})`;
  if (probe.health !== 200 && probe.health !== null) return `/health answers ${probe.health}`;
  return probe.listsModel ? "serving" : "/v1/models does not list the model yet";
}

/**
 * The island's status, scheduler first: a queued job is PENDING whatever answers; a running job is
 * LAUNCHING until every process serves, and FAILED as soon as one of its processes has exited; an
 * ended job is SHUTDOWN, or FAILED when SLURM or an exit marker says it failed. Without scheduler
 * access (Kubernetes, or an endpoints file alone) a process that does not answer is LAUNCHING.
 */
export function islandStatus(view: IslandView, job: JobReport | undefined, probes: Map<string, Probe>): IslandStatus {
  const processes = processesOf(view);
  const exitOf = (p: ProcessView) =>
    job?.exits.find((e) => e.name === p.id && (p.at === undefined || e.node === p.at.node));
  const phase = job ? jobPhase(job.state) : "running";
  const schedulerDetail = job
    ? [
        job.state,
        job.reason && `reason ${job.reason}`,
        job.exitCode && job.exitCode !== "0:0" && `exit ${job.exitCode}`,
      ]
        .filter(Boolean)
        .join(", ")
    : "";

  const restartsOf = (p: ProcessView) =>
    job?.restarts.find((e) => e.name === p.id && (p.at === undefined || e.node === p.at.node));
  // The island's weights: what most of its engines that never restarted serve (else most of all):
  // a restarted engine serving others is kept out of the router until an update reaches it
  // (host/processes.ts, fleet_follow_workers).
  const urlOf = (p: ProcessView) => processUrl(p, job?.addrs.length ? job.addrs : undefined) ?? null;
  const versionOf = (p: ProcessView) => {
    const url = urlOf(p);
    return (url ? probes.get(url)?.weightVersion : undefined) ?? null;
  };
  const mostServed = (engines: ProcessView[]) => {
    const counts = new Map<string, number>();
    for (const v of engines.map(versionOf)) if (v !== null) counts.set(v, (counts.get(v) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  };
  const engines = processes.filter((x) => x.role !== "router");
  const islandVersion = mostServed(engines.filter((p) => !restartsOf(p))) ?? mostServed(engines);
  const out = processes.map((p): ProcessStatus => {
    const url = urlOf(p);
    const exit = exitOf(p);
    const r = restartsOf(p);
    const lastRestart = r
      ? { cause: r.last.cause, code: r.last.code, at: new Date(r.last.at * 1000).toISOString() }
      : null;
    const weightVersion = p.role === "router" ? null : versionOf(p);
    const base = { id: p.id, role: p.role, url, restarts: r?.count ?? 0, lastRestart, weightVersion };
    const stale =
      weightVersion !== null && islandVersion !== undefined && weightVersion !== islandVersion
        ? `serves weight version ${weightVersion}, the island's other engines ${islandVersion}`
        : "";
    const restarted = lastRestart
      ? `restarted ${r!.count} time(s), last after ${lastRestart.cause} exited with status ${lastRestart.code} at ${lastRestart.at}`
      : "";
    // A process killed by scancel may leave a marker too; only an exit the user did not ask for is a failure.
    if (exit && job?.state !== "CANCELLED")
      return { ...base, status: "FAILED", detail: `exited with status ${exit.code}` };
    // A node whose slurmd is gone takes its processes with it, whatever they last answered.
    const node = p.at !== undefined ? job?.nodeStates[p.at.node] : undefined;
    if (node && nodeLost(node.state) && job?.state !== "CANCELLED" && phase !== "none")
      return { ...base, status: "FAILED", detail: `lost with node ${node.host} (SLURM: ${node.state})` };
    switch (phase) {
      case "queued":
        return { ...base, status: "PENDING", detail: job?.reason ? `waiting for ${job.reason}` : "queued" };
      case "none":
        return { ...base, status: "SHUTDOWN", detail: "no job" };
      case "ended":
        return { ...base, status: "SHUTDOWN", detail: `job ${job!.state}` };
      case "failed":
        return { ...base, status: "SHUTDOWN", detail: `stopped with the job (${job!.state})` };
      case "running": {
        const probe = url ? probes.get(url) : undefined;
        // Restarted with the base weights: out of the router until the trainer's next update reaches it.
        if (serving(p, probe) && restarted && stale)
          return {
            ...base,
            status: "RESTARTING",
            detail: `${restarted}; ${stale}: kept out of the router until an update reaches it`,
          };
        if (serving(p, probe))
          return { ...base, status: "READY", detail: ["serving", restarted, stale].filter(Boolean).join("; ") };
        const why = url ? probeDetail(probe) : "no address yet";
        // Restarted and not serving yet: the keeper is bringing it back (its back-off, then its start).
        return restarted
          ? { ...base, status: "RESTARTING", detail: `${restarted}; ${why}` }
          : { ...base, status: "LAUNCHING", detail: why };
      }
    }
  });

  const any = (s: Status) => out.some((p) => p.status === s);
  // Its own idle release ended it (the marker is the attempt's, so a job still running is not).
  const idleReleased = job?.idleReleased !== undefined && phase !== "running" && phase !== "queued";
  let status: Status;
  let detail: string;
  if (!idleReleased && (phase === "failed" || any("FAILED"))) {
    status = "FAILED";
    const failed = out.filter((p) => p.status === "FAILED").map((p) => `${p.id} ${p.detail}`);
    detail = [schedulerDetail, ...failed].filter(Boolean).join("; ");
  } else if (phase === "queued") {
    status = "PENDING";
    detail = schedulerDetail;
  } else if (idleReleased) {
    status = "IDLE-RELEASED";
    detail = idleReleasedDetail(job!.idleReleased!);
  } else if (phase === "ended" || phase === "none") {
    status = "SHUTDOWN";
    detail = phase === "none" ? (job?.jobId ? `job ${job.jobId} is gone (no record left)` : "no job") : schedulerDetail;
  } else if (out.every((p) => p.status === "READY")) {
    status = "READY";
    detail = `${out.length} of ${out.length} serving`;
  } else if (
    any("RESTARTING") &&
    out.every((p) => p.status === "READY" || p.status === "RESTARTING") &&
    out.some((p) => p.role !== "router" && p.status === "READY")
  ) {
    // Clients are served (the router and at least one engine) while the keeper restarts the rest.
    status = "DEGRADED";
    const restarting = out.filter((p) => p.status === "RESTARTING").map((p) => p.id);
    detail = `${out.filter((p) => p.status === "READY").length} of ${out.length} serving; restarting: ${restarting.join(", ")}`;
  } else {
    status = "LAUNCHING";
    detail = `${out.filter((p) => p.status === "READY").length} of ${out.length} serving`;
  }
  return {
    island: view.island,
    status,
    jobName: view.jobName ?? null,
    jobId: job?.jobId ?? view.jobId ?? null,
    schedulerState: job?.state ?? null,
    detail,
    nodes: job?.hosts ?? [],
    processes: out,
  };
}

const iso = (epochS: number) => new Date(epochS * 1000).toISOString();

/** When the idle release ended the island, and since when it had served no request. */
export const idleReleasedDetail = (r: { at: number; idleSince: number }, back = "pulumi up brings it back"): string =>
  `released itself at ${iso(r.at)}, idle since ${iso(r.idleSince)} (idle_release_after); ${back}`;

/**
 * An island's status as its cluster's API shows it (FleetSupport.cluster): each process takes its
 * workload's state, READY meaning its pods are Ready (the router's /readiness; an engine's /health,
 * and not the base model while its peers serve an update: kubernetes/weights-readiness.ts). An
 * engine the kubelet restarted that is not Ready is RESTARTING; the island is DEGRADED while its
 * router and at least one engine serve and the others restart.
 */
export function islandStatusFromCluster(view: IslandView, report: ClusterIslandReport): IslandStatus {
  const engines = processesOf(view).filter((p) => p.role !== "router");
  const counts = new Map<string, number>();
  for (const p of engines) {
    const v = report.processes[p.id]?.weightVersion;
    if (v !== undefined && v !== null) counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  const islandVersion = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  const processes = processesOf(view).map((p): ProcessStatus => {
    const seen = report.processes[p.role === "router" ? "router" : p.id];
    const restarts = seen?.restarts ?? 0;
    const last = seen?.lastExit ?? null;
    const weightVersion = seen?.weightVersion ?? null;
    const base = {
      id: p.id,
      role: p.role,
      url: p.url ?? null,
      restarts,
      lastRestart: last ? { cause: `${p.id} (${last.reason})`, code: last.code, at: last.at } : null,
      weightVersion,
    };
    const state = seen?.state ?? report.state;
    const detail = seen?.detail ?? report.detail;
    const stale =
      weightVersion !== null && islandVersion !== undefined && weightVersion !== islandVersion
        ? `; serves weight version ${weightVersion}, the island's other engines ${islandVersion}: not Ready until an update reaches it`
        : "";
    if (restarts > 0 && (state === "LAUNCHING" || state === "PENDING"))
      return {
        ...base,
        status: "RESTARTING",
        detail: `restarted ${restarts} time(s) by the kubelet${last ? `, last after exit ${last.code} (${last.reason}) at ${last.at}` : ""}; ${detail}${stale}`,
      };
    return { ...base, status: state, detail: `${detail}${stale}` };
  });
  if (report.idleReleased) {
    // Its activity monitor scaled its engine workloads to zero (kubernetes/activity-monitor.ts).
    const detail = idleReleasedDetail(report.idleReleased, "pulumi up or fleet wake brings it back");
    return {
      island: view.island,
      status: "IDLE-RELEASED",
      jobName: null,
      jobId: null,
      schedulerState: null,
      detail,
      nodes: report.nodes,
      processes: processes.map((p) => (p.role === "router" ? p : { ...p, status: "IDLE-RELEASED", detail })),
    };
  }
  const restarting = processes.filter((p) => p.status === "RESTARTING");
  const degraded =
    restarting.length > 0 &&
    processes.every((p) => p.status === "READY" || p.status === "RESTARTING") &&
    processes.some((p) => p.role !== "router" && p.status === "READY");
  return {
    island: view.island,
    status: degraded ? "DEGRADED" : report.state,
    jobName: null,
    jobId: null,
    schedulerState: null,
    detail: degraded
      ? `${processes.filter((p) => p.status === "READY").length} of ${processes.length} serving; restarting: ${restarting.map((p) => p.id).join(", ")}`
      : report.detail,
    nodes: report.nodes,
    processes,
  };
}

/** The fleet's status is its worst island's: FAILED over PENDING over LAUNCHING over SHUTDOWN over IDLE-RELEASED over DEGRADED over READY. */
export function fleetStatus(islands: IslandStatus[]): Status {
  for (const s of ["FAILED", "PENDING", "LAUNCHING", "SHUTDOWN", "IDLE-RELEASED", "DEGRADED"] as const)
    if (islands.some((i) => i.status === s)) return s;
  return "READY";
}
