import * as pulumi from "@pulumi/pulumi";
import { loadConfigFile, overridesFromObject } from "./components/config";
import { InferenceDeployment } from "./components/fleet/inference-deployment";
import { plannedOutputs } from "./components/outputs";
import { buildPlan } from "./components/plan/plan";
import { loginConnection, NS } from "./components/slurm/login";
import { resolveStackFile } from "./components/stack-file";

// The stack file is stacks/<pulumi stack>.toml unless `pulumi config set stackFile ...` names another;
// `overrides` tweaks it per environment with the same dotted keys as `npm run plan -- --key value`.
const config = new pulumi.Config();
const { file } = resolveStackFile(config.get("stackFile") ?? pulumi.getStack());
const overrides = overridesFromObject(config.getObject<unknown>("overrides"), `${NS}:overrides`);
// Job names carry the Pulumi stack, so two Pulumi stacks deploying one stack file never adopt each other's jobs.
const plan = buildPlan(loadConfigFile(file, overrides), pulumi.getStack());

export const planned = plannedOutputs(plan);

const fleet = plan.target === "slurm" ? new InferenceDeployment(pulumi.getStack(), { plan, connection: loginConnection(config) }) : undefined;
if (!fleet) pulumi.log.warn("Kubernetes stacks are planned but not deployed yet: only `planned` is exported");

/** Per island: job id, nodes, router URL, every engine's admin URL and role, from the running job. */
export const islands = fleet?.islands;
