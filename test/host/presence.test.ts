/**
 * Seeing a gone island before Pulumi plans (host/presence.ts): what counts as gone, the real status
 * query on this machine (bash, a run record, a live and a dead pid, the folder's markers), the
 * markers every create and delete leave, and what the program hands the job's resource under
 * Pulumi's mocks: the trigger and the create's stdin change only for a gone island, and a fleet
 * never brought back keeps exactly the trigger and stdin it had before this existed.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { emptyReport, type JobReport } from "../../components/host/job-report";
import { generationOf, NEVER_STARTED, observePresence, presenceOf, triggerHash } from "../../components/host/presence";
import { localTarget } from "../../components/local";
import { localShell } from "../../components/host/shell";
import { renderTemplate } from "../../components/templates";
import { shq } from "../../components/shell";
import { drainRpcs, installMocks, setConfig, settle, slurmConfig, value, type Registered } from "../program-harness";

const report = (over: Partial<JobReport>): JobReport => ({ ...emptyReport(0), ...over });
/** The Python client's golden weights record (clients/python/tests/unit/weights-record.txt). */
const RECORD = fs.readFileSync(path.join(__dirname, "../../clients/python/tests/unit/weights-record.txt"), "utf8");

describe("presenceOf: gone is a job that was started, has ended, and was not ended by pulumi destroy", () => {
  it.each<[string, Partial<JobReport>, boolean]>([
    ["running", { source: "squeue", state: "RUNNING", jobId: "7" }, false],
    ["pending", { source: "squeue", state: "PENDING", jobId: "7" }, false],
    ["cancelled behind Pulumi's back", { source: "scontrol", state: "CANCELLED", jobId: "7" }, true],
    ["timed out", { source: "sacct", state: "TIMEOUT", jobId: "7" }, true],
    ["node failure", { source: "sacct", state: "NODE_FAIL", jobId: "7" }, true],
    ["purged from SLURM, its id on file", { source: "job_id file", jobId: "7" }, true],
    ["a local run that ended", { source: "run record", state: "FAILED", jobId: "123" }, true],
    ["a local run that lives", { source: "run record", state: "RUNNING", jobId: "123" }, false],
    ["never started", { source: "none" }, false],
    ["cancelled by pulumi destroy", { source: "scontrol", state: "CANCELLED", jobId: "7", destroyed: true }, false],
  ])("%s", (_, over, gone) => {
    const p = presenceOf(report(over));
    expect(p.gone).toBe(gone);
    expect(p.why === "").toBe(!gone);
  });

  it("names the job, its state and what exited; the generation goes up by one only when gone", () => {
    const p = presenceOf(
      report({
        source: "sacct",
        state: "FAILED",
        jobId: "41",
        generation: 2,
        exits: [{ node: 1, name: "i0-replica1-n0", code: 137 }],
      }),
    );
    expect(p.why).toBe("its job 41 ended (FAILED): i0-replica1-n0 on node 1 exited 137");
    expect(generationOf(p)).toBe(3);
    expect(generationOf({ ...p, gone: false })).toBe(2);
  });

  it("the trigger is the bare script hash until an island is brought back", () => {
    expect(triggerHash("abc", 0)).toBe("abc");
    expect(triggerHash("abc", 2)).toBe("abc revival 2");
  });
});

