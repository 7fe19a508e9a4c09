/**
 * The router's settings (request_timeout_secs, [deployment.router] extra) reach the router process
 * every target starts: the local supervisor, the SLURM island script, the Kubernetes router
 * container; vllm-router's and sglang-router's. Each renders the plan's router command line: these
 * check the tuned flags are in what is rendered, and that the test stand-in vllm-router (which parses
 * with clap's rules: a flag given twice is an error) takes the line. The plan-level checks:
 * test/config/router-settings.test.ts.
 */
import { describe, expect, it } from "vitest";
import { renderSupervisor } from "../../components/local";
import { renderIslandScript } from "../../components/slurm";
import { allK8sObjects, renderK8sFleet, type K8sObject } from "../../components/kubernetes";
import { resolveValue } from "../../components/plan/values";
import { plan, stackText } from "../helpers";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parseRouterArgv } = require("../fixtures/standins/lib/router.js");

/** The tuned router table, appended to a stack file whose router table is `[<at>]`. */
const tuned = (at: string, router = "") =>
  `\n[${at}]\n${router}request_timeout_secs = 7200\n[${at}.extra]\nretry_max_retries = 2\ndisable_circuit_breaker = true\n`;

/** The flags the tuned table sets, as the router's command line carries them. */
const TOKENS = [["--request-timeout-secs", "7200"], ["--retry-max-retries", "2"], ["--disable-circuit-breaker"]];

/** `tokens` in a shell script, in order, one word after the other (line continuations allowed). */
function expectWords(script: string, tokens: string[]): void {
  const re = new RegExp(tokens.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[ \\t\\\\\\n]+"));
  expect(script, tokens.join(" ")).toMatch(re);
}

/** The containers of the Deployments (the router's) among `objects`. */
const containersOf = (objects: K8sObject[]): { name: string; command: string[] }[] =>
  objects.flatMap((o) => (o.kind === "Deployment" ? (o.spec.template as any).spec.containers : []));

describe("the router's settings reach the router each target starts", () => {
  it("local: the supervisor starts vllm-router with them, and the stand-in takes its line", () => {
    const p = plan(`${stackText("local-single-node")}${tuned("deployment.router")}`, "local-single-node");
    const island = p.islands[0];
    const script = renderSupervisor(p, island, []);
    for (const t of TOKENS) expectWords(script, t);
    const r = island.router!;
    if (r.kind === "llm-d") throw new Error("expected vllm-router");
    for (const argv of [r.argv, ...(r.lateWorkers ? [r.lateWorkers.argv] : [])])
      expect(() => parseRouterArgv(argv.slice(1).map((v) => resolveValue(v, () => "127.0.0.1")))).not.toThrow();
  });

  it("SLURM: the island script starts vllm-router with them (P/D, where the planner also sets health checks)", () => {
    const p = plan(`${stackText("disaggregated-small")}${tuned("inference.deployment.router")}`, "disaggregated-small");
    const { launchBody } = renderIslandScript(p, p.islands[0]);
    for (const t of TOKENS) expectWords(launchBody, t);
    const r = p.islands[0].router!;
    if (r.kind === "llm-d") throw new Error("expected vllm-router");
    expect(() => parseRouterArgv(r.argv.slice(1).map((v) => resolveValue(v, () => "10.0.0.1")))).not.toThrow();
  });

  it("SLURM: the island script starts sglang-router with them", () => {
    const p = plan(`${stackText("sglang-single-node")}${tuned("deployment.router")}`, "sglang-single-node");
    expect(p.islands[0].router?.kind).toBe("sglang-router");
    const { launchBody } = renderIslandScript(p, p.islands[0]);
    expectWords(launchBody, ["sglang_router.launch_router"]);
    for (const t of TOKENS) expectWords(launchBody, t);
  });

  it("Kubernetes: the router container's command carries them, for vllm-router and sglang-router", () => {
    for (const [stack, kind] of [
      ["k8s-single-node", "vllm-router"],
      ["k8s-sglang-wide-ep", "sglang-router"],
    ]) {
      const p = plan(`${stackText(stack)}${tuned("deployment.router", `type = "${kind}"\n`)}`, stack);
      const router = containersOf(allK8sObjects(renderK8sFleet(p, []))).find((c) => c.name === kind);
      expect(router, `${stack}: ${kind} container`).toBeDefined();
      const command = router!.command;
      for (const t of TOKENS) {
        const at = command.indexOf(t[0]);
        expect(command.slice(at, at + t.length), `${stack}: ${t[0]}`).toEqual(t);
      }
    }
  });
});
