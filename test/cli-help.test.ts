/**
 * `--help` and `-h` everywhere: every CLI and every fleet verb prints its usage on stdout, says what
 * each of its options does, and exits 0. The compiled CLIs run as their own processes, as
 * `npm run plan|fleet|schema` and `npx vllm-fleet` run them.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ROOT, runBuiltCli } from "./helpers";

type Cli = "plan" | "fleet" | "schema" | "vllm-fleet";

/** Each help and what it must show: its usage line and every option it lists, each with a description. */
const HELPS: { cli: Cli; args: string[]; usage: string; options: string[] }[] = [
  {
    cli: "plan",
    args: [],
    usage: "Usage: plan [options] <stack> [--<key.path> <value> ...]",
    options: ["--json", "--out <dir>", "--<key.path> <value>"],
  },
  { cli: "fleet", args: [], usage: "Usage: fleet <verb> [options]", options: [] },
  {
    cli: "fleet",
    args: ["status"],
    usage: "Usage: fleet status [options] [stack]",
    options: [
      "--json",
      "--pulumi-config <file>",
      "--endpoints <file>",
      "--login <[user@]host[:port]>",
      "-i, --identity <key file>",
      "--ssh-option <Key=Value>",
      "--local",
      "--<key.path> <value>",
    ],
  },
  {
    cli: "fleet",
    args: ["metrics"],
    usage: "Usage: fleet metrics [options] [stack]",
    options: [
      "--json",
      "--watch",
      "--interval <seconds>",
      "--login <[user@]host[:port]>",
      "--local",
      "--<key.path> <value>",
    ],
  },
  {
    cli: "fleet",
    args: ["logs"],
    usage: "Usage: fleet logs [options] [stack]",
    options: [
      "--process <id>",
      "-n <lines>",
      "--job",
      "--login <[user@]host[:port]>",
      "--local",
      "--<key.path> <value>",
    ],
  },
  {
    cli: "fleet",
    args: ["endpoints"],
    usage: "Usage: fleet endpoints [options] [stack]",
    options: ["--json", "--endpoints <file>", "--login <[user@]host[:port]>", "--<key.path> <value>"],
  },
  {
    cli: "fleet",
    args: ["list"],
    usage: "Usage: fleet list [options] [model]",
    options: ["--json", "--catalog <file>"],
  },
  { cli: "schema", args: [], usage: "Usage: schema [options]", options: [] },
  { cli: "vllm-fleet", args: [], usage: "Usage: vllm-fleet <command> [options]", options: [] },
  {
    cli: "vllm-fleet",
    args: ["plan"],
    usage: "Usage: vllm-fleet plan [options] <stack>",
    options: ["--json", "--out <dir>"],
  },
  {
    cli: "vllm-fleet",
    args: ["fleet", "status"],
    usage: "Usage: vllm-fleet fleet status [options] [stack]",
    options: ["--json", "--login <[user@]host[:port]>"],
  },
  { cli: "vllm-fleet", args: ["schema"], usage: "Usage: vllm-fleet schema [options]", options: [] },
];

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe.each(HELPS)("$cli $args --help", ({ cli, args, usage, options }) => {
  it.each(["--help", "-h"])("%s: usage on stdout, nothing on stderr, exit 0", (flag) => {
    const r = runBuiltCli(cli, [...args, flag]);
    expect(r.error).toBeUndefined();
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout.startsWith(usage), r.stdout).toBe(true);
    // Every option is listed with what it does: its flags, two spaces or more, then words.
    for (const o of [...options, "-h, --help"])
      expect(r.stdout, `${o} without a description`).toMatch(new RegExp(`^  ${escapeRe(o)}  +\\w`, "m"));
  });
});

describe("help lists", () => {
  it("fleet --help names every verb with what it does", () => {
    const r = runBuiltCli("fleet", ["--help"]);
    for (const verb of ["status", "metrics", "logs", "endpoints", "list"])
      expect(r.stdout).toMatch(new RegExp(`^  ${verb} \\[options\\] \\[(stack|model)\\] +\\w`, "m"));
    expect(r.stdout).toContain("Exit status: 0 when the question was answered");
  });

  it("vllm-fleet --help names plan, fleet and schema", () => {
    const r = runBuiltCli("vllm-fleet", ["--help"]);
    for (const cmd of ["plan", "fleet", "schema"]) expect(r.stdout).toMatch(new RegExp(`^  ${cmd}\\b.*  +\\w`, "m"));
  });

  it("plan --help lists the shipped stacks", () => {
    const r = runBuiltCli("plan", ["--help"]);
    for (const s of ["single-node", "k8s-llm-d-pd", "disaggregated-x3"]) expect(r.stdout).toContain(s);
  });

  it("--help wins over a stack and overrides: nothing is planned", () => {
    const r = runBuiltCli("plan", ["single-node", "--server.port", "8001", "--help"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: plan /);
    expect(r.stdout).not.toContain("endpoints:");
  });

  it("lines fit 80 columns", () => {
    for (const { cli, args } of HELPS) {
      const long = runBuiltCli(cli, [...args, "--help"])
        .stdout.split("\n")
        .filter((l) => l.length > 80);
      expect(long, `${cli} ${args.join(" ")}`).toEqual([]);
    }
  });
});

describe("usage errors still exit 2, on stderr", () => {
  it.each([
    ["plan", []],
    ["plan", ["--out"]],
    ["fleet", []],
    ["fleet", ["frobnicate"]],
    ["fleet", ["logs", "single-node", "-n"]],
    ["schema", ["extra"]],
    ["vllm-fleet", []],
    ["vllm-fleet", ["frobnicate"]],
  ] as [Cli, string[]][])("%s %j", (cli, args) => {
    const r = runBuiltCli(cli, args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    // Our usage errors and commander's point at --help; vllm-fleet alone shows the whole help.
    expect(r.stderr).toMatch(/--help shows the usage|^Usage: vllm-fleet /m);
  });
});

describe("through npm, as the README says", () => {
  it.each([
    ["plan", "--help"],
    ["fleet", "--help"],
    ["fleet", "status", "--help"],
  ])("npm run %s -- %s ...: exit 0, usage on stdout", (script, ...args) => {
    const r = spawnSync("npm", ["run", "-s", script, "--", ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Usage: ${script} `));
  });
});

describe("a reader that stops early", () => {
  // `vllm-fleet plan x | head -1`: the pipe closes under the CLI; it ends quietly with status 0.
  // `true` exits before node has started, so every write meets a closed pipe.
  it("plan piped into a reader that has already gone exits 0 without a stack trace", () => {
    const plan = `${JSON.stringify(process.execPath)} dist/bin/plan.js disaggregated-x3`;
    const r = spawnSync("bash", ["-c", `set -o pipefail; ${plan} | true`], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(r.status).toBe(0);
  });
});