describe("the local status query as the presence check (real bash, a run record per island)", () => {
  const saved = process.env.HOME;
  afterEach(() => {
    process.env.HOME = saved;
  });

  it("reads a dead run as gone, a live one and a destroyed one as not, a missing folder as never started, and each folder's generation", async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "presence-"));
    process.env.HOME = home;
    const mk = (name: string) => fs.mkdirSync(path.join(home, name, "logs"), { recursive: true });
    const startOf = (pid: number) => fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")[19];
    // A pid that is certainly dead: a process that already exited.
    const dead = spawnSync("true").pid!;
    mk("dead");
    fs.writeFileSync(path.join(home, "dead", "run"), `${dead} 1 hash ${home}/dead/logs/a\n`);
    fs.writeFileSync(path.join(home, "dead", "generation"), "3\n");
    mk("live");
    fs.writeFileSync(
      path.join(home, "live", "run"),
      `${process.pid} ${startOf(process.pid)} hash ${home}/live/logs/a\n`,
    );
    mk("destroyed");
    fs.writeFileSync(path.join(home, "destroyed", "run"), `${dead} 1 hash ${home}/destroyed/logs/a\n`);
    fs.writeFileSync(path.join(home, "destroyed", "destroyed"), "");
    const warnings: string[] = [];
    const seen = await observePresence(
      localShell(),
      localTarget.fleet.scheduler!,
      ["dead", "live", "destroyed", "never"].map((d) => ({ jobName: `run-${d}`, islandDir: d, nodeCount: 1 })),
      (m) => warnings.push(m),
    );
    expect(seen["run-dead"]).toMatchObject({ gone: true, generation: 3 });
    expect(generationOf(seen["run-dead"])).toBe(4);
    expect(seen["run-live"]).toMatchObject({ gone: false, generation: 0 });
    expect(seen["run-destroyed"]).toMatchObject({ gone: false });
    expect(seen["run-never"]).toEqual(NEVER_STARTED);
    expect(warnings).toEqual([
      `run-dead: its run ${dead} ended (FAILED); pulumi up creates it again (revival 4), leaving the islands that serve untouched`,
    ]);
  });

  it("a host that cannot answer is an error that says what the check is for, never a guess", async () => {
    const failing = { describe: "a test shell", run: async () => ({ code: 255, stdout: "", stderr: "no route" }) };
    await expect(
      observePresence(failing, localTarget.fleet.scheduler!, [{ jobName: "r", islandDir: "d" }], () => {}),
    ).rejects.toThrow(
      /pulumi preview and up first ask a test shell whether each island's job is still there.*no route/,
    );
  });
});

describe("the markers creates and deletes leave (real bash)", () => {
  const run = (script: string, env: Record<string, string>) =>
    spawnSync("bash", ["-c", script], { env: { ...process.env, ...env }, encoding: "utf8" });

  it("a create removes `destroyed` and, bringing an island back, records its generation; one never brought back records none", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "revival-"));
    fs.writeFileSync(path.join(dir, "destroyed"), "");
    expect(run(renderTemplate("host/revival.sh.mustache", { generation: 2 }), { FLEET_ISLAND_DIR: dir }).status).toBe(
      0,
    );
    expect(fs.readFileSync(path.join(dir, "generation"), "utf8")).toBe("2\n");
    expect(fs.existsSync(path.join(dir, "destroyed"))).toBe(false);
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), "revival-"));
    expect(renderTemplate("host/revival.sh.mustache", { generation: 0 })).not.toContain("generation");
    run(renderTemplate("host/revival.sh.mustache", { generation: 0 }), { FLEET_ISLAND_DIR: fresh });
    expect(fs.readdirSync(fresh)).toEqual([]);
  });

  it("the local delete leaves `destroyed` in its own folder and sets the weights record aside", () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "delete-"));
    fs.mkdirSync(path.join(home, "isl"));
    fs.writeFileSync(path.join(home, "isl", "owner"), "my-run\n");
    fs.writeFileSync(path.join(home, "isl", "endpoints.json"), "{}");
    fs.writeFileSync(path.join(home, "isl", "weights"), RECORD);
    const script = renderTemplate("local/delete.sh.mustache", { runName: "my-run", islandDir: "isl" });
    const r = run(script, { HOME: home });
    expect(r.status, r.stderr).toBe(0);
    expect(fs.readdirSync(path.join(home, "isl")).sort()).toEqual(["destroyed", "owner", "weights.previous"]);
    expect(fs.readFileSync(path.join(home, "isl", "weights.previous"), "utf8")).toBe(RECORD);
  });

  describe("the weights record a delete set aside (weights.previous)", () => {
    /** An island folder as a delete left it: generation `was` recorded, the record set aside. */
    function deleted(was: number | undefined, record = RECORD) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "revival-"));
      if (was !== undefined) fs.writeFileSync(path.join(dir, "generation"), `${was}\n`);
      fs.writeFileSync(path.join(dir, "destroyed"), "");
      fs.writeFileSync(path.join(dir, "weights.previous"), record);
      return dir;
    }
    /** The create's revival step for an island serving `model` on vLLM, at `generation`. */
    function create(dir: string, generation: number, model = "Qwen/Qwen3-0.6B") {
      const view = { generation, weightRecords: [{ dir: shq(dir), model: shq(model), engine: shq("vllm") }] };
      const r = run(`say() { printf '%s\\n' "$*" >&2; }\n${renderTemplate("host/revival.sh.mustache", view)}`, {
        FLEET_ISLAND_DIR: dir,
      });
      expect(r.status, r.stderr).toBe(0);
      return { said: r.stderr, files: fs.readdirSync(dir).sort() };
    }

    it("a revival takes it back when it names the island's model and engine", () => {
      const dir = deleted(1);
      const { said, files } = create(dir, 2);
      expect(files).toEqual(["generation", "weights"]);
      expect(fs.readFileSync(path.join(dir, "weights"), "utf8")).toBe(RECORD);
      expect(said).toContain("brought back with the fleet's weights record (version step-7)");
      // The first revival of an island never brought back before (no generation recorded).
      expect(create(deleted(undefined), 1).files).toEqual(["generation", "weights"]);
    });

    it("a revival with another model drops it, saying why; so does a record that names none", () => {
      const { said, files } = create(deleted(0), 1, "Qwen/Qwen3-8B");
      expect(files).toEqual(["generation"]);
      expect(said).toContain(
        "is for Qwen/Qwen3-0.6B (vllm), this island serves Qwen/Qwen3-8B (vllm): its engines start from the base model",
      );
      const old = "version v1\ncall POST /collective_rpc {}\n";
      expect(create(deleted(0, old), 1).said).toContain("is for no model (no engine)");
    });

    it("any other create drops it: after pulumi destroy (the recorded generation, or none) a new deployment starts from the base model", () => {
      expect(create(deleted(2), 2).files).toEqual(["generation"]);
      expect(create(deleted(undefined), 0).files).toEqual([]);
    });
  });
});

