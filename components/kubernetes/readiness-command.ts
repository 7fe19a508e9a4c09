import { createHash } from "node:crypto";
import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import type { ClusterConfig } from "./provider";
import { PACKAGE_ROOT } from "../package-root";
import { readinessCommandLine, type WaitCommandArgs } from "./wait-command-line";

/*
 * `pulumi up`'s wait for an island's workloads, as a local Command running dist/bin/k8s-wait.js (the
 * readiness.ts rules), instead of pulumi-kubernetes' await, which cannot tell a pod that is loading
 * a model from one that can never start and waits out its whole timeout either way. The workloads
 * are created with pulumi.com/skipAwait (pulumi-kubernetes provider/pkg/await/await.go, newLegacyReadyCondition:
 * the annotation makes create and update return at once), and whatever must follow their readiness (the router, the
 * disruption budgets, the engines after the Mooncake store) depends on this Command.
 *
 * The Command runs on the machine running `pulumi up`, in the package folder (`dir`: the engine
 * starts providers in the program's folder, dist/ here, and pulumi-command v1.2.1
 * local/commandOutputs.go runs in the provider's working directory when `dir` is unset, which the
 * real engine showed; moving the project changes `dir`, and the next `up` waits once more), with the
 * provider's kubeconfig: a path in KUBECONFIG, or
 * the contents (a secret) in FLEET_KUBECONFIG_DATA, never on the command line, which the provider
 * prints when the command fails. It has no delete: destroying it leaves the cluster alone.
 */

export interface ReadinessArgs extends WaitCommandArgs {
  cluster: ClusterConfig;
  /** Anything else whose change rolls the pods (the Secret's digest): the wait runs again. */
  rollsWith?: pulumi.Input<string>;
  /** The island's release annotation (release-observe.ts): a release that `pulumi up` brings back waits again. */
  releasedAt?: pulumi.Input<string>;
}

/**
 * The Command that waits for `args.workloads`. It runs again whenever a workload's rendered spec or
 * `rollsWith` changes, as their pods then roll: both are in its environment (as digests), and a
 * changed input is an update, which pulumi-command v1.2.1 runs as the create command when there is
 * no update command (local/commandController.go Update). Not `triggers`, which would replace the
 * Command: a scale-up would then show replacements where nothing in the cluster is replaced.
 */
export function readinessCommand(
  name: string,
  args: ReadinessArgs,
  opts: pulumi.CustomResourceOptions,
): command.local.Command {
  const specs = createHash("sha256").update(JSON.stringify(args.workloads)).digest("hex");
  const environment: Record<string, pulumi.Input<string>> = {
    FLEET_WAIT_SPECS: specs,
    ...(args.rollsWith !== undefined ? { FLEET_WAIT_ROLLS_WITH: args.rollsWith } : {}),
    ...(args.releasedAt !== undefined ? { FLEET_WAIT_RELEASED_AT: args.releasedAt } : {}),
    ...(args.cluster.path !== undefined ? { KUBECONFIG: args.cluster.path } : {}),
    ...(args.cluster.data !== undefined ? { FLEET_KUBECONFIG_DATA: args.cluster.data } : {}),
  };
  return new command.local.Command(
    name,
    { create: readinessCommandLine(args, args.cluster.context), dir: PACKAGE_ROOT, environment },
    opts,
  );
}
