import type { EngineName } from "../../components/plan/deployment-plan";
import type { Engine } from "../../components/plan/engine";
import { vllmEngine } from "../../components/plan/engines/vllm/engine";
import { TINY } from "./name";

/*
 * The fixture engine (test only): a vLLM build under its own name, as the recipe says (reuse vLLM's
 * parts where they hold: its command line, manifest, environment and memory reserve), with routes
 * of its own for its admin calls and weight version, and its own version before any update.
 */
export const tinyEngine: Engine = {
  ...vllmEngine,
  name: TINY as EngineName,
  baseWeightVersion: "tiny-0",
  routes: { ...vllmEngine.routes, admin: "/tiny", weightVersion: "/tiny/weight_version" },
};
