/**
 * The create and delete commands as sshd runs them, against a fake SLURM (fake-slurm.ts): what
 * reaches remote.Command's stderr, and what the login-node time bound does.
 *
 * - pulumi-command v1.2.1 util/util.go LogOutput reads stderr with a default bufio.Scanner: a line
 *   over 64 KiB stops it and the ssh session's writer blocks for good. No line may come near that.
 * - customTimeouts end only the dial's context (pulumi-go-provider v1.3.0 middleware/cancel Wrap;
 *   pulumi-command remote/commandOutputs.go run calls session.Run, which takes no context): the
 *   bound is `timeout` on the login node, and a create it stops must not leave a job behind.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { renderIslandJob, STDERR_LINE_BOUND } from "../../components/slurm/island-job";
import { boundedOnLogin, providerTimeoutSeconds } from "../../components/slurm/login-bound";
import { renderSecretFiles } from "../../components/slurm/secret-files";
import { plan as planOf, stackText } from "../helpers";
import { fakeSlurm } from "./fake-slurm";

const plan = planOf(stackText("single-node"), "single-node");
const job = renderIslandJob(plan, plan.islands[0]);
/** The first job id the fake sbatch hands out. */
const JOB_ID = "100";
const MB = 1 << 20;

/** Every line of a command's stderr: at most the bound in characters, far under the scanner's 64 KiB. */
function expectBoundedLines(stderr: string) {
  expect(stderr).not.toContain("\r");
  const lines = stderr.split("\n");
  const longest = Math.max(...lines.map((l) => l.length));
  expect(longest).toBeLessThanOrEqual(STDERR_LINE_BOUND);
  expect(Math.max(...lines.map((l) => Buffer.byteLength(l)))).toBeLessThan(64 * 1024);
}

