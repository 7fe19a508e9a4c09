/**
 * Issue 41 on Kubernetes: the router's follower (components/kubernetes/router-follower.ts) beside the
 * REAL routers from the pinned venv: vllm-router 0.1.17 (its /add_worker and /remove_worker) and
 * sglang-router 0.3.2 (its /workers routes, behind the fleet's API key). The control-plane fixture's
 * kwok pods run no processes, so the rendered follower container runs here as the kubelet would run
 * it, against two engine STAND-INS behind the real router; one engine "restarts" as the kubelet
 * restarts a container (its listener gone, then back on the same address with the base weights).
 * The drill: test/kubernetes/router-follower-drill.ts.
 */
import { spawn } from "node:child_process";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  drillRouterArgs,
  followerDrill,
  followerEnv,
  httpEngines,
  k8sContainers,
  kubelet,
  type DrillEngine,
  type FollowerDrill,
} from "../kubernetes/router-follower-drill";
import { freePort, postJson, realSglangRouter, start, stopAll, waitHttp, type Proc } from "../standins-harness";
import { launcherDir, pythonEnv } from "./real-parts";

afterAll(stopAll);

const say = (router: string, d: FollowerDrill) =>
  console.log(
    `[k8s router follower, real ${router}] out ${d.outAfterS.toFixed(1)} s after the engine's listener closed; ` +
      `${d.whileOut.failed}/${d.whileOut.sent} failed and ${d.whileOut.toA} reached it while it served the base weights; ` +
      `back in the router ${d.backAfterS.toFixed(1)} s after it served v2`,
  );

const KEY = "sk-follower-key";
const auth = { authorization: `Bearer ${KEY}` };

