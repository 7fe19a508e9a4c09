import type { TargetSettings } from "./target-settings";

/**
 * The InferencePool the EPP serves, one per island. On SLURM it is only a label (the EPP reads its
 * endpoints from a file); on Kubernetes it is a real object that selects the engine pods.
 */
export interface PoolRef {
  name: string;
  namespace: string;
  discovery: "file" | "pool";
}

/**
 * What the planner needs to know about the target, answered by the target itself (its folder's
 * `Target.plan`), so the planner names no target.
 */
export interface PlanHints {
  /** The InferencePool the llm-d EPP of island `island` serves: a label with file discovery, or a real pool. */
  poolRef(settings: TargetSettings, owner: { stack: string; service?: string }, island: number): PoolRef;
  /**
   * Whether the target holds whole nodes for the fleet (idle GPUs stay allocated) when its nodes
   * keep GPUs the engines do not use (`fills`: every node's engines use all of them), and the key
   * that makes it hold them; undefined: it allocates exactly the GPUs the engines use.
   */
  wholeNodes(settings: TargetSettings, fills: boolean): { key: string } | undefined;
  /** The GPU type the target's own settings name, and how to cite it, when they name one. */
  gpuTypeHint(settings: TargetSettings): { hint: string; from: string } | undefined;
  /**
   * Every node of an island is the same host (the local target): the planner gives each node's
   * engines their own ports (node k's are the configured ones + k x SHARED_HOST_PORT_STRIDE).
   * @default false (each node its own host: every node's engines on the configured ports)
   */
  sharedHost?: boolean;
}
