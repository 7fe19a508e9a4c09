/**
 * The fleet's API key, for probes of /v1/models (vLLM's --api-key guards /v1 only, so /health and
 * /metrics answer without it). Found in this order: VLLM_API_KEY in the caller's environment, then
 * on SLURM the 0600 key file the island's secrets command wrote beside the job (read over the same
 * login as the scheduler query, kept in memory, never printed).
 */
import { SECRETS } from "../credentials";
import { shq } from "../shell";
import { targetOf } from "../targets";
import type { FleetView } from "./fleet-view";
import type { Shell } from "./remote";
import type { Probe } from "./status";

export interface ApiKey {
  value: string;
  /** Where it came from, for messages (never the value). */
  from: string;
}

export const envApiKey = (): ApiKey | undefined =>
  process.env.VLLM_API_KEY ? { value: process.env.VLLM_API_KEY, from: "VLLM_API_KEY" } : undefined;

/** The key file of the first island that has one (every island of a fleet gets the same key). */
export async function apiKeyBesideJob(view: FleetView, shell: Shell | undefined): Promise<ApiKey | undefined> {
  if (!shell || targetOf(view.target).fleet.shell === "none") return undefined;
  const files = view.islands.flatMap((i) => (i.islandDir ? [`${i.islandDir}/secrets/${SECRETS.apiKey.file}`] : []));
  if (!files.length) return undefined;
  // The first readable file, on stdout only; nothing about a missing one (the caller says what it tried).
  const script = `for f in ${files.map(shq).join(" ")}; do if [ -r "$f" ]; then cat -- "$f"; echo "$f" >&2; exit 0; fi; done; exit 3\n`;
  const run = await shell.run(script);
  const value = run.stdout.replace(/\r?\n$/, "");
  if (run.code !== 0 || !value) return undefined;
  return { value, from: `${run.stderr.trim()} on ${shell.describe}` };
}

/** Probes that reached an engine whose /v1/models refused them (401 or 403): the key is missing or wrong. */
export const refusedProbes = (probes: Map<string, Probe>): string[] =>
  [...probes].filter(([, p]) => p.models === 401 || p.models === 403).map(([url]) => url);
