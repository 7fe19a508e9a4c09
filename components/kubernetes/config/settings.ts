import type { z } from "zod";
import type { kubernetesTable } from "./table";

/** `[kubernetes]` as the plan carries it, defaults in. */
export interface KubernetesSettings extends z.output<typeof kubernetesTable> {
  kind: "kubernetes";
}
