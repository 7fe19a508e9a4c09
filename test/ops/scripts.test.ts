import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { expectShellcheckClean } from "../shellcheck";
import { endpointsScript, logsScript } from "../../components/ops/commands";
import { viewFromPlan } from "../../components/ops/fleet-view";
import { jobsQueryScript, renderSecretFiles, schedulerQueryScript } from "../../components/slurm";
import { plan as planOf, SLURM_STACKS, stackPlanOf, stackText } from "../helpers";

const complete = (text: string, shellcheckArgs: string[] = []) => {
  const n = spawnSync("bash", ["-n"], { input: text, encoding: "utf8" });
  expect(n.stderr).toBe("");
  expect(n.status).toBe(0);
  expectShellcheckClean(text, shellcheckArgs);
};

describe("the login-node scripts of the CLI and of the secrets (templates/slurm/)", () => {
  it("fleet jobs' query passes bash -n and shellcheck", () => complete(jobsQueryScript()));

  it("a co-scheduled service's scheduler query and logs script pass bash -n and shellcheck", () => {
    const stack = stackPlanOf("policy-and-judge");
    for (const plan of stack.services) {
      const view = viewFromPlan(plan, stack);
      expect(view.islands[0].component).toBeDefined();
      complete(schedulerQueryScript(view.islands), ["-e", "SC2034"]);
      complete(logsScript(view, () => true, 40, true));
    }
  });

  it.each(SLURM_STACKS)(
    "%s: the scheduler query, logs and endpoints scripts and the secrets delete pass bash -n and shellcheck",
    (name) => {
      const p = planOf(stackText(name), name);
      const view = viewFromPlan(p);
      // The query reads `reason` off each squeue line without using it.
      complete(schedulerQueryScript(view.islands), ["-e", "SC2034"]);
      complete(logsScript(view, () => true, 40, true));
      complete(logsScript(view, (id) => id === "router", 5, false));
      complete(endpointsScript(view));
      const del = renderSecretFiles(p, p.islands[0], ["apiKey"]).delete;
      const body = spawnSync("bash", ["-c", `printf '%s' ${del.slice(del.indexOf("bash -c ") + "bash -c ".length)}`], {
        encoding: "utf8",
      }).stdout;
      expect(body).not.toContain("\n");
      complete(`#!/bin/bash\n${body}\n`);
    },
  );

  it("the logs script names a banner's island dir through shq, and echo prints it as before", () => {
    const view = viewFromPlan(planOf(stackText("single-node"), "single-node"));
    const script = logsScript(view, () => false, 3, true);
    const line = script.split("\n").find((l) => l.includes("batch output"))!;
    const echo = line.slice(line.indexOf("echo "), line.indexOf("; tail"));
    const out = spawnSync("bash", ["-c", `id=77; ${echo}`], { encoding: "utf8" }).stdout;
    expect(out).toBe(`==> island 0: batch output ${view.islands[0].islandDir}/slurm-77.out <==\n`);
  });
});
