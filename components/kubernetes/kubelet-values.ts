import { partsOf, type Part, type Value } from "../plan/values";
import { shellWord } from "../shell";
import { k8sRefs, type K8sContext, type NodeHost } from "./render-context";
import { k8sLiteral } from "./objects";

/**
 * The variable LeaderWorkerSet's pod webhook puts first in every container's env of a group's pods:
 * the leader pod's address through the group's headless Service, `<lws>-<group>.<subdomain>.<namespace>`
 * (kubernetes-sigs/lws pkg/utils/pod/pod_utils.go AddLWSVariables, called from
 * pkg/webhooks/pod_webhook.go). It names no cluster domain, so it resolves through the pod's DNS
 * search path whatever kubernetes.cluster_domain is.
 */
export const LWS_LEADER_ADDRESS = "LWS_LEADER_ADDRESS";

/**
 * A plan Value as a command/args/env string: literal parts escaped for kubelet expansion, the
 * pod's own address as `$(POD_IP)` (which kubelet expands from the POD_IP env var), in a
 * LeaderWorkerSet's pods the leader node's address as `$(LWS_LEADER_ADDRESS)` (`lwsLeader`: that
 * node), other references as DNS names and mount paths.
 */
export function k8sValue(ctx: K8sContext, island: number, v: Value, lwsLeader?: number, nodeHost?: NodeHost): string {
  const leader = lwsLeader === undefined ? undefined : { node: lwsLeader, address: `$(${LWS_LEADER_ADDRESS})` };
  const resolve = k8sRefs(ctx, island, "$(POD_IP)", leader, nodeHost);
  const kubeletRef = (p: Exclude<Part, string>) => p.ref === "self" || (p.ref === "node" && p.node === lwsLeader);
  return partsOf(v)
    .map((p) => (typeof p === "string" ? k8sLiteral(p) : kubeletRef(p) ? resolve(p) : k8sLiteral(resolve(p))))
    .join("");
}

export const k8sArgv = (ctx: K8sContext, island: number, argv: Value[], nodeHost?: NodeHost) =>
  argv.map((v) => k8sValue(ctx, island, v, undefined, nodeHost));

/**
 * The same references spelled for bash inside an engine script (`${POD_IP}` from the env; in a
 * LeaderWorkerSet's pods `${LWS_LEADER_ADDRESS}`, failing loudly if LWS did not inject it). Bash
 * expands them, not kubelet: the script is one kubelet literal (every `$` doubled), and a kubelet
 * `$(VAR)` left unexpanded would be a command substitution to bash.
 */
export function scriptWord(ctx: K8sContext, island: number, v: Value, lwsLeader?: number): string {
  const leader =
    lwsLeader === undefined
      ? undefined
      : { node: lwsLeader, address: `\${${LWS_LEADER_ADDRESS}:?set by the LeaderWorkerSet webhook}` };
  return shellWord(v, k8sRefs(ctx, island, "${POD_IP}", leader));
}

/** True when a Value is exactly the pod's own address (then the env var reads status.podIP). */
export const isSelf = (v: Value) =>
  typeof v !== "string" && v.parts.length === 1 && typeof v.parts[0] !== "string" && v.parts[0].ref === "self";
