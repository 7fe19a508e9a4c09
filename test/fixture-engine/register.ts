// First: the name, before the registries below load the stack-file schema (./name.ts).
import "./name";
import { registerEnginePart } from "../../components/config/engine-registry";
import { registerEngine } from "../../components/plan/engines";
import { tinyEngineConfig } from "./config";
import { tinyEngine } from "./engine";

/*
 * The fixture engine's registration, imported first by a test file: its name (./name.ts), its
 * config part and its Engine. These are all an engine adds outside its folder
 * (docs/development.md, "an engine"); no product file names it.
 */
registerEnginePart(tinyEngineConfig);
registerEngine(tinyEngine);
