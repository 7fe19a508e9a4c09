import type { z } from "zod";
import type { TargetConfigPart } from "../../config/target-part";
import { everyKey } from "../../config/schema/every-key";
import { KUBERNETES_AUTO_SETUP } from "./auto-setup";
import { KUBERNETES_RULES } from "./rules";
import type { KubernetesSettings } from "./settings";
import { kubernetesTable } from "./table";

export type { KubernetesSettings } from "./settings";
export { VLLM_IMAGE } from "./table";
export { createsNamespace } from "./namespace-owner";

/** Kubernetes' part of the config layer: the fleet as workloads, objects and Services in a cluster. */
export const kubernetesConfig: TargetConfigPart<"kubernetes", KubernetesSettings> = {
  kind: "kubernetes",
  table: kubernetesTable,
  settings: (value) => [
    {
      kind: "kubernetes",
      ...everyKey(kubernetesTable, (value ?? kubernetesTable.parse({})) as z.output<typeof kubernetesTable>),
    },
    [],
  ],
  rules: KUBERNETES_RULES,
  autoSetup: KUBERNETES_AUTO_SETUP,
  capabilities: { sharedHostNetwork: false, perRankProcesses: false },
};
