import type { PlanOutFile } from "./backend";
import type { TargetKind } from "./config/target-registry";
import type { DeploymentPlan, IslandPlan } from "./plan/deployment-plan";
import type { IslandJobRef, JobReport } from "./host/job-report";
import type { IslandHeld } from "./host/held-time";
import type { PlanHints } from "./plan/target-hints";
import type { StackPlan } from "./plan/stack-plan";

/*
 * What a target (components/slurm, components/kubernetes) is to the pure side of the program: the
 * planner, `plan`, the outputs and the fleet CLI look a target up by kind in the registry
 * (components/targets.ts) and ask it, so none of them names a target. The Pulumi side of a target
 * is its `DeployTarget` (components/backend.ts), registered in components/fleet/deploy-targets.ts.
 */

/** One island's URLs when the target knows them before anything runs (names chosen, not allocated). */
export interface KnownIslandUrls {
  routerUrl: string | null;
  /** Every engine's URL (`.../v1`) in the planner's order. */
  adminUrls: string[];
}

/** The log files `fleet logs` shows for one island, each under its banner (shell-quoted). */
export interface LogsIsland {
  island: number;
  jobName: string;
  islandDir: string;
  /** Where the job's batch output is (the island's folder, or a co-scheduled group's). */
  jobDir: string;
  logs: { banner: string; file: string }[];
}

/** One job the target's scheduler runs for a fleet of this user (`fleet jobs`). */
export interface FleetJob {
  jobId: string;
  name: string;
  state: string;
  elapsed: string;
  limit: string;
  nodes: number;
  /** The nodes it runs on, or why it waits. */
  where: string;
}

/** Where a cluster's API is: a kubeconfig file or its contents, and a context; neither means $KUBECONFIG or ~/.kube/config. */
export interface ClusterAccess {
  kubeconfigPath?: string;
  kubeconfigData?: string;
  context?: string;
}

/** A state as the cluster's API shows it, in the fleet CLI's words (SHUTDOWN: none of the island's workloads exists). */
export type ClusterState = "PENDING" | "LAUNCHING" | "READY" | "FAILED" | "SHUTDOWN";

/** One island as a cluster's API shows it: its workloads' pods and events (Kubernetes). */
export interface ClusterIslandReport {
  island: number;
  state: ClusterState;
  /** What it waits for or why it failed, naming the object. */
  detail: string;
  /**
   * Each process (engine id, or `router`) with its workload's state and reason; an engine also with
   * its container's restarts and last exit (kubelet restarts in its pod) and the weight version it
   * serves, read through the API server's pod proxy (null where it did not answer one).
   */
  processes: Record<
    string,
    {
      state: ClusterState;
      detail: string;
      restarts?: number;
      lastExit?: { code: number; reason: string; at: string } | null;
      weightVersion?: string | null;
    }
  >;
  /** The nodes its pods run on. */
  nodes: string[];
  /** Its idle release (its activity monitor's mark): when it scaled its engines to zero, idle since when (epoch seconds). */
  idleReleased?: { at: number; idleSince: number };
}

/** A pod's answer read through a cluster's API, or why there is none. */
export type PodAnswer = { ok: true; text: string } | { ok: false; why: string };

/** One engine's /metrics as a cluster's API gave it (`url`: where it was read). */
export interface ClusterScrape {
  island: number;
  id: string;
  role: string;
  url: string;
  answer: PodAnswer;
}

/** One process's log tail as a cluster's API gave it (`source`: which pod and container). */
export interface ClusterLogTail {
  island: number;
  id: string;
  source: string;
  answer: PodAnswer;
}

