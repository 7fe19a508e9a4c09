import type { StackPlan } from "../plan/stack-plan";
import type { StackReport } from "../target";
import { renderK8sStack } from "./fleet-objects";
import { fleetNamespace } from "./fleet-namespace";
import { kubernetesSettings } from "./settings";

/**
 * What `plan` says of a Kubernetes stack as a whole: its namespace, whether the fleet creates it,
 * and the Pod Security level its pods need with the keys behind it. A namespace the fleet creates
 * is labelled with that level; any other must already admit it, which only its owner can see to.
 */
export function kubernetesStackReport(stack: StackPlan): StackReport {
  const rendered = renderK8sStack(stack, []);
  const settings = kubernetesSettings(stack.services[0]);
  const ns = fleetNamespace(settings, stack.stack);
  // Before issue 43 a named namespace was created by default: such a stack's state still holds it.
  const byDefault = settings.namespace !== undefined && settings.create_namespace === undefined;
  const { level, violations } = rendered.podSecurity;
  const text = [
    ns.created
      ? `namespace ${ns.name}: created by the fleet, deleted by pulumi destroy with everything in it`
      : `namespace ${ns.name}: not created by the fleet (it must exist; pulumi destroy leaves it${byDefault ? "; if an earlier pulumi up of this stack created it, set create_namespace = true to keep it, or pulumi up deletes it: docs/kubernetes.md" : ""})`,
    ns.created
      ? `pod security: ${level}, enforced on the namespace (pod-security.kubernetes.io/enforce: ${level})`
      : `pod security: ${level}: namespace ${ns.name} must admit it (pod-security.kubernetes.io/enforce: ${level}${level === "baseline" ? " or privileged" : ""}, or no enforce label under a cluster default that does)`,
    ...violations.map(
      (v) =>
        `  ${v.what}, beyond baseline: ${v.keys.length ? v.keys.join(", ") : "the fleet's own"} (${v.workloads.join(" ")})`,
    ),
  ];
  return {
    text,
    json: {
      namespace: { name: ns.name, created: ns.created },
      pod_security: { level, labelled: ns.created, violations },
    },
  };
}