/** The SGLang TEST STAND-IN (through the python3 shim) on a fixed port, with the fleet's key. */
class SglangStandin implements DrillEngine {
  private P?: Proc;
  url: string;
  constructor(
    private port: number,
    private extra: string[] = [],
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  /** Starts it (weight version "default", SGLang's before any update). */
  async listen() {
    this.P = start("python3", [
      "-m",
      "sglang.launch_server",
      "--model-path",
      "Qwen/Qwen3-0.6B",
      "--served-model-name",
      "tiny",
      "--host",
      "127.0.0.1",
      "--port",
      String(this.port),
      "--api-key",
      KEY,
      ...this.extra,
    ]);
    await waitHttp(`${this.url}/health`, 200, 30_000, this.P);
  }

  async hits() {
    const r = await fetch(`${this.url}/standin/state`, { headers: auth });
    return ((await r.json()) as { requests: number }).requests;
  }

  /** As a trainer's update sets it: SGLang's update_weights_from_disk with a weight_version. */
  async setVersion(v: string) {
    const r = await postJson(
      `${this.url}/update_weights_from_disk`,
      { model_path: os.tmpdir(), weight_version: v },
      auth,
    );
    expect(r.status, JSON.stringify(r.json)).toBe(200);
  }

  async die() {
    const p = this.P!;
    p.proc.kill("SIGKILL");
    await p.exit;
  }

  async restart() {
    await this.listen();
  }

  async close() {
    if (this.P && this.P.proc.exitCode === null && this.P.proc.signalCode === null) await this.die();
  }
}

describe("the router's follower on Kubernetes, beside the REAL routers", () => {
  it("REAL vllm-router, STAND-IN engines: a restarted engine is out of the router while it serves the base weights and its peer v2 (no request reaches it, none fails), and back within seconds of serving v2", async () => {
    const { dir } = launcherDir(pythonEnv(), "k8s-router-follower", ["vllm-router"]);
    const d = await followerDrill(
      "k8s-multi-replica",
      (port, workers, metrics) => spawn(path.join(dir, "vllm-router"), drillRouterArgs(port, workers, metrics)),
      await httpEngines(),
    );
    say("vllm-router", d);
    expect(d.whileOut).toEqual({ sent: 20, failed: 0, toA: 0 });
    expect(d.outAfterS).toBeLessThan(3);
    expect(d.backAfterS).toBeLessThan(4);
  }, 180_000);

  it("REAL sglang-router holding the API key, SGLang STAND-IN engines: the follower takes a restarted engine out (DELETE /workers/<id>) while it serves the base weights and its peer v2, and back (POST /workers) once it serves v2, with the key from the Secret's variable", async () => {
    const venv = pythonEnv().FLEET_PYENV;
    const engines: [SglangStandin, SglangStandin] = [
      new SglangStandin(await freePort()),
      new SglangStandin(await freePort()),
    ];
    for (const e of engines) {
      await e.listen();
      await e.setVersion("v2");
    }
    const d = await followerDrill(
      "k8s-sglang-wide-ep",
      (port, workers, metrics) =>
        realSglangRouter(venv, [...drillRouterArgs(port, workers, metrics), "--api-key", KEY]).proc,
      { engines, model: "tiny", apiKey: KEY },
    );
    say("sglang-router", d);
    expect(d.log).toMatch(/DELETE \/workers\/[0-9a-f-]+ \(http:\/\/127\.0\.0\.1:\d+\): HTTP 202/);
    expect(d.log).toMatch(/POST \/workers \{"url": "http:\/\/127\.0\.0\.1:\d+"\}: HTTP 202/);
    expect(d.whileOut).toEqual({ sent: 20, failed: 0, toA: 0 });
    expect(d.outAfterS).toBeLessThan(3);
    expect(d.backAfterS).toBeLessThan(4);
  }, 180_000);

  it("REAL sglang-router in P/D mode, SGLang STAND-IN engines (2 prefill, 1 decode): the follower takes a restarted prefill out and tells it again as a prefill with its bootstrap port once it serves v2", async () => {
    const venv = pythonEnv().FLEET_PYENV;
    const follower = k8sContainers("k8s-sglang-wide-ep").find((c) => c.name === "router-follower")!;
    const [python, flag, script, , routes, route, base] = kubelet(follower.command!);
    const boot = [await freePort(), await freePort()];
    const prefills: SglangStandin[] = [];
    for (const b of boot)
      prefills.push(
        new SglangStandin(await freePort(), [
          "--disaggregation-mode",
          "prefill",
          "--disaggregation-bootstrap-port",
          String(b),
        ]),
      );
    const decode = new SglangStandin(await freePort(), ["--disaggregation-mode", "decode"]);
    const all = [...prefills, decode];
    for (const e of all) {
      await e.listen();
      await e.setVersion("v2");
    }
    const port = await freePort();
    const router = `http://127.0.0.1:${port}`;
    const R = realSglangRouter(venv, [
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--prometheus-host",
      "127.0.0.1",
      "--prometheus-port",
      String(await freePort()),
      "--pd-disaggregation",
      "--prefill",
      prefills[0].url,
      String(boot[0]),
      "--prefill",
      prefills[1].url,
      String(boot[1]),
      "--decode",
      decode.url,
      "--policy",
      "round_robin",
      "--api-key",
      KEY,
    ]);
    let log = "";
    const F = spawn(python, [flag, script, router, routes, route, base, ...all.map((e) => e.url)], {
      env: followerEnv(KEY),
    });
    F.stdout.on("data", (d) => (log += d));
    F.stderr.on("data", (d) => (log += d));
    const listedB = async () => {
      try {
        const r = await fetch(`${router}/workers`, { headers: auth });
        const ws = ((await r.json()) as { workers: { url: string; worker_type: string; bootstrap_port?: number }[] })
          .workers;
        return ws.find((w) => w.url === prefills[1].url);
      } catch {
        return undefined;
      }
    };
    const until = async (what: string, f: () => Promise<boolean> | boolean, ms: number) => {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        if (await f()) return;
        await new Promise((ok) => setTimeout(ok, 100));
      }
      throw new Error(`${what}: not within ${ms} ms\n${log}\n${R.stderr().slice(-3000)}`);
    };
    try {
      await until("the router lists the second prefill", async () => (await listedB()) !== undefined, 90_000);
      await prefills[1].die();
      await until(
        "taken out",
        async () => log.includes(`${prefills[1].url} kept out: /health`) && !(await listedB()),
        10_000,
      );
      await prefills[1].restart();
      await until(
        "kept out on the base weights",
        () => log.includes(`${prefills[1].url} kept out: serves the base weights`),
        10_000,
      );
      expect(await listedB()).toBeUndefined();
      await prefills[1].setVersion("v2");
      await until("told again", async () => (await listedB()) !== undefined, 10_000);
      expect(await listedB()).toMatchObject({ worker_type: "prefill", bootstrap_port: boot[1] });
      expect(log).toContain(
        `POST /workers {"url": "${prefills[1].url}", "worker_type": "prefill", "bootstrap_port": ${boot[1]}}: HTTP 202`,
      );
      // Requests are served through the router again (prefill, then decode).
      const r = await postJson(`${router}/v1/completions`, { model: "tiny", prompt: "x", max_tokens: 2 }, auth);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
    } finally {
      F.kill("SIGKILL");
      R.proc.kill("SIGKILL");
      for (const e of all) await e.close();
    }
  }, 180_000);
});