/** What the fleet CLI (components/ops/) needs to know about a target. */
export interface FleetSupport {
  /**
   * Where the CLI runs the target's scripts (the scheduler query, logs, endpoints.json, the key
   * file): a shell on the login node (SLURM), this machine (local), or none (Kubernetes: URLs only).
   */
  shell: "login" | "here" | "none";
  /**
   * Each island's job or run as the target's scheduler sees it, asked through the shell in one round trip.
   * @default undefined (no scheduler: `fleet status` reads the URLs, or `cluster`; `fleet keep` refuses the target)
   */
  scheduler?: {
    query(islands: IslandJobRef[]): string;
    /** Throws when an island's state could not be observed: never a guess. */
    parse(stdout: string, islands: number[]): Map<number, JobReport>;
  };
  /**
   * `fleet cost`: the GPUs an island of the plan holds, and every job or run each island has had
   * with when and how long it held how many GPUs, asked through the shell in one round trip (parse
   * throws when the scheduler did not answer: never a guess).
   * @default undefined (`fleet cost` says it cannot account the target)
   */
  cost?: {
    gpus(plan: DeploymentPlan, island: IslandPlan): number;
    query(islands: IslandJobRef[]): string;
    parse(stdout: string, islands: IslandJobRef[]): IslandHeld[];
  };
  /**
   * `fleet logs`: the script that prints each island's log tails, and with `job` its batch output.
   * @default undefined (`fleet logs` reads them through `cluster`, or says it cannot)
   */
  logsScript?(islands: LogsIsland[], lines: number, job: boolean): string;
  /**
   * `fleet jobs`: every fleet's job of the user, asked through the shell in one round trip (throws when unobservable).
   * @default undefined (`fleet jobs` does not list the target)
   */
  jobs?: { script(): string; parse(stdout: string): FleetJob[] };
  /** Its URLs are in-cluster names: from outside the cluster none of them resolves. */
  inClusterUrls: boolean;
  /**
   * `fleet status` through the cluster's API instead of the URLs: each island's state from its
   * workloads, pods and events (throws when the API could not be read: never a guess).
   * @default undefined (no cluster API: the CLI reads the URLs and the `scheduler`)
   */
  cluster?: {
    observe(plan: DeploymentPlan, access: ClusterAccess): Promise<ClusterIslandReport[]>;
    /**
     * `fleet cost`: each island's jobs (pods) with when and how long they held how many GPUs, and its
     * activity ledger, read through the cluster's API (throws when it could not be read).
     * @default undefined (`fleet cost` cannot account the target through its API)
     */
    held?(plan: DeploymentPlan, access: ClusterAccess): Promise<IslandHeld[]>;
    /**
     * `fleet wake`: brings the islands its idle release scaled to zero back to their planned
     * replicas and clears their release marks; the islands it woke (throws when it could not).
     * @default undefined (`fleet wake` says `pulumi up` brings the target's released islands back)
     */
    wake?(plan: DeploymentPlan, access: ClusterAccess): Promise<{ island: number; detail: string }[]>;
    /** `fleet metrics`: each engine's Prometheus text, read through the cluster's API. */
    scrape(plan: DeploymentPlan, access: ClusterAccess): Promise<ClusterScrape[]>;
    /** `fleet logs`: the last lines of each selected engine's log, read through the cluster's API. */
    logs(
      plan: DeploymentPlan,
      access: ClusterAccess,
      select: (id: string) => boolean,
      lines: number,
    ): Promise<ClusterLogTail[]>;
  };
  /**
   * An island's placement the CLI can follow before the island serves: its job name and directory
   * (and, in a job of several islands, its component). `stack`: every service, for islands that
   * share one job (SLURM's co-scheduling).
   * @default undefined (nothing to follow before the island serves: its URLs only)
   */
  island?(
    stack: StackPlan,
    plan: DeploymentPlan,
    island: IslandPlan,
  ): { jobName: string; islandDir: string; nodeCount: number; component?: number; jobDir?: string };
}

/** What a target's scheduler is asked for, as the printed plan shows it: a title and a table. */
export interface RequestTable {
  title: string;
  head: string[];
  rows: string[][];
}

/** A target's word on a whole stack: lines of the printed plan, and fields of its JSON. */
export interface StackReport {
  text: string[];
  json: Record<string, unknown>;
}

/** Why a target cannot run a plan: the key (as the user's file spells it in the older layout) and the reason. */
export interface PlanRefusal {
  path: string;
  message: string;
}

export interface Target {
  /** Its kind, which is also the name of its stack-file table (`[slurm]`, `[kubernetes]`, `[local]`). */
  kind: TargetKind;
  /** How messages name the target. */
  title: string;
  /**
   * The stack-file key the Pulumi config shorthand `vllm-fleet:namespace` sets, when the target has namespaces.
   * @default undefined (no namespaces: the shorthand is not the target's)
   */
  namespaceKey?: string[];
  /** What the planner asks of the target. */
  plan: PlanHints;
  /**
   * Why the target cannot run a plan (e.g. more machines than it has), each naming its key;
   * checked before anything starts. `elsewhere`: the registered targets that run a fleet over
   * several machines, for the message (a function: it loads every backend, so call it only to refuse).
   * @default undefined (it runs every plan the config accepts)
   */
  refusals?(plan: DeploymentPlan, elsewhere: () => TargetKind[]): PlanRefusal[];
  /**
   * Why the target cannot run a stack's services together (each may plan alone), each naming its key.
   * @default undefined (it runs any services together that it runs alone)
   */
  stackRefusals?(plans: DeploymentPlan[], elsewhere: () => TargetKind[]): PlanRefusal[];
  /** What `plan --out` writes besides plan.json: everything `pulumi up` would submit, for people to read. */
  planOut(stack: StackPlan): PlanOutFile[];
  /**
   * The islands' URLs when known from the plan alone.
   * @default undefined (hosts are allocated at run time: URLs come from each island's result)
   */
  knownUrls?(plan: DeploymentPlan): KnownIslandUrls[];
  /**
   * The first lines of the printed plan: what the target's scheduler is asked for, job by job
   * (`plans`: every service of the stack).
   * @default undefined (no such table in the printed plan)
   */
  requests?(stack: StackPlan): RequestTable;
  /**
   * What the target says of the whole stack beside the plan, for `plan` to print after the totals and
   * to add to its JSON (Kubernetes: the namespace, and the Pod Security level its pods need and why).
   * @default undefined (nothing beside the plan)
   */
  stackReport?(stack: StackPlan): StackReport;
  /**
   * Extra lines of the printed plan saying where an island's engines run (e.g. Kubernetes workloads and pods).
   * @default undefined (the nodes' table says it)
   */
  placementText?(plan: DeploymentPlan, island: IslandPlan): string[];
  /** What the fleet CLI (status, logs, metrics, jobs, keep) needs of it. */
  fleet: FleetSupport;
}
