import type { Engine } from "../../engine";
import { PRIME_INFERENCE_PROGRAM, primeFlag, primeInferenceArgv, vllmArgvOf } from "./argv";
import { vllmEngine } from "./engine";

/**
 * prime-rl's server (`engine = "prime-rl"`): vLLM under prime-rl's `inference` entrypoint, with its
 * worker extension and admin routes. It answers like vLLM; only the command line differs.
 */
export const primeRlEngine: Engine = {
  ...vllmEngine,
  name: "prime-rl",
  spellFlag: primeFlag,
  // Its `inference` console script.
  processName: PRIME_INFERENCE_PROGRAM,
  argv: (cfg, layout) => {
    if (!cfg.prime_engine) throw new Error("internal error: the prime-rl engine needs prime-rl's [inference] settings");
    return primeInferenceArgv(
      vllmEngine.argv(cfg, layout),
      cfg.prime_engine.weight_broadcast,
      cfg.prime_engine.renderer,
    );
  },
  // Checked as the `vllm serve` command line it stands for.
  manifestArgs: (argv, version) => vllmEngine.manifestArgs(vllmArgvOf(argv, version)),
  // prime-rl json.loads each [vllm] extra and sets it on vLLM's namespace before vLLM parses
  // (src/prime_rl/inference/vllm/server.py, `server`): vLLM's middleware list goes as a JSON list.
  restartGate: ["--vllm.middleware", JSON.stringify(["restart_gate.RestartGate"])],
};
