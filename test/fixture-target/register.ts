import { registerTargetPart } from "../../components/config/target-registry";
import { registerTarget } from "../../components/targets";
import { recordedConfig } from "./config";
import { recordedTarget } from "./target";

/*
 * The fixture target's registration: imported first by a test file, before anything builds the
 * stack-file schema. Its two lines are all a target adds outside its folder (docs/development.md,
 * "a target"); no product file names it.
 */
registerTargetPart(recordedConfig);
registerTarget(recordedTarget);
