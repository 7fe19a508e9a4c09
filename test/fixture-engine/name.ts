import { registerEngineName } from "../../components/config/schema/engine-names";

/** The fixture engine's name, registered before anything builds the stack-file schema (its `engine` enum). */
export const TINY = "tiny";
registerEngineName(TINY);
