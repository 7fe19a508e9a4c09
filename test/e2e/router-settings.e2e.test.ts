/**
 * The router's settings (request_timeout_secs, [deployment.router] extra) against the REAL routers
 * of the pinned Python environment: the planned vllm-router and sglang-router command lines parse
 * with their own parsers (test/upstream/introspect.py check), a mistyped flag does not (the check
 * bites), and the real vllm-router, started as the fleet starts one before its workers, listens and
 * runs with them (its health checker at the interval the file set). No engine is needed.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { introspectScript } from "../../bin/sync-upstream";
import { resolveValue } from "../../components/plan/values";
import { plan, SLURM } from "../helpers";
import { pythonVenv } from "./python-env";

const TABLE = `request_timeout_secs = 14400
[deployment.router.extra]
retry_max_retries = 3
disable_circuit_breaker = true
health_check_interval_secs = 7
cors_allowed_origins = ["https://a.example", "https://b.example"]
log_level = "debug"
`;
const PORT = 18000 + (process.pid % 1000);

/** The island's router command line (the one started before its workers, when there is one). */
function routerLine(text: string): string[] {
  const r = plan(text).islands[0].router!;
  if (r.kind === "llm-d") throw new Error("not an HTTP router");
  return (r.lateWorkers ?? r).argv.map((v) => resolveValue(v, () => "127.0.0.1"));
}

const vllmRouter = routerLine(
  `[model]\nname = "Qwen/Qwen3-0.6B"\n[server]\nport = ${PORT}\n[deployment.router]\n${TABLE}[local]\ndevice = "gpu"\n`,
);
const sglangRouter = routerLine(
  `engine = "sglang"\n[model]\nname = "Qwen/Qwen3-8B"\n[parallel]\ntp = 8\n[deployment.router]\n${TABLE.replace("health_check_interval_secs = 7\n", "shutdown_grace_period_secs = 30\n")}${SLURM}`,
);

describe("the tuned router command lines, with the real routers", () => {
  const started: ChildProcess[] = [];
  afterAll(() => started.forEach((p) => p.kill("SIGKILL")));

  it("parse with vllm-router's and sglang-router's own parsers; a mistyped flag does not", () => {
    expect(vllmRouter).toEqual(expect.arrayContaining(["--request-timeout-secs", "--retry-max-retries"]));
    expect(sglangRouter.slice(0, 3)).toEqual(["python3", "-m", "sglang_router.launch_router"]);
    const lines = [
      { id: "vllm-router", program: "vllm-router", argv: vllmRouter.slice(1) },
      { id: "sglang-router", program: "sglang-router", argv: sglangRouter.slice(3) },
      { id: "control", program: "vllm-router", argv: [...vllmRouter.slice(1), "--no-such-flag", "1"] },
    ];
    const out = execFileSync(path.join(pythonVenv(), "bin", "python"), [introspectScript, "check"], {
      input: JSON.stringify(lines),
      encoding: "utf8",
      timeout: 5 * 60_000,
    });
    const verdicts = new Map((JSON.parse(out) as { id: string; problems: string[] }[]).map((v) => [v.id, v]));
    expect(verdicts.get("vllm-router")!.problems).toEqual([]);
    expect(verdicts.get("sglang-router")!.problems).toEqual([]);
    expect(verdicts.get("control")!.problems.join("; ")).not.toBe("");
  }, 300_000);

  it("the real vllm-router starts with them and runs its health checks at the interval set", async () => {
    const bin = path.join(pythonVenv(), "bin", "vllm-router");
    let log = "";
    const p = spawn(bin, vllmRouter.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    started.push(p);
    p.stdout!.on("data", (d) => (log += d));
    p.stderr!.on("data", (d) => (log += d));
    let exited: number | null = null;
    p.on("exit", (code) => (exited = code ?? -1));
    let live = false;
    for (let i = 0; i < 60 && !live && exited === null; i++) {
      await new Promise((r) => setTimeout(r, 500));
      live = await fetch(`http://127.0.0.1:${PORT}/liveness`).then(
        (r) => r.ok,
        () => false,
      );
    }
    expect(exited, log).toBeNull();
    expect(live, log).toBe(true);
    expect(log).toMatch(/health checker for workers with 7s interval/);
    expect(log).toContain("DEBUG"); // log_level = "debug" replaced the planner's info
  }, 60_000);
});
