import type { FleetJob } from "../target";
import { renderTemplate } from "../templates";

/** The comment every job vllm-fleet submits carries (`vllm-fleet:<script hash>`, island-job.ts and hetjob.ts). */
const OURS = "vllm-fleet:";

/** `fleet jobs` on SLURM: every job of the login user, as squeue lists it (templates/slurm/jobs-query.sh). */
export const jobsQueryScript = (): string => renderTemplate("slurm/jobs-query.sh.mustache", {});

/**
 * The fleets' jobs among squeue's records (`id|name|state|elapsed|limit|nodes|nodelist or reason|comment`):
 * those vllm-fleet submitted, by their comment. A line that is not such a record is a broken query,
 * reported with the line, never skipped.
 */
export function parseFleetJobs(stdout: string): FleetJob[] {
  const jobs: FleetJob[] = [];
  for (const line of stdout.split("\n")) {
    if (!line.trim()) continue;
    const f = line.split("|");
    if (f.length < 8 || !/^\d+(\+\d+|_\d+)?$/.test(f[0]))
      throw new Error(`squeue printed a line that is not a job record: ${line.slice(0, 200)}`);
    const comment = f.slice(7).join("|");
    if (!comment.startsWith(OURS)) continue;
    const [jobId, name, state, elapsed, limit, nodes, where] = f;
    jobs.push({ jobId, name, state, elapsed, limit, nodes: Number(nodes), where });
  }
  return jobs;
}
