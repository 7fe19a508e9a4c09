import type { FleetConfig } from "../../config/types";
import type { ReserveEstimate } from "../memory-reserve";
import { vllmReserve } from "./vllm-reserve";

// PLACEHOLDER until the SGLang reserve lands (issue 29 item 6): vLLM's estimate, and the
// utilization as the static fraction.
export const sglangReserve: ReserveEstimate = vllmReserve;
export const sglangMemFractionStatic = (cfg: FleetConfig): number => cfg.gpu_memory_utilization;
