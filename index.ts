import * as fs from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import { loadStackFile, overridesFromObject, TARGETS, type TargetKind } from "./components/config";
import { deployTargetOf } from "./components/fleet/deploy-targets";
import { InferenceDeployment } from "./components/fleet/inference-deployment";
import { stackEndpoints, plannedStackOutputs } from "./components/outputs";
import { buildStackPlan } from "./components/planner";
import { assertBuildFresh } from "./components/build-freshness";
import { PACKAGE_ROOT } from "./components/package-root";
import { NS, secretConfig, userStep } from "./components/pulumi-config";
import { missingStack, resolveStackFile } from "./components/stack-file";
import { allTargets, targetOf } from "./components/targets";

// The stack file is stacks/<pulumi stack>.toml unless `pulumi config set stackFile ...` names another
// (Pulumi.yaml declares it with an empty default, which means the same; a relative path is taken from
// this project's folder); `overrides` tweaks it per environment with the same dotted keys as `npm
// run plan -- --key value`. A mistake in either is reported as its message alone (userStep).
const config = new pulumi.Config();
const plan = userStep(() => {
  assertBuildFresh(PACKAGE_ROOT, __filename);
  const named = config.get("stackFile") || pulumi.getStack();
  const { file } = resolveStackFile(named, PACKAGE_ROOT);
  if (!fs.existsSync(file))
    throw new Error(`${missingStack(named, PACKAGE_ROOT)}\n(${NS}:stackFile names the stack file)`);
  const overrides = overridesFromObject(config.getObject<unknown>("overrides"), `${NS}:overrides`);
  // `target` names the backend of a stack file without a [slurm] or [kubernetes] table (a prime-rl config).
  const target = config.get("target") as TargetKind | undefined;
  if (target !== undefined && !TARGETS.includes(target))
    throw new Error(`${NS}:target must be ${TARGETS.join(" or ")}, not "${target}"`);
  let services = loadStackFile(file, overrides, { target });
  // `namespace` is shorthand for the kubernetes.namespace override: URLs are planned with it.
  const namespace = config.get("namespace");
  if (namespace !== undefined) {
    const { namespaceKey, title } = targetOf(services[0].target.kind);
    if (!namespaceKey) {
      const namespaced = allTargets()
        .filter((t) => t.namespaceKey)
        .map((t) => t.title);
      throw new Error(`${NS}:namespace applies to ${namespaced.join(" or ")} stacks; ${file} targets ${title}`);
    }
    services = loadStackFile(file, [...overrides, { path: namespaceKey, value: namespace }], { target });
  }
  // Job and object names carry the Pulumi stack, so two Pulumi stacks deploying one stack file never collide.
  return buildStackPlan(services, pulumi.getStack());
});

export const planned = plannedStackOutputs(plan);

// Credentials come only from Pulumi config secrets (a plain-text value is refused).
const apiKeySecret = userStep(() => secretConfig(config, "apiKey", "<key>"));
const secrets = { hfToken: userStep(() => secretConfig(config, "hfToken", "<token>")), apiKey: apiKeySecret };

const fleet = new InferenceDeployment(pulumi.getStack(), {
  plan,
  secrets,
  secretKey: (name) => `${NS}:${name}`,
  // SLURM: the login node; Kubernetes: the provider, from Pulumi config.
  connection: userStep(() => deployTargetOf(plan.services[0].target).connect(config, pulumi.getStack(), plan)),
});

/**
 * Per island: router URL and every engine's admin URL and role, in the planner's order. SLURM adds
 * job id and nodes (from the running job); Kubernetes adds namespace and pods (in-cluster DNS).
 */
export const islands = fleet.islands;

/**
 * The trainer contract: every island's router and engines, the whole stack's lists in island order,
 * and ready-made prime-rl / NexRL / OpenAI blocks. Read it with `pulumi stack output endpoints --json`
 * or from a trainer stack through a StackReference (components/trainer/fleet-reference.ts).
 */
export const endpoints = pulumi
  .all(fleet.services)
  .apply((islands) => stackEndpoints(plan, islands, apiKeySecret !== undefined));

/** The engines' API key, as a secret output (absent when none is configured). */
export const apiKey = apiKeySecret;
