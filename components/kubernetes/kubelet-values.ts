import { partsOf, type Value } from "../plan/values";
import { shellWord } from "../shell";
import { k8sRefs, type K8sContext } from "./render-context";
import { k8sLiteral } from "./objects";

/**
 * A plan Value as a command/args/env string: literal parts escaped for kubelet expansion, the
 * pod's own address as `$(POD_IP)` (which kubelet expands from the POD_IP env var), other
 * references as DNS names and mount paths.
 */
export function k8sValue(ctx: K8sContext, island: number, v: Value): string {
  const resolve = k8sRefs(ctx, island, "$(POD_IP)");
  return partsOf(v)
    .map((p) => (typeof p === "string" ? k8sLiteral(p) : p.ref === "self" ? resolve(p) : k8sLiteral(resolve(p))))
    .join("");
}

export const k8sArgv = (ctx: K8sContext, island: number, argv: Value[]) => argv.map((v) => k8sValue(ctx, island, v));

/** The same references spelled for bash inside an engine script (`${POD_IP}` from the env). */
export function scriptWord(ctx: K8sContext, island: number, v: Value): string {
  return shellWord(v, k8sRefs(ctx, island, "${POD_IP}"));
}

/** True when a Value is exactly the pod's own address (then the env var reads status.podIP). */
export const isSelf = (v: Value) =>
  typeof v !== "string" && v.parts.length === 1 && typeof v.parts[0] !== "string" && v.parts[0].ref === "self";
