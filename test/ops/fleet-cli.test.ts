import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { fleetEndpoints } from "../../components/outputs";
import { runFleetCli } from "../helpers";

const run = runFleetCli;

describe("fleet CLI (no cluster needed)", () => {
  it("list shows the catalog; one entry by alias; a user catalog merges over it", async () => {
    const all = await run(["list", "--json"]);
    expect(all.code).toBe(0);
    expect(JSON.parse(all.out)["Qwen/Qwen3-8B"]).toMatchObject({
      family: "Qwen3",
      launch: { tp: 1 },
      arch: { layers: 36, kv_heads: 8, head_dim: 128 },
    });
    const one = await run(["list", "qwen3-8b"]);
    expect(one.out).toMatch(/^Qwen\/Qwen3-8B \(Qwen3, LLM\)/);
    expect(one.out).toMatch(/arch\.layers\s+│ 36/);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-cat-"));
    fs.writeFileSync(
      path.join(dir, "models.yaml"),
      "models:\n  Qwen/Qwen3-8B:\n    launch:\n      max_model_len: 16384\n",
    );
    const merged = JSON.parse(
      (await run(["list", "Qwen/Qwen3-8B", "--json", "--catalog", path.join(dir, "models.yaml")])).out,
    );
    expect(merged.launch).toMatchObject({ max_model_len: 16384, tp: 1, reasoning_parser: "qwen3" });
    const missing = await run(["list", "no-such-model"]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('"no-such-model" is not in the catalog');
  });

  it("endpoints and status read `pulumi stack output --json`; an unreachable engine is LAUNCHING", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-out-"));
    const file = path.join(dir, "outputs.json");
    const islands = [{ island: 0, routerUrl: null, adminUrls: ["http://127.0.0.1:9/v1"], roles: ["replica"] }];
    fs.writeFileSync(file, JSON.stringify({ planned: { model: "m", target: "kubernetes" }, islands }));
    const ep = await run(["endpoints", "--endpoints", file, "--json"]);
    expect(ep.code, ep.err).toBe(0);
    expect(JSON.parse(ep.out)).toEqual(
      JSON.parse(
        JSON.stringify(fleetEndpoints({ model: "m", target: "kubernetes", engine: "vllm" }, islands as any, false)),
      ),
    );
    const st = await run(["status", "--endpoints", file, "--json"]);
    expect(st.code, st.err).toBe(0);
    expect(JSON.parse(st.out)).toMatchObject({
      status: "LAUNCHING",
      islands: [{ processes: [{ id: "engine0", status: "LAUNCHING", url: "http://127.0.0.1:9/v1" }] }],
    });
  });

  it("usage errors exit 2 and say what is wrong", async () => {
    expect(await run(["frobnicate"])).toMatchObject({
      code: 2,
      err: expect.stringContaining('unknown verb "frobnicate"'),
    });
    expect(await run(["status"])).toMatchObject({ code: 2, err: expect.stringContaining("name a stack") });
    expect(await run(["status", "no-such-stack"])).toMatchObject({
      code: 2,
      err: expect.stringContaining('no stack "no-such-stack"'),
    });
    expect(await run(["metrics", "single-node", "--login", "a@b", "--interval", "0"])).toMatchObject({
      code: 2,
      err: expect.stringContaining("--interval must be a positive"),
    });
    expect(await run(["logs", "k8s-single-node", "--job"])).toMatchObject({
      code: 2,
      err: expect.stringContaining("--job reads a batch job's output: a Kubernetes fleet has none"),
    });
    expect(
      await run([
        "logs",
        "single-node",
        "--login",
        "a@b",
        "-i",
        "/no/key",
        "--ssh-option",
        "A=b",
        "--ssh-option",
        "C=d",
        "-n",
        "0",
      ]),
    ).toMatchObject({ code: 2, err: expect.stringContaining("-n must be a positive whole number") });
    expect(await run(["status", "single-node", "other"])).toMatchObject({
      code: 2,
      err: expect.stringContaining("one stack, not 2: single-node other"),
    });
    expect(await run(["status", "single-node", "--login"])).toMatchObject({
      code: 2,
      err: expect.stringContaining("argument missing"),
    });
    // Each error points at the verb's own help.
    expect((await run(["metrics", "single-node", "--login", "a@b", "--interval", "0"])).err).toContain(
      "(fleet metrics --help shows the usage)",
    );
  });

  describe("says it could not see, and exits 1, instead of reporting a state it did not observe", () => {
    it("endpoints of a planned SLURM fleet with no way to reach the login node", async () => {
      const r = await run(["endpoints", "single-node", "--json"]);
      expect(r).toMatchObject({ code: 1, out: "" });
      expect(r.err).toContain("nothing says how to read it: pass --login");
    });

    it("status --local where squeue is missing or failing", async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-noslurm-"));
      fs.writeFileSync(
        path.join(dir, "squeue"),
        "#!/bin/bash\necho 'squeue: error: Invalid user for SlurmUser slurm' >&2\nexit 1\n",
        {
          mode: 0o755,
        },
      );
      const saved = process.env.PATH;
      process.env.PATH = `${dir}:${saved}`;
      try {
        const r = await run(["status", "single-node", "--local", "--json"]);
        expect(r).toMatchObject({ code: 1, out: "" });
        expect(r.err).toContain("could not observe the SLURM job, so no state is reported");
        expect(r.err).toContain("squeue: error: Invalid user for SlurmUser slurm");
        expect(r.err).not.toContain("SHUTDOWN");
      } finally {
        process.env.PATH = saved;
      }
    });

    it("status of a Kubernetes stack whose API server does not answer: the request and the error", async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-kc-"));
      const kubeconfig = path.join(dir, "config");
      fs.writeFileSync(
        kubeconfig,
        [
          "apiVersion: v1",
          "kind: Config",
          "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9', insecure-skip-tls-verify: true}}]",
          "users: [{name: u, user: {token: not-a-real-token}}]",
          "contexts: [{name: x, context: {cluster: c, user: u}}]",
          "current-context: x",
        ].join("\n"),
      );
      const r = await run(["status", "k8s-single-node", "--json", "--kubeconfig", kubeconfig]);
      expect(r).toMatchObject({ code: 1, out: "" });
      expect(r.err).toMatch(/GET https:\/\/127\.0\.0\.1:9\/\S+: connect ECONNREFUSED 127\.0\.0\.1:9/);
      expect(r.err).not.toContain("not-a-real-token");
      expect(r.err).not.toMatch(/SHUTDOWN|PENDING|LAUNCHING|READY/);
    });

    it("status --endpoints of a Kubernetes fleet from outside the cluster, where its names do not resolve", async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-k8s-ep-"));
      const host = "k8s-single-node-i0-router.inference.svc.cluster.local";
      const file = path.join(dir, "outputs.json");
      fs.writeFileSync(
        file,
        JSON.stringify({
          planned: { model: "Qwen/Qwen3-8B", target: "kubernetes" },
          islands: [
            {
              island: 0,
              routerUrl: `http://${host}:8000/v1`,
              adminUrls: [
                `http://k8s-single-node-i0-replica0-0.k8s-single-node-i0-engines.inference.svc.cluster.local:8100/v1`,
              ],
              roles: ["replica"],
            },
          ],
        }),
      );
      const r = await run(["status", "--endpoints", file, "--json"]);
      expect(r).toMatchObject({ code: 1, out: "" });
      expect(r.err).toMatch(
        /none of the fleet's in-cluster names resolves from here \(k8s-single-node-[^ ]*\.inference\.svc/,
      );
      expect(r.err).toContain("kubectl get pods,leaderworkersets -n inference");
    });

    it("endpoints when an island has not written endpoints.json yet", async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-noep-"));
      // A login shell stand-in: the endpoints script runs locally and finds no file.
      const r = await run(["endpoints", "single-node", "--local", "--output_dir", dir]);
      expect(r.code, r.err).toBe(1);
      expect(r.out).toBe("");
      expect(r.err).toContain("island(s) 0: no endpoints.json yet");
    });
  });

  it("--help and -h print the verb's usage on stdout, exit 0, and run nothing", async () => {
    for (const args of [
      ["--help"],
      ["-h"],
      ["status", "--help"],
      ["metrics", "-h"],
      ["logs", "single-node", "--help"],
      ["endpoints", "--help"],
      ["list", "--help"],
    ]) {
      const r = await run(args);
      expect(r, args.join(" ")).toMatchObject({ code: 0, err: "" });
      expect(r.out).toMatch(new RegExp(`^Usage: fleet ${args[0].startsWith("-") ? "<verb>" : args[0]} `));
    }
  });
});
