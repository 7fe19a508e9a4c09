import { createHash } from "node:crypto";
import type { FleetConfig } from "../config/types";
import type { EngineName } from "./engine-names";

/*
 * The fleet's compile and model cache (issue 32): one folder per (model, engine version, parallel
 * layout) under the target's cache base (slurm.cache_dir, local.cache_dir, kubernetes.compile_cache).
 * The plan names the model and layout parts; the engine version is known only where the engine
 * runs (a venv, a folder on PATH, an image), so the host resolves it there and puts it between them
 * (components/host/cache.ts), and a new engine version never reads an old version's artifacts.
 */

/** Where an island's engines keep their compile cache, below the target's cache base. */
export interface CachePlan {
  /** The model's folder: its name as one path component (a hash is appended when it had to be shortened). */
  model: string;
  /** The Python package whose version keys the folder on the node (Engine.pythonPackage). */
  package: string;
  /** The engine's name in the folder: <engine>-<version>. */
  engine: EngineName;
  /** The parallel layout's folder, e.g. tp1-dp1 or tp1-prefill-dp8x1n-decode-dp16x2n-ep. */
  layout: string;
}

/** One path component of plain characters (letters, digits, . _ -), never . or .. nor longer than 96 characters. */
export function pathComponent(s: string): string {
  let out = s
    .replace(/^\/+|\/+$/g, "")
    .replace(/\//g, "--")
    .replace(/[^A-Za-z0-9._-]/g, "-");
  if (/^\.*$/.test(out)) out = `_${out}`;
  if (out.length > 96 || out !== s.replace(/\//g, "--"))
    out = `${out.slice(0, 80)}-${createHash("sha256").update(s).digest("hex").slice(0, 12)}`;
  return out;
}

/** The island's cache folder parts: every island of a plan gets the same, so the fleet shares one folder. */
export function cachePlan(
  cfg: FleetConfig,
  engine: { name: EngineName; pythonPackage: string },
  layouts: { role: string; dpSize: number; nodes: number }[],
): CachePlan {
  const kinds = [
    ...new Set(
      layouts.map(
        (l) => `${l.role === "replica" ? "" : `${l.role}-`}dp${l.dpSize}${l.nodes > 1 ? `x${l.nodes}n` : ""}`,
      ),
    ),
  ];
  return {
    model: pathComponent(cfg.model.name),
    package: engine.pythonPackage,
    engine: engine.name,
    layout: [`tp${cfg.parallel.tp}`, ...kinds, ...(cfg.enable_expert_parallel ? ["ep"] : [])].join("-"),
  };
}
