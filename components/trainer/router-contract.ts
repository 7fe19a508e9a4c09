import { ROUTER_RELEASES, ROUTER_SESSION_HEADER } from "../config/schema/router";
import type { RouterSettings } from "../plan/deployment-plan";
import type { IslandRouter } from "./contract";

/** sglang-router's manual policy routes by this header (docs/sglang.md); its other policies pin nothing. */
const SGLANG_ROUTING_KEY = "X-SMG-Routing-Key";

/**
 * Each island's router as the trainer contract states it (contract.ts islandRouterSchema), or null
 * without one. What a vllm-router build serves comes from vllm-router-releases.json.
 */
export function islandRouter(r: RouterSettings | null): IslandRouter | null {
  if (!r) return null;
  const common = { kind: r.kind, policy: r.policy, release: r.release };
  if (r.kind === "llm-d") return { ...common, finishSession: false, sessionHeader: null };
  if (r.kind === "sglang-router")
    return { ...common, finishSession: false, sessionHeader: r.policy === "manual" ? SGLANG_ROUTING_KEY : null };
  const build = ROUTER_RELEASES[r.release!];
  return {
    ...common,
    finishSession: build.finish_session,
    sessionHeader: build.session_policies.includes(r.policy!) ? ROUTER_SESSION_HEADER : null,
  };
}
