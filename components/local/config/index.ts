import type { z } from "zod";
import type { TargetConfigPart } from "../../config/target-part";
import { everyKey } from "../../config/schema/every-key";
import { localLauncherTable, localTable } from "./table";

/** `[local]`: the machine that runs Pulumi. */
export interface LocalSettings extends z.output<typeof localTable> {
  kind: "local";
}

/** The local target's part of the config layer: the fleet's processes on the machine that runs Pulumi. */
export const localConfig: TargetConfigPart<"local", LocalSettings> = {
  kind: "local",
  table: localTable,
  primeDescription:
    "Run the fleet on this machine (the default when the file names no target, as prime-rl runs a file without [slurm])",
  settings(value) {
    const local = everyKey(localTable, (value ?? localTable.parse({})) as z.output<typeof localTable>);
    const issues =
      local.device === "cpu" && local.gpus !== undefined
        ? [{ path: "local.gpus", message: 'names GPUs, but local.device = "cpu" runs the engines without any' }]
        : [];
    return [{ kind: "local", ...local, launcher: everyKey(localLauncherTable, local.launcher) }, issues];
  },
  rules: {},
  autoSetup: {},
  capabilities: { isDefault: true, sharedHostNetwork: true, perRankProcesses: false },
};
