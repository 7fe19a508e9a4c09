/**
 * TEST STAND-IN SGLang engines (test/fixtures/standins, reached through their python3 shim) behind
 * the REAL sglang-router of the pinned venv (test/e2e/python-env.sh): what the router asks a worker
 * at start, what it adds to the requests it forwards, its --api-key and --pd-disaggregation modes.
 * In the end-to-end suite, not the unit suite: it needs the pinned venv, and sglang-router's own
 * Python start (6 to 37 s here) is a real program's start.
 */
import * as fs from "node:fs";
import OpenAI from "openai";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, getJson, postJson, realSglangRouter, sglServer, sleep, stopAll } from "../standins-harness";
import { pythonVenv } from "./python-env";

const VENV = pythonVenv();

afterAll(stopAll);

describe("SGLang stand-ins behind the REAL sglang-router (pinned venv)", () => {
  /** The real router, started as the fleet starts it: `python3 -m sglang_router.launch_router` through the shim. */
  async function realRouter(args: string[], headers: Record<string, string> = {}) {
    const [port, prom] = await Promise.all([freePort(), freePort()]);
    const R = realSglangRouter(VENV, [
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--prometheus-host",
      "127.0.0.1",
      "--prometheus-port",
      String(prom),
      ...args,
    ]);
    const base = `http://127.0.0.1:${port}`;
    // The router listens at once and registers workers in the background (503 until then); its own
    // Python start took 6-37 s on a loaded 2-core machine.
    const deadline = Date.now() + 90_000;
    for (;;) {
      const ok = await fetch(`${base}/v1/models`, { headers })
        .then(
          async (r) => r.status === 200 && ((await r.json()) as any).data.some((m: { id: string }) => m.id === "tiny"),
        )
        .catch(() => false);
      if (ok) break;
      if (R.proc.exitCode !== null || Date.now() > deadline)
        throw new Error(`sglang-router did not register the workers:\n${R.stderr().slice(-3000)}`);
      await sleep(200);
    }
    // the real router retitles itself (like vllm-router's vllm::router): what a node cleanup by name sees
    expect(fs.readFileSync(`/proc/${R.proc.pid}/cmdline`, "utf8").split("\0")[0]).toBe("sglang::router");
    return { R, base };
  }

  it("regular mode: the router's start-up calls, then openai completions and chat through it", async () => {
    const w1 = await sglServer(["--served-model-name", "tiny"]);
    const w2 = await sglServer(["--served-model-name", "tiny"]);
    const { base } = await realRouter(["--worker-urls", w1.base, w2.base, "--policy", "round_robin"]);
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "none", maxRetries: 0 });
    const c = await client.completions.create({
      model: "tiny",
      prompt: "the of and",
      max_tokens: 4,
      logprobs: 1,
      return_token_ids: true,
    } as any);
    expect((c.choices[0] as any).token_ids.length).toBe(c.usage!.completion_tokens);
    expect(c.choices[0].logprobs!.tokens!.length).toBe(c.usage!.completion_tokens);
    const chat = await client.chat.completions.create({
      model: "tiny",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 4,
      logprobs: true,
      top_logprobs: 2,
    });
    expect(chat.choices[0].logprobs!.content!.length).toBe(chat.usage!.completion_tokens);
    const s1 = await getJson(`${w1.base}/standin/state`);
    const s2 = await getJson(`${w2.base}/standin/state`);
    // sglang-router 0.3.2 registers a worker with GET /health and /server_info, never the /get_ forms;
    // its /model_info call comes only sometimes (seen, and not seen within 30 s, on this machine).
    for (const s of [s1, s2]) {
      expect(Object.keys(s.gets)).toEqual(expect.arrayContaining(["/health", "/server_info"]));
      expect(Object.keys(s.gets).filter((g) => g.startsWith("/get_"))).toEqual([]);
    }
    expect(s1.requests + s2.requests).toBe(2); // round robin: one each
    expect(s1.requests).toBe(1);
    // what the router added to the OpenAI request it forwarded
    const chatState = [s1, s2].find((s) => s.last_request.route === "/v1/chat/completions");
    expect(chatState.last_request.fields).toEqual(
      expect.arrayContaining(["messages", "max_completion_tokens", "logprobs", "top_logprobs"]),
    );
  });

  it("--api-key: the router sends the key to keyed workers and demands it from clients on the inference routes", async () => {
    const w = await sglServer(["--served-model-name", "tiny", "--api-key", "sgl-key"]);
    const auth = { authorization: "Bearer sgl-key" };
    const { base } = await realRouter(["--worker-urls", w.base, "--api-key", "sgl-key"], auth);
    // it answers /v1/models itself, without the key; the inference routes need it
    expect((await fetch(`${base}/v1/models`)).status).toBe(200);
    const none = await postJson(`${base}/v1/completions`, { model: "tiny", prompt: "x", max_tokens: 2 });
    expect(none.status).toBe(401);
    const ok = new OpenAI({ baseURL: `${base}/v1`, apiKey: "sgl-key", maxRetries: 0 });
    expect((await ok.completions.create({ model: "tiny", prompt: "x", max_tokens: 2 })).choices).toHaveLength(1);
    const bad = new OpenAI({ baseURL: `${base}/v1`, apiKey: "nope", maxRetries: 0 });
    await expect(bad.completions.create({ model: "tiny", prompt: "x", max_tokens: 2 })).rejects.toMatchObject({
      status: 401,
    });
    // discovery went through with the key: the worker was asked for its /server_info and /model_info
    const gets = ((await (await fetch(`${w.base}/standin/state`, { headers: auth })).json()) as any).gets;
    expect(Object.keys(gets)).toEqual(expect.arrayContaining(["/server_info", "/model_info"]));
  });

  it("--pd-disaggregation: bootstrap fields to both sides, the decode meets the prefill at its bootstrap server", async () => {
    const bp = await freePort();
    const named = ["--served-model-name", "tiny"];
    const { base: prefill } = await sglServer([
      ...named,
      "--disaggregation-mode",
      "prefill",
      "--disaggregation-bootstrap-port",
      String(bp),
    ]);
    const { base: decode } = await sglServer([...named, "--disaggregation-mode", "decode"]);
    const { base } = await realRouter([
      "--pd-disaggregation",
      "--prefill",
      prefill,
      String(bp),
      "--decode",
      decode,
      "--policy",
      "round_robin",
    ]);
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "none", maxRetries: 0 });
    const c = await client.completions.create({
      model: "tiny",
      prompt: "the of and",
      max_tokens: 4,
      ignore_eos: true,
    } as any);
    expect(c.usage!.completion_tokens).toBe(4); // the decode's answer, not the prefill's one token
    const chat = await client.chat.completions.create({
      model: "tiny",
      messages: [{ role: "user", content: "disaggregate me" }],
      max_tokens: 4,
    });
    expect(chat.choices[0].message.content!.length).toBeGreaterThan(0);
    const ps = await getJson(`${prefill}/standin/state`);
    const ds = await getJson(`${decode}/standin/state`);
    expect(ps.kv_transfers).toBe(2);
    expect(ds.kv_transfers).toBe(2);
    // the router sends the same request, with the same bootstrap fields, to both
    expect(ps.last_request.bootstrap_room).toBe(ds.last_request.bootstrap_room);
    expect(ds.last_request).toMatchObject({ bootstrap_host: "127.0.0.1", bootstrap_port: bp });
    expect(ds.last_request.bootstrap_room).toMatch(/^\d+$/);
  });
});
