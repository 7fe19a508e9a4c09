import type { IslandPlan } from "../plan/deployment-plan";
import { shq } from "../shell";

/*
 * The fleet's compile and model cache on the targets that start processes themselves (SLURM, local):
 * the lines before any process starts find the engine's version on the node, name the island's
 * cache folder <base>/<model>/<engine>-<version>/<layout> (components/plan/cache.ts), create it and
 * say whether it is warm; each engine then gets VLLM_CACHE_ROOT in it, and HF_HOME in
 * <base>/huggingface, which every model and engine version shares (downloads depend on neither).
 */

/**
 * The cache base a target uses: `cacheDir` as set, else `cache` beside the fleet's folders
 * (<output_dir>/cache, or vllm-fleet/cache, which every stack of the user without output_dir shares).
 */
export function cacheBase(cacheDir: string | undefined, outputDir: string | undefined): string {
  return cacheDir ?? `${(outputDir ?? "vllm-fleet").replace(/\/+$/, "")}/cache`;
}

/** A path as a shell word: absolute as it is, relative under the user's home (as output_dir is). */
const pathWord = (p: string) => (p.startsWith("/") ? shq(p) : `"$HOME"/${shq(p)}`);

/** The Python that prints a package's version from its metadata: milliseconds, where `import vllm` takes seconds. */
const VERSION_PY = "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))";

/**
 * The setup lines (after the launcher's): `key` names the setting for the log, `wrap` is the
 * launcher's prefix (a container) and `program` the engine's program, whose interpreter is asked first.
 */
export function cacheSetupLines(
  island: IslandPlan,
  base: string,
  key: string,
  wrap: string[],
  program: string,
): string[] {
  const c = island.cache;
  const folder = `"$FLEET_CACHE_BASE"/${shq(c.model)}/${shq(`${c.engine}-`)}"$FLEET_ENGINE_VERSION"/${shq(c.layout)}`;
  const python = [...wrap, "python3"].join(" ");
  return [
    `# Compile and model cache (${key}): kept across deployments and shared by every engine that uses it; the`,
    `# folder carries the engine version found here, so another version never reuses it.`,
    `FLEET_CACHE_BASE=${pathWord(base)}`,
    `FLEET_VERSION_PY=${shq(VERSION_PY)}`,
    "fleet_engine_version() {",
    "  local bin line='' py=()",
    '  if bin=$(command -v "$1") && IFS= read -r line < "$bin" && [[ $line == \'#!\'*python* ]]; then',
    '    read -ra py <<< "${line:2}"',
    '    "${py[@]}" -c "$FLEET_VERSION_PY" "$2" && return',
    "  fi",
    `  ${python} -c "$FLEET_VERSION_PY" "$2"`,
    "}",
    `FLEET_ENGINE_VERSION=$(fleet_engine_version ${shq(program)} ${shq(c.package)} 2>/dev/null | head -n 1)`,
    "FLEET_ENGINE_VERSION=${FLEET_ENGINE_VERSION//[^A-Za-z0-9._+-]/_}",
    'if [ -n "$FLEET_ENGINE_VERSION" ]; then',
    `  FLEET_CACHE_DIR=${folder}`,
    "else",
    '  FLEET_CACHE_DIR="$NODE_DIR/cache"',
    `  echo "[fleet] compile cache: no ${c.package} version found here (the engine's python, python3); this run keeps its own in $FLEET_CACHE_DIR"`,
    "fi",
    'mkdir -p "$FLEET_CACHE_DIR/vllm" "$FLEET_CACHE_BASE/huggingface" || exit 1',
    'FLEET_CACHE_ENTRIES=$(find "$FLEET_CACHE_DIR/vllm" -type f 2>/dev/null | head -n 100000 | wc -l)',
    'if [ "$FLEET_CACHE_ENTRIES" -gt 0 ]; then',
    '  echo "[fleet] compile cache: $FLEET_CACHE_DIR (warm: $FLEET_CACHE_ENTRIES entries)"',
    "else",
    '  echo "[fleet] compile cache: $FLEET_CACHE_DIR (empty)"',
    "fi",
  ];
}

/** The program the island's engines run (its first word: a launcher's own prefix is not in argv). */
export function engineProgram(island: IslandPlan): string {
  const first = island.engines[0]?.argv[0];
  return typeof first === "string" ? first : "vllm";
}

/** What each engine exports before its own environment (so env_vars can still point elsewhere). */
export const CACHE_EXPORTS = [
  'export VLLM_CACHE_ROOT="$FLEET_CACHE_DIR/vllm"',
  'export HF_HOME="$FLEET_CACHE_BASE/huggingface"',
];
