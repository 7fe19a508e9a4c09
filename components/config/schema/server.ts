import { argText, port, table } from "./primitives";

/** `[server]`: where clients connect. */
export const serverTable = table({
  host: argText.optional().describe("Bind address of the client-facing server (default all interfaces)"),
  port: port.default(8000).describe("Client-facing port: the router, or the engine without one (default 8000)"),
});
