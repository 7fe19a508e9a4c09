/**
 * Idle release (issue 44) up to the host targets' scripts: `idle_release_after` in each layout and
 * as a service default, refused on Kubernetes; what the plan hands the activity monitor; the
 * monitor in SLURM's launch and local's supervisor (bash -n, shellcheck); the `idlereleased`
 * marker record, IDLE-RELEASED in `fleet status`, gone for presence; the plan's text and JSON.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { loadStackText } from "../../components/config";
import { emptyReport, readMarkerRecord } from "../../components/host/job-report";
import { presenceOf } from "../../components/host/presence";
import { renderSupervisor } from "../../components/local";
import { viewFromPlan } from "../../components/ops/fleet-view";
import { islandStatus } from "../../components/ops/status";
import { buildPlan } from "../../components/planner";
import { renderIslandScript } from "../../components/slurm";
import { planJson } from "../../components/report/plan-json";
import { planText } from "../../components/report/plan-text";
import { issuesOf, load, plan, stackText } from "../helpers";
import { expectShellcheckClean, shellcheckAvailable } from "../shellcheck";

/** `text` with idle_release_after = `v` where its layout keeps it (the root, or [inference]). */
const withIdle = (text: string, v: string) =>
  /^\[inference\]$/m.test(text)
    ? text.replace(/^\[inference\]$/m, `[inference]\nidle_release_after = "${v}"`)
    : `idle_release_after = "${v}"\n${text}`;

const STANDALONE = `[model]\nname = "Qwen/Qwen3-8B"\n[slurm]\njob_name = "r"\npartition = "cluster"\ntime = "02:00:00"\n`;

describe("idle_release_after", () => {
  it("off by default; a duration in s, m or h at the root, under [inference], in prime-rl's [vllm_fleet]", () => {
    expect(load(STANDALONE).idle_release_after).toBeUndefined();
    expect(plan(STANDALONE).islands[0].activity.idleReleaseAfterS).toBeNull();
    expect(plan(`idle_release_after = "90m"\n${STANDALONE}`).islands[0].activity.idleReleaseAfterS).toBe(5400);
    const rl = withIdle(stackText("multi-replica"), "2h");
    expect(plan(rl).islands.map((i) => i.activity.idleReleaseAfterS)).toEqual(plan(rl).islands.map(() => 7200));
    const primeText = `${stackText("prime-single-node")}\n[vllm_fleet]\nidle_release_after = "20s"\n`;
    expect(plan(primeText).islands[0].activity.idleReleaseAfterS).toBe(20);
  });

  it("refuses what is no duration, naming the key; accepted on Kubernetes", () => {
    const by = (text: string) => Object.fromEntries(issuesOf(text).map((i) => [i.path, i.message]));
    expect(by(`idle_release_after = "20"\n${STANDALONE}`).idle_release_after).toContain('"20s", "90m", "2h"');
    expect(by(`idle_release_after = "5s"\n${STANDALONE}`).idle_release_after).toContain("at least 10s");
    expect(by(`idle_release_after = "900h"\n${STANDALONE}`).idle_release_after).toContain("at most 168h");
    expect(plan(withIdle(stackText("k8s-single-node"), "2h")).islands[0].activity.idleReleaseAfterS).toBe(7200);
  });

  it("a stack's value is every service's default; a service's own replaces it", () => {
    const text = `idle_release_after = "1h"\n[slurm]\njob_name = "pj"\npartition = "cluster"\n
[services.policy]
model = "Qwen/Qwen3-32B"
idle_release_after = "20s"
[services.judge]
model = "Qwen/Qwen3-8B"
`;
    const services = loadStackText(text, "t.toml");
    expect(Object.fromEntries(services.map((s) => [s.service, s.idle_release_after]))).toEqual({
      policy: "20s",
      judge: "1h",
    });
  });

  it("the plan hands the monitor every serving engine's metrics, metric names and pause route", () => {
    const p = buildPlan(load(withIdle(stackText("multi-replica"), "20s")), "t");
    const a = p.islands[0].activity;
    expect(a.engines.length).toBe(p.islands[0].endpoints.engines.length);
    expect(a.engines[0]).toMatchObject({
      metrics: "/metrics",
      running: "vllm:num_requests_running",
      waiting: "vllm:num_requests_waiting",
      finished: "vllm:request_success_total",
      paused: "/is_paused",
    });
  });
});

