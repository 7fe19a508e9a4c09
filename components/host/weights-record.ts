import type { DeploymentPlan } from "../plan/deployment-plan";
import { shq } from "../shell";

/*
 * The fleet's weights record in an island's folder (the Python client's weights_record.py writes
 * it after each Fleet.update_weights with a version; docs/restarts.md): what a restarted engine
 * loads before it serves. A delete sets it aside as weights.previous; the create that brings a gone
 * island back takes it again when it names the island's model and engine (host/revival.sh).
 */

/** The record beside the island's endpoints.json. */
export const weightsRecordPath = (islandDir: string) => `${islandDir.replace(/\/+$/, "")}/weights`;

/**
 * One island's entry in a create's revival step: its folder, and the model and engine its record
 * must name (as endpoints.json gives them to the client: island-result.ts), shell-quoted.
 */
export const weightsRecordView = (plan: Pick<DeploymentPlan, "model" | "engine">, islandDir: string) => ({
  dir: shq(islandDir),
  model: shq(plan.model),
  engine: shq(plan.engine),
});