/** The lines a revival adds to a create (host/revival.sh.mustache's generation section), at generation 2. */
const REVIVAL_LINES = [
  "# Revival 2: the island's job was gone when this `pulumi up` planned (a generation",
  "# above the one recorded; after a `pulumi destroy` the next create starts at the recorded one).",
  `fleet_was=$(head -c 16 "$FLEET_ISLAND_DIR/generation" 2>/dev/null | tr -dc 0-9)`,
  `[ "\${fleet_was:-0}" -ge 2 ] || fleet_revived=1`,
  `printf '%s\\n' 2 > "$FLEET_ISLAND_DIR/generation" || exit 1`,
];

describe("the program hands each job's resource what the host said (Pulumi's mocks)", () => {
  afterEach(drainRpcs);

  async function program(stackFile: string, config: Record<string, string>, gone: boolean) {
    const registered: Registered[] = installMocks("dev", {
      presence: () => (gone ? { generation: 1, gone: true, why: "its job 7 ended (CANCELLED)" } : undefined),
    });
    setConfig({ ...config, "vllm-fleet:stackFile": stackFile });
    vi.resetModules();
    const infra = await import("../../index");
    await value(infra.islands);
    await settle(registered);
    return registered.filter((r) => r.type.startsWith("command:") && / bash -s$/.test(r.inputs.create));
  }

  it.each([
    ["local", "local-multi-replica", {}],
    ["SLURM", "multi-replica", slurmConfig()],
    ["SLURM, co-scheduled services (one hetjob)", "policy-and-judge", slurmConfig()],
  ])(
    "%s: a gone job's trigger carries the next generation and its create records it; a job never brought back keeps the bare hash and the same stdin",
    async (_, stackFile, config) => {
      const kept = await program(stackFile, config, false);
      const back = await program(stackFile, config, true);
      expect(back).toHaveLength(kept.length);
      expect(kept.length).toBeGreaterThan(0);
      for (const [k, job] of kept.entries()) {
        const hash = job.inputs.triggers[0] as string;
        expect(hash).toMatch(/^[0-9a-f]{16}$/);
        expect(job.inputs.stdin).not.toContain("/generation");
        expect(back[k].inputs.triggers[0]).toBe(`${hash} revival 2`);
        expect(back[k].inputs.triggers.slice(1)).toEqual(job.inputs.triggers.slice(1));
        expect(back[k].inputs.stdin).toContain(`printf '%s\\n' 2 > "$FLEET_ISLAND_DIR/generation"`);
        // Nothing else of the create changes: the same script, adopted or submitted as before.
        expect(back[k].inputs.stdin.split("\n").filter((l: string) => !REVIVAL_LINES.includes(l))).toEqual(
          job.inputs.stdin.split("\n"),
        );
        expect(back[k].inputs.create).toBe(job.inputs.create);
        expect(back[k].inputs.delete).toBe(job.inputs.delete);
      }
    },
  );
});