describe("the monitor in the host targets' scripts", () => {
  const p = buildPlan(load(withIdle(stackText("multi-replica"), "20s")), "t");
  const launch = renderIslandScript(p, p.islands[0]).launchBody;
  it("SLURM: node 0 runs it; its release is scancel of the job; bash -n and shellcheck clean", () => {
    expect(launch).toContain("FLEET_IDLE_RELEASE_S=20");
    expect(launch).toContain('[ "$NODE_INDEX" != 0 ] || FLEET_ACTIVITY_HERE=1');
    expect(launch).toContain('scancel "$SLURM_JOB_ID"');
    // A co-scheduled island: its component alone (component 0, holding the batch script, last).
    expect(launch).toContain('scancel "$FLEET_HET_LEADER+$FLEET_HET_COMPONENT"');
    expect(launch).toContain("it holds the job's batch script, whose end would end them");
    expect(launch).toContain("FLEET_ACTIVITY_FINISHED+=(vllm:request_success_total)");
    expect(spawnSync("bash", ["-n"], { input: launch }).status).toBe(0);
    if (shellcheckAvailable()) expectShellcheckClean(launch);
  });

  it("local: the supervisor runs it, always (0: a ledger and no release without the key)", () => {
    const local = stackText("local-single-node");
    const q = buildPlan(load(local), "t");
    const script = renderSupervisor(q, q.islands[0]);
    expect(script).toContain("FLEET_IDLE_RELEASE_S=0");
    expect(script).toContain("FLEET_ACTIVITY_HERE=1");
    expect(script).toContain("kill -TERM $$");
    expect(spawnSync("bash", ["-n"], { input: script }).status).toBe(0);
  });
});

describe("after the release", () => {
  const report = () => {
    const r = { ...emptyReport(0), jobId: "77", state: "CANCELLED", source: "sacct" as const };
    expect(readMarkerRecord("idlereleased", ["1800000020 1800000000"], r)).toBe(true);
    return r;
  };

  it("fleet status says IDLE-RELEASED and when; a running job with a stale marker does not", () => {
    const view = viewFromPlan(plan(STANDALONE)).islands[0];
    const s = islandStatus(view, report(), new Map());
    expect(s.status).toBe("IDLE-RELEASED");
    expect(s.detail).toContain(new Date(1800000020 * 1000).toISOString());
    expect(s.detail).toContain(new Date(1800000000 * 1000).toISOString());
    expect(islandStatus(view, { ...report(), state: "RUNNING" }, new Map()).status).not.toBe("IDLE-RELEASED");
    // Local: a run that ended by itself reads FAILED; its marker says why.
    expect(islandStatus(view, { ...report(), state: "FAILED", source: "run record" }, new Map()).status).toBe(
      "IDLE-RELEASED",
    );
  });

  it("counts as gone, so the next pulumi up brings it back", () => {
    const p = presenceOf(report());
    expect(p.gone).toBe(true);
    expect(p.why).toContain("released itself");
  });

  it("plan states the bound per island, beside SLURM's GPU-hours, and in JSON", () => {
    const cfg = load(`idle_release_after = "20s"\n${STANDALONE}`);
    const p = buildPlan(cfg, "t");
    const text = planText(p, "t.toml");
    expect(text).toContain("2.0 GPU-hours at the time limit");
    expect(text).toContain("idle release: an island with no request for 20 s (idle_release_after)");
    expect(text).toContain("idle release: ends itself after 20 s");
    expect(planJson(p, cfg).islands[0].idle_release_after_s).toBe(20);
    expect(planText(plan(STANDALONE), "t.toml")).not.toContain("idle release");
  });
});