describe("stderr of the create and delete commands (util.LogOutput's 64 KiB line limit)", () => {
  it("create: a failed job's 1 MB log line with no newline, \\r progress bars and the tools' own long lines all reach stderr cut to the bound, with the log's last words", async () => {
    const slurm = fakeSlurm();
    const dir = path.join(slurm.home, job.islandDir);
    const node = path.join(dir, "logs", `job_${JOB_ID}_0`, "node_0");
    fs.mkdirSync(node, { recursive: true });
    // The engine's log: one line of 1 MB, no newline, ending in the error that explains the failure.
    fs.writeFileSync(
      path.join(node, "i0-replica0-n0.log"),
      `loading\n${"x".repeat(MB)} ERROR simulated start-up failure`,
    );
    // The batch output: a progress bar's \r frames, 1 MB without a newline.
    fs.writeFileSync(path.join(dir, `slurm-${JOB_ID}.out`), "\rLoading shards 42% |####      |".repeat(MB / 32));
    const run = await slurm.run(job.create, job.stdin, {
      FAKE_SBATCH_GONE: "1",
      FAKE_SBATCH_STDERR_BYTES: String(200_000),
      FAKE_SCONTROL_STDERR_BYTES: String(300_000),
    });
    expect(run.code, run.stderr.slice(-3000)).toBe(1);
    expect(run.stderr).toMatch(/single-node-i0 \(island-0\): job 100 ended \(gone: .*\) before every endpoint served/);
    expect(run.stderr).toContain(`last lines of ${job.islandDir}/logs/job_100_0/node_0/i0-replica0-n0.log:`);
    expect(run.stderr).toContain("ERROR simulated start-up failure");
    expect(run.stderr).toMatch(/^Loading shards 42% \|#### {6}\|$/m);
    expect(run.stderr).toMatch(/^w{2000}$/m);
    expectBoundedLines(run.stderr);
    expect(run.ms).toBeLessThan(20_000);
  });

  it("delete: a tool's long line reaches stderr cut to the bound", async () => {
    const slurm = fakeSlurm();
    const run = await slurm.run(job.delete, "", { FAKE_SQUEUE_STDERR_BYTES: String(MB) });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("single-node-i0: no job in the queue; nothing to cancel");
    expectBoundedLines(run.stderr);
  });
});

describe("the login-node bound (customTimeouts do not stop a running command)", () => {
  it("each command runs under timeout: create pending + ready + 300 s, delete 300 s, the credentials 60 s", () => {
    const t = plan.settings as { pending_timeout: number; ready_timeout: number };
    expect(job.create).toBe(`timeout -k 120 ${t.pending_timeout + t.ready_timeout + 300} bash -s`);
    expect(job.create).toBe(boundedOnLogin(job.bounds.create, "bash -s"));
    expect(job.delete).toMatch(/^timeout -k 30 300 bash -c '/);
    const secrets = renderSecretFiles(plan, plan.islands[0], ["apiKey"]);
    expect(secrets.create).toMatch(/^timeout -k 10 60 bash -c '/);
    expect(secrets.delete).toMatch(/^timeout -k 10 60 bash -c '/);
    // The provider's own deadline comes after the dial, the bound and its SIGKILL.
    expect(providerTimeoutSeconds(job.bounds.create)).toBe(300 + job.bounds.create.seconds + 120);
  });

  it("a create stopped by its bound while it waits for readiness cancels its job and exits 124", async () => {
    const slurm = fakeSlurm();
    const run = await slurm.run(boundedOnLogin({ seconds: 3, killAfter: 10 }, "bash -s"), job.stdin);
    expect(run.code, run.stderr).toBe(124);
    expect(run.stderr).toContain("single-node-i0 (island-0): submitted job 100");
    expect(run.stderr).toMatch(/stopped by SIGTERM after \d+ s: the create's time bound on the login node ran out/);
    expect(run.stderr).toContain("cancelling job(s) 100 so that no allocation outlives the stopped create");
    expect(slurm.queue()).toEqual([]);
    expect(run.ms).toBeLessThan(3000 + 5000);
  });

  it("a create stopped while sbatch hangs after queueing the job (no id printed yet) cancels that job by name", async () => {
    const slurm = fakeSlurm();
    const run = await slurm.run(boundedOnLogin({ seconds: 2, killAfter: 10 }, "bash -s"), job.stdin, {
      FAKE_SBATCH_HANG: "1",
    });
    expect(run.code, run.stderr).toBe(124);
    expect(run.stderr).not.toContain("submitted job");
    expect(run.stderr).toContain("cancelling job(s) 100 so that no allocation outlives the stopped create");
    expect(slurm.scancels()).toContain(`--name=single-node-i0 --user=${os.userInfo().username}`);
    expect(slurm.queue()).toEqual([]);
    // The next create finds nothing to adopt.
    const again = await slurm.run(boundedOnLogin({ seconds: 2, killAfter: 10 }, "bash -s"), job.stdin);
    expect(again.stderr).not.toContain("adopting");
    expect(again.stderr).toContain("submitted job 101");
  });

  it("a hung scheduler cannot hold the create past its bound and the SIGKILL after it", async () => {
    const slurm = fakeSlurm();
    const run = await slurm.run(boundedOnLogin({ seconds: 2, killAfter: 2 }, "bash -s"), job.stdin, {
      FAKE_SQUEUE_HANG: "1",
    });
    // timeout's SIGKILL goes to its whole process group, itself included: the session ends by that signal.
    expect(run.signal).toBe("SIGKILL");
    expect(run.stderr).toMatch(/stopped by SIGTERM after \d+ s/);
    expect(run.ms).toBeLessThan(2000 + 2000 + 3000);
  });

  it("a create whose ssh session was cut dies at its next progress line and cancels nothing (the re-run adopts)", async () => {
    const slurm = fakeSlurm();
    const bin = slurm.bin;
    const child = spawn("bash", ["-c", job.create], {
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, HOME: slurm.home, FAKE_SLURM: slurm.dir },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      let err = "";
      child.stderr.on("data", (d: Buffer) => {
        err += d.toString();
        // The session drops: both pipes close on the login node's side.
        if (err.includes("submitted job")) {
          child.stdout.destroy();
          child.stderr.destroy();
          resolve();
        }
      });
      child.stdin.end(job.stdin);
    });
    const started = Date.now();
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r("alive"), 15_000))]);
    if (code === "alive") child.kill("SIGKILL");
    expect(code).not.toBe("alive");
    expect(Date.now() - started).toBeLessThan(12_000);
    expect(slurm.scancels()).toEqual([]);
    expect(slurm.queue()).toHaveLength(1);
  }, 30_000);
});
