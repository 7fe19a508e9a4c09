import * as pulumi from "@pulumi/pulumi";
import { loadConfigFile } from "./components/config";
import { plannedOutputs } from "./components/outputs";
import { buildPlan } from "./components/plan/plan";
import { resolveStackFile } from "./components/stack-file";

// The stack file is stacks/<pulumi stack>.toml unless `pulumi config set stackFile ...` names another.
const config = new pulumi.Config();
const { file, stack } = resolveStackFile(config.get("stackFile") ?? pulumi.getStack());
const plan = buildPlan(loadConfigFile(file), stack);

export const planned = plannedOutputs(plan);
