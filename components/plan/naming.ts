/*
 * How names and folders are built from (stack, service, island), in one place, so that a stack
 * serving several models (a later `[services.*]` table) changes naming here and nowhere else.
 * Today a stack is one unnamed service, and these give exactly the names it always had.
 */

/** An island's tag inside names: `i<k>`, or `<service>-i<k>` for a named service. */
export function islandTag(service: string | undefined, island: number): string {
  return service === undefined ? `i${island}` : `${service}-i${island}`;
}

/** A name of one island's things: `<base>-i<k>` (`<base>-<service>-i<k>` for a named service). */
export function islandName(base: string, service: string | undefined, island: number): string {
  return `${base}-${islandTag(service, island)}`;
}

/** An island's folder (plan --out, and the fleet's folder on a cluster): `island-<k>`, under `<service>/` when named. */
export function islandFolder(service: string | undefined, island: number): string {
  return service === undefined ? `island-${island}` : `${service}/island-${island}`;
}
