import type { ConfigIssue } from "./issues";
import type { UserPaths } from "./paths";

/*
 * prime-rl's top-level [deployment] of an RL or SFT file, folded into the inference island vllm-fleet
 * deploys (normalise-prime.ts primeToCanonicalInput): how many nodes, replicas and GPUs it means.
 */

type Raw = Record<string, any>;

const defined = (o: Raw): Raw => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/**
 * An SFT file's top-level [deployment] (configs/sft.py; entrypoints/sft.py). single_node: inference
 * takes num_infer_gpus (num_eval_gpus) of the trainer's node, as an RL single-node run. multi_node:
 * the online evals get a SLURM job of their own, num_infer_nodes (num_eval_nodes) nodes, each
 * filled with gpus_per_node / tp ranks behind one router (templates/multi_node_sft_eval.sbatch.j2);
 * [inference.deployment] is not used there. [inference] without [eval] is refused, as prime-rl does.
 */
export function foldSft(file: Raw, inf: Raw, inner: Raw | undefined, at: (p: string) => string) {
  const d = (file.deployment ?? {}) as Raw;
  const issues: ConfigIssue[] = [];
  const ignored: string[] = [];
  if (file.eval === undefined)
    issues.push({
      path: "inference",
      message: "is only used for online evals in an SFT file: add an [eval] table or remove [inference]",
    });
  const either = (a: string, b: string) => {
    if (d[a] !== undefined && d[b] !== undefined)
      issues.push({ path: `deployment.${b}`, message: `is another name for deployment.${a}: set one of them` });
    return (d[a] ?? d[b]) as number | undefined;
  };
  if (d.type !== "multi_node") {
    const rlDeployment = defined({
      type: "single_node",
      num_train_gpus: d.num_train_gpus ?? 1,
      num_infer_gpus: either("num_infer_gpus", "num_eval_gpus") ?? 1,
      gpus_per_node: d.gpus_per_node,
    });
    return { rlDeployment, deployment: inner, issues, ignored };
  }
  for (const key of ["num_train_nodes", "nodes_per_fsdp_group", "num_train_gpus", "num_infer_gpus"])
    if (d[key] !== undefined) ignored.push(`deployment.${key}`);
  if (inf.deployment !== undefined) ignored.push(at("deployment"));
  const n = either("num_infer_nodes", "num_eval_nodes") ?? 0;
  if (n < 1)
    issues.push({
      path: "deployment.num_infer_nodes",
      message: `is ${n}: online evals on a multi_node SFT deployment need num_infer_nodes >= 1 (their inference nodes)`,
    });
  const rlDeployment = defined({ type: "multi_node", gpus_per_node: d.gpus_per_node });
  return { rlDeployment, deployment: { type: "multi_node", num_nodes: Math.max(n, 1) }, issues, ignored };
}

/** Nodes of one disaggregated island as prime-rl derives them (inference.py num_nodes), with its defaults. */
function pdNodes(d: Raw): number {
  return (
    (d.num_prefill_nodes ?? 1) * (d.num_prefill_replicas ?? 1) +
    (d.num_decode_nodes ?? 1) * (d.num_decode_replicas ?? 1)
  );
}

/**
 * An RL multi_node run (rl.py auto_setup_infer_nodes, templates/multi_node_rl.sbatch.j2):
 * num_infer_nodes per replica (inferred from [inference.deployment]; checked against it only for
 * multi_node and disaggregated), num_infer_replicas copies of it, and one global router on the first
 * inference node in front of every replica. That is one island of num_infer_nodes x
 * num_infer_replicas nodes, except expert-parallel replicas, which one island cannot repeat: they
 * become islands (one router each).
 */
export function foldRlMultiNode(
  d: Raw,
  inner: Raw | undefined,
  ep: boolean,
  routerType: string | undefined,
  at: (p: string) => string,
  paths: UserPaths,
) {
  const issues: ConfigIssue[] = [];
  const notes: string[] = [];
  let deployment = inner;
  const type = (inner?.type ?? "single_node") as string;
  const n = d.num_infer_nodes as number | undefined;
  const replicas = (d.num_infer_replicas ?? 1) as number;
  const innerNodes =
    type === "multi_node" ? ((inner?.num_nodes ?? 2) as number) : type === "disaggregated" ? pdNodes(inner!) : 1;
  if (n === 0) {
    issues.push({
      path: "deployment.num_infer_nodes",
      message:
        "Cannot configure inference with num_infer_nodes = 0 (0 means no inference): set num_infer_nodes > 0 or remove the inference config",
    });
    return { deployment, islands: undefined, issues, notes };
  }
  if (n !== undefined && type === "multi_node" && n !== innerNodes) {
    issues.push({
      path: "deployment.num_infer_nodes",
      message: `(${n}) must equal ${at("deployment.num_nodes")} (${innerNodes}) for multi-node inference`,
    });
  } else if (n !== undefined && type === "disaggregated" && n !== innerNodes) {
    issues.push({
      path: "deployment.num_infer_nodes",
      message: `(${n}) must equal the derived disaggregated inference nodes per replica (${innerNodes})`,
    });
  }
  if (type === "single_node" && routerType === "llm-d" && n !== undefined) {
    issues.push({
      path: at("router.type"),
      message:
        "llm-d fronts multi_node and disaggregated inference deployments only (prime-rl refuses it with a single_node inference deployment); use vllm-router",
    });
  }
  const perReplica = type === "single_node" ? (n ?? 1) : innerNodes;
  if (type === "single_node" && perReplica > 1) {
    paths.record("deployment.num_nodes", "deployment.num_infer_nodes");
    paths.record("deployment.type", "deployment.num_infer_nodes");
    notes.push(
      `deployment.num_infer_nodes = ${perReplica} with a single_node ${at("deployment")}: ${perReplica} inference nodes per replica behind one router`,
    );
  }
  if (type === "disaggregated") {
    if (replicas > 1) {
      deployment = {
        ...inner,
        num_prefill_replicas: (inner!.num_prefill_replicas ?? 1) * replicas,
        num_decode_replicas: (inner!.num_decode_replicas ?? 1) * replicas,
      };
      notes.push(
        `deployment.num_infer_replicas = ${replicas}: ${replicas} copies of the prefill/decode island behind one router`,
      );
    }
    return { deployment, islands: undefined, issues, notes };
  }
  if (ep && replicas > 1) {
    if (perReplica > 1) deployment = { ...inner, type: "multi_node", num_nodes: perReplica };
    notes.push(
      `deployment.num_infer_replicas = ${replicas} expert-parallel replicas: one island (and router) each, where prime-rl puts one router in front of all of them`,
    );
    return { deployment, islands: replicas, issues, notes };
  }
  const total = perReplica * replicas;
  if (total > 1) {
    deployment = { ...inner, type: "multi_node", num_nodes: total };
    if (replicas > 1)
      notes.push(`deployment.num_infer_replicas = ${replicas}: ${total} inference nodes behind one router`);
  }
  return { deployment, islands: undefined, issues, notes };
}
