import type { z } from "zod";
import type { TargetConfigPart } from "../../config/target-part";
import { everyKey } from "../../config/schema/every-key";
import { launcherTable } from "../../config/schema/launchers";
import { primeFleetSlurmTable, serviceSlurmTable, slurmTable } from "./table";

/** `[slurm]` as the plan carries it: its output_dir is the config's (and the plan's) output_dir. */
export interface SlurmSettings extends Omit<z.output<typeof slurmTable>, "output_dir"> {
  kind: "slurm";
}

/** SLURM's part of the config layer: one sbatch job per island, submitted through the login node. */
export const slurmConfig: TargetConfigPart<"slurm", SlurmSettings> = {
  kind: "slurm",
  table: slurmTable,
  primeFleetTable: primeFleetSlurmTable,
  // The rest of prime-rl's [slurm] is for its own sbatch templates (project_dir, uv sync, ...), which vllm-fleet does not render.
  primeOwnKeys: ["job_name", "partition", "account", "time", "nodelist", "exclude"],
  primeFleetDescription:
    "vllm-fleet's SLURM settings prime-rl's [slurm] has no key for (it forbids extra keys), over what vllm-fleet reads from [slurm]; with it and no [kubernetes], the file targets SLURM",
  serviceTable: serviceSlurmTable,
  settings(value, { outputDir, user }) {
    const { output_dir, ...slurm } = everyKey(
      slurmTable,
      (value ?? slurmTable.parse({})) as z.output<typeof slurmTable>,
    );
    const issues =
      outputDir !== undefined && output_dir !== undefined && output_dir !== outputDir
        ? [
            {
              path: "slurm.output_dir",
              message: `contradicts ${user("output_dir")} = "${outputDir}"; set it in one place`,
            },
          ]
        : [];
    return [{ kind: "slurm", ...slurm, launcher: everyKey(launcherTable, slurm.launcher) }, issues];
  },
  rules: {},
  autoSetup: {},
  // slurm.co_schedule unset: one heterogeneous job for a stack of several services.
  forServices: (settings, services) =>
    settings.co_schedule !== undefined ? settings : { ...settings, co_schedule: services > 1 },
  capabilities: { sharedHostNetwork: true, perRankProcesses: true },
};
