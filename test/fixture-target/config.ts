import { z } from "zod";
import { fail } from "../../components/config/rule";
import { everyKey } from "../../components/config/schema/every-key";
import { count, filePath, table } from "../../components/config/schema/primitives";
import type { TargetConfigPart } from "../../components/config/target-part";
import { islandNodes } from "../../components/config/topology";

/*
 * The fixture target's config part (test only): a target that "runs" an island by recording each
 * engine's command line in a folder, with a state file per island that its status reads. Its table
 * `[recorded]`, its settings, one rule and its capabilities, as a real target's part declares them
 * (components/config/target-part.ts).
 */

export const recordedTable = table({
  record_dir: filePath.describe("Folder the islands' command lines and states are recorded in"),
  machines: count.default(8).describe("Machines the recorder has: an island needs one per node (default 8)"),
});

export interface RecordedSettings extends z.output<typeof recordedTable> {
  kind: "recorded";
}

export const recordedConfig: TargetConfigPart<"recorded", RecordedSettings> = {
  kind: "recorded",
  table: recordedTable,
  settings: (value) => [
    { kind: "recorded", ...everyKey(recordedTable, (value ?? {}) as z.output<typeof recordedTable>) },
    [],
  ],
  rules: {
    "an island fits the recorder's machines": (cfg, recorded) =>
      islandNodes(cfg) > recorded.machines
        ? fail(
            "recorded.machines",
            `is ${recorded.machines}, but one island needs ${islandNodes(cfg)} machines`,
            "deployment",
          )
        : [],
  },
  autoSetup: {
    "the recorder notes where it records": (cfg, recorded) => {
      cfg.notes.push(`the recorder writes every command line under ${recorded.record_dir}`);
    },
  },
  capabilities: { sharedHostNetwork: false, perRankProcesses: false },
};
