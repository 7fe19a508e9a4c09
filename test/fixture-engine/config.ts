import type { EngineConfigPart } from "../../components/config/engine-part";
import { fail } from "../../components/config/rule";
import { TINY } from "./name";

/*
 * The fixture engine's config part (test only): an engine that serves only single-node fleets, and
 * fills in its own default, as a real engine's part declares them (components/config/engine-part.ts).
 * It takes no table of extra flags.
 */
export const tinyEngineConfig: EngineConfigPart = {
  name: TINY,
  rules: {
    "the tiny engine serves one node": (cfg) =>
      cfg.deployment.type !== "single_node"
        ? fail(
            "deployment.type",
            `is "${cfg.deployment.type}", but engine = "${TINY}" serves single_node deployments only`,
            "engine",
          )
        : [],
  },
  autoSetup: {
    "the tiny engine caps its context": (cfg, { given }) => {
      if (!given("model.max_model_len")) cfg.model.max_model_len = 2048;
    },
  },
};
