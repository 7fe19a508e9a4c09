import type { Target } from "../target";
import type { SlurmSettings } from "../plan/deployment-plan";
import { slurmPlanOut } from "./plan-out";
import { gresGpus, jobRequests, requestTable } from "./requests";
import { coScheduledPlacements } from "./hetjob";
import { jobsQueryScript, parseFleetJobs } from "./jobs";
import { islandDir, jobName } from "./sbatch";
import { slurmSettings } from "./settings";
import { parseSchedulerReport, schedulerQueryScript } from "./scheduler";
import { renderTemplate } from "../templates";
import { heldQueryScript, parseHeldReport } from "./held-query";
import { gresRequest } from "./settings";
import { islandName } from "../plan/naming";

/** `gpu:<type>:<n>` in `slurm.gres` names the GPU type. */
function gresGpuType(t: SlurmSettings): { hint: string; from: string } | undefined {
  const m = t.gres ? /(?:^|,)gpu:([A-Za-z][A-Za-z0-9_]*):\d+/.exec(t.gres) : null;
  return m ? { hint: m[1], from: `slurm.gres = "${t.gres}"` } : undefined;
}

/** SLURM as the planner, `plan` and the fleet CLI see it (the Pulumi side is ./deploy). */
export const slurmTarget: Target = {
  kind: "slurm",
  title: "SLURM",
  plan: {
    // No InferencePool on SLURM: the name is a label and the EPP reads its endpoints from a file.
    poolRef: (_settings, { service }, island) => ({
      name: islandName("vllm-fleet", service, island),
      namespace: "slurm",
      discovery: "file",
    }),
    // slurm.exclusive holds whole nodes; unset, it does only when the engines fill them (settings.ts exclusiveNodes).
    wholeNodes: (settings, fills) =>
      settings.kind === "slurm" && (settings.exclusive ?? fills) ? { key: "slurm.exclusive" } : undefined,
    gpuTypeHint: (settings) => gresGpuType(slurmSettings({ settings })),
  },
  planOut: slurmPlanOut,
  requests: (stack) => requestTable(jobRequests(stack)),
  fleet: {
    shell: "login",
    scheduler: { query: schedulerQueryScript, parse: parseSchedulerReport },
    jobs: { script: jobsQueryScript, parse: parseFleetJobs },
    // The --gres each node asks for (the plan's GPUs, or every GPU of a node held whole), x its nodes.
    cost: {
      gpus: (plan, island) => island.nodes.length * (gresGpus(gresRequest(plan)) ?? 0),
      query: heldQueryScript,
      parse: parseHeldReport,
    },
    logsScript: (islands, lines, job) => renderTemplate("slurm/logs.sh.mustache", { islands, lines, job }),
    inClusterUrls: false,
    // A co-scheduled island is a component of the stack's one hetjob.
    island: (stack, plan, island) =>
      coScheduledPlacements(stack).get(`${plan.service ?? ""}/${island.index}`) ?? {
        jobName: jobName(plan, island.index),
        islandDir: islandDir(plan, island),
        nodeCount: island.nodes.length,
      },
  },
};
