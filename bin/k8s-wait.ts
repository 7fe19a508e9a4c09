#!/usr/bin/env node
/**
 * The readiness wait of one Kubernetes island under `pulumi up` (components/kubernetes/wait-ready.ts),
 * run by the island's local Command (components/kubernetes/readiness-command.ts), not by people.
 * The kubeconfig is the stack's: FLEET_KUBECONFIG_DATA (its contents, from a config secret) or
 * KUBECONFIG, as the provider reads it. Prints state changes; exits 0 once every workload is Ready,
 * 1 with the reason (naming the object) once a stuck condition outlasts --stuck-after or the
 * timeout passes.
 */
import { Option } from "commander";
import { ourCommand, runCommandAsync, UsageError, type CommandFactory } from "./cli";
import { clusterReader, waitReady, type WorkloadRef } from "../components/kubernetes";

const KINDS: WorkloadRef["kind"][] = ["StatefulSet", "Deployment", "LeaderWorkerSet"];

function workload(text: string, previous: WorkloadRef[] = []): WorkloadRef[] {
  const [kind, name] = text.split("/");
  if (!KINDS.includes(kind as WorkloadRef["kind"]) || !name)
    throw new UsageError(`--workload ${text}: expected <${KINDS.join("|")}>/<name>`);
  return [...previous, { kind: kind as WorkloadRef["kind"], name }];
}

export const k8sWaitCommand: CommandFactory = (io, exit) =>
  ourCommand("k8s-wait", io, false)
    .description("Waits until a Kubernetes island's workloads are Ready, or fails with the reason from the cluster.")
    .requiredOption("--namespace <ns>", "the fleet's namespace")
    .requiredOption("--workload <kind/name>", "a workload to wait for (repeatable)", workload)
    .option("--pod-selector <labels>", "label selector of the fleet's pods")
    .option("--context <name>", "kubeconfig context")
    .addOption(new Option("--timeout <s>", "give up after this many seconds").argParser(Number).default(3600))
    .addOption(
      new Option("--stuck-after <s>", "fail once a stuck condition lasts this long").argParser(Number).default(300),
    )
    .action(async (o) => {
      const data = process.env.FLEET_KUBECONFIG_DATA;
      const reader = await clusterReader({
        ...(data ? { kubeconfigData: data } : {}),
        ...(o.context ? { context: o.context } : {}),
      });
      io.out(`waiting for ${o.workload.length} workload(s) in namespace ${o.namespace} on ${reader.server}\n`);
      const r = await waitReady(reader, {
        namespace: o.namespace,
        workloads: o.workload,
        ...(o.podSelector ? { podSelector: o.podSelector } : {}),
        timeoutS: o.timeout,
        stuckAfterS: o.stuckAfter,
        log: (line) => io.out(line + "\n"),
      });
      if (r.ok) {
        io.out(`ready in ${r.seconds} s\n`);
        exit(0);
      } else {
        io.err(`FAILED after ${r.seconds} s: ${r.reason}\n`);
        exit(1);
      }
    });

if (require.main === module)
  void runCommandAsync(k8sWaitCommand, process.argv.slice(2)).then((code) => (process.exitCode = code));
