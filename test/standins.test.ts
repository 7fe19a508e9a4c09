// Tests for the TEST STAND-IN executables in test/fixtures/standins (not the real vLLM, vllm-router,
// llm-d or Mooncake). They prove that the stand-ins refuse bad argv the way the upstream manifests
// say the real programs would, and that they serve the real HTTP surface (checked with the
// official `openai` client).
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import OpenAI from "openai";
import { loadConfigFile, loadConfigText } from "../components/config";
import { renderIslandScript } from "../components/slurm";
import { buildPlan } from "../components/planner";
import { showValue } from "../components/plan/values";
import {
  BIN,
  baseEnv,
  freePort,
  getJson,
  metric,
  postJson,
  runToExit,
  sglServer,
  SGL,
  sleep,
  start,
  stopAll,
  TINY,
  waitHttp,
  waitTcp,
} from "./standins-harness";

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "standins-test-"));
// Stand-ins are real processes, often many at once: on a loaded 2-core machine a test may need more
// than the suite's 30 s (runToExit bounds each program at 30 s; an explicit bound below stays).
vi.setConfig({ testTimeout: 90_000 });

afterAll(async () => {
  await stopAll();
  fs.rmSync(TMP, { recursive: true, force: true });
});

// =================================================================================================
describe("flag checking against the upstream manifests", () => {
  const CHECK = { STANDIN_CHECK_ONLY: "1" };

  async function expectOk(prog: string, args: string[], env: Record<string, string> = {}) {
    const r = await runToExit(prog, args, { ...CHECK, ...env });
    expect(r.code, `${prog} ${args.join(" ")}\n${r.stderr}`).toBe(0);
  }
  async function expectRejected(prog: string, args: string[], named: string, env: Record<string, string> = {}) {
    const r = await runToExit(prog, args, { ...CHECK, ...env });
    expect(r.code, `${prog} ${args.join(" ")} should exit 2\n${r.stderr}`).toBe(2);
    expect(r.stderr).toContain(`standin ${prog}: unrecognized/invalid argument`);
    expect(r.stderr).toContain(named);
  }

  it("vllm serve: accepts prime-rl style argv, rejects every kind of bad flag", async () => {
    await Promise.all([
      expectOk("vllm", [
        "serve",
        "Qwen/Qwen3-0.6B",
        "--host",
        "0.0.0.0",
        "--port",
        "8100",
        "--tensor-parallel-size",
        "2",
        "--data-parallel-size",
        "4",
        "--data-parallel-size-local",
        "1",
        "--data-parallel-rank",
        "1",
        "--data-parallel-address",
        "10.0.0.1",
        "--data-parallel-rpc-port",
        "13345",
        "--api-server-count",
        "1",
        "--enable-expert-parallel",
        "--all2all-backend",
        "deepep_low_latency",
        "--kv-transfer-config",
        '{"kv_connector":"NixlConnector","kv_role":"kv_both","kv_connector_extra_config":{"num_threads":1}}',
        "--additional-config",
        '{"fp32_lm_head":true,"fp32_router_logits":true}',
        "--logprobs-mode",
        "processed_logprobs",
        "--compilation-config",
        '{"cudagraph_mode":"FULL_DECODE_ONLY"}',
        "--max_model_len",
        "32k",
        "--no-enable-prefix-caching",
      ]),
      expectOk("vllm", [
        "serve",
        "--model",
        "m",
        "-tp=2",
        "-O3",
        "--compilation-config.mode",
        "3",
        "--served-model-name",
        "a",
        "b",
        "--max-model-len",
        "auto",
      ]),
      expectRejected("vllm", ["serve", "m", "--not-a-flag", "1"], "--not-a-flag"),
      expectRejected("vllm", ["serve", "m", "--dtype", "float8"], "--dtype"),
      expectRejected("vllm", ["serve", "m", "--tensor-parallel-size", "two"], "--tensor-parallel-size"),
      expectRejected("vllm", ["serve", "m", "--gpu-memory-utilization", "high"], "--gpu-memory-utilization"),
      expectRejected("vllm", ["serve", "m", "--max-num-seq", "4"], "--max-num-seq"),
      expectRejected("vllm", ["serve", "m", "--enforce-eager=true"], "--enforce-eager"),
      expectRejected("vllm", ["serve", "m", "--no-dtype"], "--no-dtype"),
      expectRejected("vllm", ["serve", "m", "--compilation-config", "{not json"], "--compilation-config"),
      expectRejected(
        "vllm",
        ["serve", "m", "--kv-transfer-config", '{"kv_connector":"P2pNcclConnector","kv_role":"kv_both"}'],
        "P2pNcclConnector",
      ),
      expectRejected(
        "vllm",
        ["serve", "m", "--kv-transfer-config", '{"kv_connector":"NixlConnector","kv_role":"kv_both","bogus":1}'],
        "bogus",
      ),
      expectRejected("vllm", ["serve", "m", "--kv-transfer-config", '{"kv_connector":"NixlConnector"}'], "kv_role"),
      expectRejected(
        "vllm",
        [
          "serve",
          "m",
          "--kv-transfer-config",
          '{"kv_connector":"MultiConnector","kv_role":"kv_both","kv_connector_extra_config":{"connectors":[{"kv_connector":"NixlConnector","kv_role":"kv_both"},{"kv_connector":"NotAConnector","kv_role":"kv_both"}]}}',
        ],
        "NotAConnector",
      ),
      expectRejected("vllm", ["serve", "m", "extra-positional"], "extra-positional"),
      expectRejected("vllm", ["serve"], "model"),
      expectRejected("vllm", ["Qwen/Qwen3-0.6B"], "Qwen/Qwen3-0.6B"),
      expectRejected("vllm", ["serve", "m", "--port"], "--port"),
    ]);
  });

  it("vllm serve --config FILE.yaml: keys are validated as flags", async () => {
    const ok = path.join(TMP, "serve-ok.yaml");
    fs.writeFileSync(
      ok,
      "model: Qwen/Qwen3-0.6B\ntensor_parallel_size: 2\nenforce_eager: true\nkv_transfer_config:\n  kv_connector: NixlConnector\n  kv_role: kv_both\n",
    );
    const bad = path.join(TMP, "serve-bad.yaml");
    fs.writeFileSync(bad, "tensor_parallel_size: 2\nnot_a_vllm_flag: 1\n");
    await expectOk("vllm", ["serve", "--config", ok, "--port", "8100"]);
    await expectRejected("vllm", ["serve", "m", "--config", bad], "--not-a-vllm-flag");
  });

  it("vllm serve: Mooncake connector needs a readable MOONCAKE_CONFIG_PATH (start-up error, exit 1)", async () => {
    const good = path.join(TMP, "mooncake-ok.json");
    fs.writeFileSync(
      good,
      JSON.stringify({
        mode: "standalone-store",
        master_server_address: "h:50051",
        metadata_server: "http://h:8080/metadata",
      }),
    );
    const kv = ["serve", "m", "--kv-transfer-config", '{"kv_connector":"MooncakeStoreConnector","kv_role":"kv_both"}'];
    await expectOk("vllm", kv, { MOONCAKE_CONFIG_PATH: good });
    const missing = await runToExit("vllm", kv, { ...CHECK, MOONCAKE_CONFIG_PATH: path.join(TMP, "nope.json") });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("MOONCAKE_CONFIG_PATH");
    const unset = await runToExit("vllm", kv, CHECK);
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain("MOONCAKE_CONFIG_PATH");
  });

  it("vllm serve: VLLM_RPC_BASE_PATH must be an existing directory short enough for IPC sockets (exit 1)", async () => {
    const dir = fs.mkdtempSync(path.join(TMP, "rpc-"));
    await expectOk("vllm", ["serve", "m"], { VLLM_RPC_BASE_PATH: dir });
    const missing = await runToExit("vllm", ["serve", "m"], { ...CHECK, VLLM_RPC_BASE_PATH: path.join(dir, "nope") });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("No such file or directory");
    const long = path.join(dir, "x".repeat(80));
    fs.mkdirSync(long);
    const tooLong = await runToExit("vllm", ["serve", "m"], { ...CHECK, VLLM_RPC_BASE_PATH: long });
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toContain("File name too long");
  });

  it("vllm-router: clap rules over the flags common to all variants", async () => {
    await Promise.all([
      expectOk("vllm-router", [
        "--policy",
        "consistent_hash",
        "--host",
        "0.0.0.0",
        "--port",
        "8000",
        "--request-id-headers",
        "x-session-id",
        "--prometheus-port",
        "29000",
        "--worker-startup-timeout-secs",
        "4200",
        "--log-level",
        "debug",
        "--worker-urls",
        "http://h0:8100",
        "http://h0:8101",
      ]),
      expectOk("vllm-router", [
        "--policy",
        "round_robin",
        "--vllm-pd-disaggregation",
        "--prefill",
        "http://p:8100",
        "--prefill",
        "http://p:8101",
        "9000",
        "--decode",
        "http://d:8200",
      ]),
      expectRejected("vllm-router", ["--worker-url", "http://h0:8100"], "--worker-url"),
      // No release the fleet plans for has rendezvous_hash (upstream main only); PrimeIntellect's
      // v0.2.1 policies are accepted: the stand-in then behaves as that release.
      expectRejected("vllm-router", ["--policy", "rendezvous_hash"], "--policy"),
      expectOk("vllm-router", ["--policy", "sticky_least_loaded", "--worker-urls", "http://h0:8100"]),
      expectRejected("vllm-router", ["--log-level", "warn"], "--log-level"),
      expectRejected("vllm-router", ["--port", "8000", "--port", "8001"], "--port"),
      expectRejected("vllm-router", ["--port", "eighty"], "--port"),
      expectRejected("vllm-router", ["--eviction-interval", "5"], "--eviction-interval"),
      expectRejected("vllm-router", ["--disable-retries=true"], "--disable-retries"),
      expectRejected("vllm-router", ["--prefill"], "--prefill"),
    ]);
  });

  it("epp: pflag rules (bools only as --name or --name=false)", async () => {
    const ep = path.join(TMP, "flags-endpoints.yaml");
    fs.writeFileSync(ep, 'endpoints:\n- {name: a, address: 10.0.0.1, port: "8100"}\n');
    const cfg = path.join(TMP, "flags-epp.yaml");
    fs.writeFileSync(
      cfg,
      `kind: EndpointPickerConfig\nplugins:\n- type: file-discovery\n  parameters: {path: ${ep}}\n- type: max-score-picker\n`,
    );
    const good = [
      "--pool-name",
      "prime-rl",
      "--pool-namespace",
      "slurm",
      "--config-file",
      cfg,
      "--grpc-port",
      "9002",
      "--grpc-health-port",
      "9013",
      "--metrics-port",
      "9090",
      "--secure-serving=false",
      "--metrics-endpoint-auth=false",
      "--tracing=false",
    ];
    await Promise.all([
      expectOk("epp", good),
      expectRejected("epp", [...good, "--secure-serving", "false"], "--secure-serving=false"),
      expectRejected("epp", ["--grpc-port", "abc"], "--grpc-port"),
      expectRejected("epp", ["-pool-name", "x"], "-pool-name"),
      expectRejected("epp", ["--pool", "x"], "--pool"),
      expectRejected("epp", ["--refresh-metrics-interval", "50"], "--refresh-metrics-interval"),
      expectRejected("epp", ["--zap-encoder", "xml"], "--zap-encoder"),
    ]);
  });

  it("mooncake, pd-sidecar, envoy: gflags / argparse / prime-rl-only flag sets", async () => {
    await Promise.all([
      expectOk("mooncake_master", [
        "-rpc_port=50051",
        "-enable_http_metadata_server",
        "-http_metadata_server_host=0.0.0.0",
        "-http_metadata_server_port=8080",
        "-default_kv_lease_ttl=3600000",
        "-enable_offload=true",
        "-root_fs_dir=/tmp/x",
      ]),
      expectRejected("mooncake_master", ["-rpc-port=50051"], "rpc-port"),
      expectRejected("mooncake_master", ["-rpc_port=abc"], "rpc_port"),
      expectRejected("mooncake_master", ["-enable_http_metadata_server=maybe"], "enable_http_metadata_server"),
      expectRejected("mooncake_master", ["-log_to_stderr"], "log_to_stderr"),
      expectOk("mooncake_client", [
        "-host=10.0.0.1",
        "-port=50052",
        "-master_server_address=h:50051",
        "-metadata_server=http://h:8080/metadata",
        "-protocol=rdma",
        "-global_segment_size=1073741824",
        "-device_names=mlx5_0",
      ]),
      expectRejected("mooncake_client", ["-master_address=h:50051"], "master_address"),
      expectRejected("mooncake_client", ["-protocol=carrier-pigeon"], "-protocol"),
      expectOk("mooncake_http_metadata_server", ["--port", "8080", "--host", "0.0.0.0", "--log-level", "INFO"]),
      expectRejected("mooncake_http_metadata_server", ["--log-level", "info"], "--log-level"),
      expectRejected("mooncake_http_metadata_server", ["--po", "8080"], "--po"),
      expectOk("pd-sidecar", [
        "--port",
        "8300",
        "--vllm-port",
        "8200",
        "--kv-connector",
        "nixlv2",
        "--secure-proxy=false",
        "--enable-ssrf-protection=false",
        "--inference-pool",
        "prime-rl",
        "--data-parallel-size",
        "2",
      ]),
      expectRejected("pd-sidecar", ["--port", "8300", "--cert-path", "/x"], "cert-path"),
      expectRejected("pd-sidecar", ["--port", "eighty"], "--port"),
      expectRejected("envoy", ["--config-path", "/x.yaml"], "--config-path"),
      expectRejected("envoy", ["-c", "/x.yaml", "--log-level", "loud"], "--log-level"),
    ]);
  });
});

// =================================================================================================
describe("vllm fleet behind the vllm-router stand-in (openai client)", () => {
  let e1: string, e2: string, router: string, promPort: number;
  let client: OpenAI;
  const recordDir = path.join(TMP, "records");

  beforeAll(async () => {
    const [p1, p2, rp, pp] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    e1 = `http://127.0.0.1:${p1}`;
    e2 = `http://127.0.0.1:${p2}`;
    promPort = pp;
    const common = [
      "--host",
      "127.0.0.1",
      "--served-model-name",
      "qwen",
      "--max-model-len",
      "4096",
      "--enable-lora",
      "--max-loras",
      "2",
    ];
    const env = {
      STANDIN_RECORD_DIR: recordDir,
      VLLM_ALLOW_RUNTIME_LORA_UPDATING: "1",
      HF_TOKEN: "hf_supersecret",
      CUDA_VISIBLE_DEVICES: "0,1",
    };
    const a = start("vllm", ["serve", "Qwen/Qwen3-0.6B", "--port", String(p1), ...common], env);
    const b = start("vllm", ["serve", "Qwen/Qwen3-0.6B", "--port", String(p2), ...common], {
      ...env,
      CUDA_VISIBLE_DEVICES: "2,3",
    });
    // the router is started before the engines are up: it must wait for their /health itself
    const r = start("vllm-router", [
      "--policy",
      "consistent_hash",
      "--host",
      "127.0.0.1",
      "--port",
      String(rp),
      "--request-id-headers",
      "x-session-id",
      "--prometheus-port",
      String(pp),
      "--worker-startup-timeout-secs",
      "20",
      "--log-level",
      "debug",
      "--worker-urls",
      e1,
      e2,
    ]);
    router = `http://127.0.0.1:${rp}`;
    await Promise.all([
      waitHttp(`${e1}/health`, 200, 10000, a),
      waitHttp(`${e2}/health`, 200, 10000, b),
      waitHttp(`${router}/health`, 200, 10000, r),
    ]);
    client = new OpenAI({ baseURL: `${router}/v1`, apiKey: "not-needed", maxRetries: 0, timeout: 10000 });
  });

  it("lists the served model through the router", async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toContain("qwen");
    expect((models.data[0] as any).max_model_len).toBe(4096);
  });

  it("completions with logprobs and return_token_ids", async () => {
    const c = (await client.completions.create({
      model: "qwen",
      prompt: "The quick brown fox jumps over the lazy dog",
      max_tokens: 6,
      logprobs: 3,
      return_token_ids: true,
    } as OpenAI.CompletionCreateParamsNonStreaming)) as any;
    const ch = c.choices[0];
    expect(ch.text.length).toBeGreaterThan(0);
    expect(ch.logprobs.tokens.length).toBe(c.usage.completion_tokens);
    expect(Object.keys(ch.logprobs.top_logprobs[0]).length).toBe(3);
    expect(ch.prompt_token_ids).toHaveLength(9);
    expect(ch.token_ids).toHaveLength(c.usage.completion_tokens);
    expect(c.usage.prompt_tokens).toBe(9);
    expect(["stop", "length"]).toContain(ch.finish_reason);
  });

  it("chat completions with logprobs/top_logprobs, token ids and usage; streaming matches", async () => {
    const params = {
      model: "qwen",
      messages: [{ role: "user" as const, content: "Tell me a story about routers" }],
      max_tokens: 12,
      logprobs: true,
      top_logprobs: 2,
      return_token_ids: true,
    };
    const { data, response } = await client.chat.completions
      .create(params as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, { headers: { "X-Session-ID": "chat-1" } })
      .withResponse();
    const d = data as any;
    expect(response.headers.get("x-standin-worker")).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(response.headers.get("x-standin-engine")).toBeTruthy();
    const content = d.choices[0].message.content as string;
    expect(d.choices[0].logprobs.content).toHaveLength(d.usage.completion_tokens);
    expect(d.choices[0].logprobs.content[0].top_logprobs).toHaveLength(2);
    expect(d.prompt_token_ids.length).toBe(d.usage.prompt_tokens);
    expect(d.choices[0].token_ids).toHaveLength(d.usage.completion_tokens);

    const stream = await client.chat.completions.create(
      {
        ...params,
        stream: true,
        stream_options: { include_usage: true },
      } as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
      { headers: { "X-Session-ID": "chat-1" } },
    );
    let streamed = "";
    const ids: number[] = [];
    let usage: any = null;
    for await (const chunk of stream) {
      const c = chunk as any;
      if (c.choices[0]?.delta?.content) streamed += c.choices[0].delta.content;
      if (c.choices[0]?.token_ids) ids.push(...c.choices[0].token_ids);
      if (c.usage) usage = c.usage;
    }
    expect(streamed).toBe(content);
    expect(ids).toEqual(d.choices[0].token_ids);
    expect(usage.completion_tokens).toBe(d.usage.completion_tokens);

    const cstream = await client.completions.create({
      model: "qwen",
      prompt: "stream me",
      max_tokens: 5,
      stream: true,
      ignore_eos: true,
    } as OpenAI.CompletionCreateParamsStreaming);
    let n = 0;
    let finish: string | null = null;
    for await (const chunk of cstream) {
      if (chunk.choices[0]?.text) n++;
      if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
    }
    expect(n).toBe(5);
    expect(finish).toBe("length");
  });

  it("consistent_hash: one X-Session-ID always hits one worker, sessions spread over both", async () => {
    const workerFor = async (session: string) => {
      const { response } = await client.chat.completions
        .create(
          { model: "qwen", messages: [{ role: "user", content: `turn for ${session}` }], max_tokens: 2 },
          { headers: { "X-Session-ID": session } },
        )
        .withResponse();
      return response.headers.get("x-standin-worker");
    };
    const same = await Promise.all(Array.from({ length: 6 }, () => workerFor("rollout-42")));
    expect(new Set(same).size).toBe(1);
    const spread = await Promise.all(Array.from({ length: 16 }, (_, i) => workerFor(`rollout-${i}`)));
    expect(new Set(spread)).toEqual(new Set([e1, e2]));
  });

  it("token-in/token-out /inference/v1/generate through the router", async () => {
    const r = await postJson(
      `${router}/inference/v1/generate`,
      { token_ids: [11, 12, 13, 14], sampling_params: { max_tokens: 4, logprobs: 1 } },
      { "x-session-id": "gen-1" },
    );
    expect(r.status).toBe(200);
    expect(r.json.choices[0].token_ids.length).toBeGreaterThan(0);
    expect(r.json.choices[0].token_ids.length).toBeLessThanOrEqual(4);
    expect(r.json.usage.prompt_tokens).toBe(4);
    expect(r.json.choices[0].logprobs.content[0].token).toMatch(/^token_id:\d+$/);
  });

  it("engine /metrics counters increase with served requests (incl. prefix-cache hits)", async () => {
    const before = await (await fetch(`${e1}/metrics`)).text();
    const prompt = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    for (let i = 0; i < 2; i++)
      expect(
        (await postJson(`${e1}/v1/completions`, { model: "qwen", prompt, max_tokens: 3, ignore_eos: true })).status,
      ).toBe(200);
    const after = await (await fetch(`${e1}/metrics`)).text();
    for (const name of ["vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"])
      expect(after).toContain(`# TYPE ${name} gauge`);
    expect(after).toContain('model_name="qwen"');
    expect(metric(after, "vllm:prompt_tokens_total") - metric(before, "vllm:prompt_tokens_total")).toBe(80);
    expect(metric(after, "vllm:generation_tokens_total") - metric(before, "vllm:generation_tokens_total")).toBe(6);
    expect(
      metric(after, "vllm:request_success_total", 'finished_reason="length"') -
        metric(before, "vllm:request_success_total", 'finished_reason="length"'),
    ).toBe(2);
    expect(metric(after, "vllm:prefix_cache_queries_total") - metric(before, "vllm:prefix_cache_queries_total")).toBe(
      80,
    );
    expect(
      metric(after, "vllm:prefix_cache_hits_total") - metric(before, "vllm:prefix_cache_hits_total"),
    ).toBeGreaterThanOrEqual(32);
    expect(
      metric(after, "vllm:e2e_request_latency_seconds_count") -
        metric(before, "vllm:e2e_request_latency_seconds_count"),
    ).toBe(2);
    expect(after).toMatch(/vllm:e2e_request_latency_seconds_bucket\{[^}]*le="\+Inf"\}/);
    const prom = await (await fetch(`http://127.0.0.1:${promPort}/metrics`)).text();
    expect(metric(prom, "vllm_router_requests_total", 'route="/v1/chat/completions"')).toBeGreaterThan(0);
  });

  it("admin routes work on the engine; pause holds generation until resume", async () => {
    expect((await postJson(`${e1}/pause`, {})).json).toEqual({ status: "paused" });
    const pending = postJson(`${e1}/v1/completions`, { model: "qwen", prompt: "held while paused", max_tokens: 2 });
    const raced = await Promise.race([pending.then(() => "done"), sleep(300).then(() => "held")]);
    expect(raced).toBe("held");
    expect((await getJson(`${e1}/standin/state`)).waiting).toBe(1);
    expect(metric(await (await fetch(`${e1}/metrics`)).text(), "vllm:num_requests_waiting")).toBe(1);
    expect((await postJson(`${e1}/resume`, {})).json).toEqual({ status: "resumed" });
    expect((await pending).status).toBe(200);

    const wdir = fs.mkdtempSync(path.join(TMP, "step-"));
    expect((await postJson(`${e1}/update_weights`, { weight_dir: wdir })).json).toEqual({ status: "ok" });
    expect((await postJson(`${e1}/update_weights`, { weight_dir: path.join(TMP, "missing-step") })).status).toBe(500);
    expect(
      (
        await postJson(`${e1}/init_broadcaster`, {
          host: "10.0.0.9",
          port: 29501,
          timeout: 1200,
          rank_offset: 0,
          inference_world_size: 4,
        })
      ).status,
    ).toBe(200);
    expect((await postJson(`${e1}/init_broadcaster`, { host: "10.0.0.9" })).status).toBe(422);
    expect(
      (await postJson(`${e1}/load_lora_adapter`, { lora_name: "adapter-a", lora_path: "/tmp/lora-a" })).json,
    ).toEqual({ status: "ok" });
    expect(
      (await postJson(`${e1}/load_lora_adapter`, { lora_name: "adapter-a", lora_path: "/tmp/lora-a2" })).status,
    ).toBe(200);
    expect(
      (await postJson(`${e1}/v1/load_lora_adapter`, { lora_name: "adapter-b", lora_path: "/tmp/lora-b" })).status,
    ).toBe(200);
    expect(
      (await postJson(`${e1}/v1/load_lora_adapter`, { lora_name: "adapter-b", lora_path: "/tmp/lora-b" })).status,
    ).toBe(400);
    const models = await getJson(`${e1}/v1/models`);
    expect(models.data.map((m: any) => m.id)).toEqual(["qwen", "adapter-a", "adapter-b"]);
    expect(
      (
        await postJson(`${e1}/v1/chat/completions`, {
          model: "adapter-a",
          messages: [{ role: "user", content: "hi" }],
          max_tokens: 2,
        })
      ).status,
    ).toBe(200);
    expect((await postJson(`${e1}/v1/unload_lora_adapter`, { lora_name: "adapter-b" })).status).toBe(200);
    expect(
      (await postJson(`${e1}/v1/chat/completions`, { model: "nope", messages: [{ role: "user", content: "hi" }] }))
        .status,
    ).toBe(404);
    expect(await getJson(`${e1}/liveness`)).toEqual({ status: "ok" });
    const st = await getJson(`${e1}/standin/state`);
    expect(st).toMatchObject({
      weight_updates: 1,
      weight_dir: wdir,
      broadcaster: { port: 29501, inference_world_size: 4 },
    });
  });

  it("a path the router does not know goes to one worker, as vllm-router 0.1.17 does (admin routes included); /liveness is the router's own", async () => {
    const before = (await getJson(`${e1}/standin/state`)).pauses + (await getJson(`${e2}/standin/state`)).pauses;
    const r = await postJson(`${router}/pause`, {});
    expect(r.status).toBe(200);
    expect([e1, e2].map((e) => new URL(e).origin)).toContain(new URL(r.headers.get("x-standin-worker")!).origin);
    const after = (await getJson(`${e1}/standin/state`)).pauses + (await getJson(`${e2}/standin/state`)).pauses;
    expect(after - before).toBe(1);
    await postJson(`${r.headers.get("x-standin-worker")}/resume`, {});
    const live = await fetch(`${router}/liveness`);
    expect(live.status).toBe(200);
    expect(live.headers.get("x-standin-worker")).toBeNull();
  });

  it("records every launch with argv and selected env, never secret values", async () => {
    const files = fs.readdirSync(recordDir).filter((f) => /^vllm-\d+\.json$/.test(f));
    expect(files.length).toBe(2);
    const recs = files.map((f) => JSON.parse(fs.readFileSync(path.join(recordDir, f), "utf8")));
    const rec = recs.find((r) => r.env.CUDA_VISIBLE_DEVICES === "0,1");
    expect(rec.argv.slice(0, 2)).toEqual(["serve", "Qwen/Qwen3-0.6B"]);
    expect(rec.env.VLLM_ALLOW_RUNTIME_LORA_UPDATING).toBe("1");
    expect(rec.env.HF_TOKEN).toMatch(/set/);
    expect(JSON.stringify(recs)).not.toContain("hf_supersecret");
    expect(rec.listening).toMatch(/^127\.0\.0\.1:\d+$/);
    // When it began to serve: after its launch, not in the future.
    expect(rec.listening_at_ms).toBeGreaterThanOrEqual(Date.parse(rec.started_at));
    expect(rec.listening_at_ms).toBeLessThanOrEqual(Date.now());
    expect(rec.hostname).toBe(os.hostname());
  });
});

// =================================================================================================
describe("api key enforcement", () => {
  it("--api-key and VLLM_API_KEY protect /v1/* only; the key is never recorded", async () => {
    const [p1, p2] = await Promise.all([freePort(), freePort()]);
    const rec = path.join(TMP, "records-key");
    const a = start("vllm", ["serve", "m", "--host", "127.0.0.1", "--port", String(p1), "--api-key", "sekret-cli"], {
      STANDIN_RECORD_DIR: rec,
    });
    const b = start("vllm", ["serve", "m", "--host", "127.0.0.1", "--port", String(p2)], {
      VLLM_API_KEY: "sekret-env",
      STANDIN_RECORD_DIR: rec,
    });
    await Promise.all([
      waitHttp(`http://127.0.0.1:${p1}/health`, 200, 10000, a),
      waitHttp(`http://127.0.0.1:${p2}/health`, 200, 10000, b),
    ]);
    for (const [port, key] of [
      [p1, "sekret-cli"],
      [p2, "sekret-env"],
    ] as const) {
      const bad = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "wrong", maxRetries: 0 });
      await expect(bad.models.list()).rejects.toMatchObject({ status: 401 });
      const good = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: key, maxRetries: 0 });
      const c = await good.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 2,
      });
      expect(c.choices[0].message.content).toBeTruthy();
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    }
    const text = fs
      .readdirSync(rec)
      .map((f) => fs.readFileSync(path.join(rec, f), "utf8"))
      .join("\n");
    expect(text).not.toContain("sekret-cli");
    expect(text).not.toContain("sekret-env");
    expect(text).toContain("<redacted>");
  });
});

// =================================================================================================
describe("fault injection and lifecycle", () => {
  it("STANDIN_EXIT_AT_START exits with the given code", async () => {
    const r = await runToExit("vllm", ["serve", "m", "--port", String(await freePort())], {
      STANDIN_EXIT_AT_START: "3",
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("simulated start-up failure");
  });

  it("STANDIN_STDERR_LINE_BYTES writes that many bytes of \\r progress frames, no newline, before anything else", async () => {
    const r = await runToExit("vllm", ["serve", "m", "--port", String(await freePort())], {
      STANDIN_STDERR_LINE_BYTES: "100000",
      STANDIN_EXIT_AT_START: "1",
    });
    expect(r.code).toBe(1);
    const first = r.stderr.split("\n")[0];
    expect(first.indexOf("standin vllm: ERROR simulated start-up failure")).toBe(100_000);
    expect(first.slice(0, 100_000)).toMatch(/^(\rLoading safetensors checkpoint shards:[^\r]*)+$/);
  });

  it("start-up delay, STANDIN_NEVER_HEALTHY, and a router that gives up on an unhealthy worker", async () => {
    const [slow, sick, rp] = await Promise.all([freePort(), freePort(), freePort()]);
    const s = start("vllm", ["serve", "m", "--host", "127.0.0.1", "--port", String(slow)], {
      STANDIN_STARTUP_DELAY_MS: "700",
    });
    const n = start("vllm", ["serve", "m", "--host", "127.0.0.1", "--port", String(sick)], {
      STANDIN_NEVER_HEALTHY: "1",
    });
    await sleep(300);
    await expect(fetch(`http://127.0.0.1:${slow}/health`)).rejects.toThrow();
    await waitHttp(`http://127.0.0.1:${slow}/health`, 200, 5000, s);
    await waitHttp(`http://127.0.0.1:${sick}/health`, 503, 5000, n);
    const r = await runToExit("vllm-router", [
      "--policy",
      "round_robin",
      "--host",
      "127.0.0.1",
      "--port",
      String(rp),
      "--prometheus-port",
      String(await freePort()),
      "--worker-startup-timeout-secs",
      "1",
      "--worker-urls",
      `http://127.0.0.1:${sick}`,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Timeout .*waiting for workers/);
    expect((await fetch(`http://127.0.0.1:${sick}/health`)).status).toBe(503);
  });

  it("STANDIN_CRASH_AFTER_MS crashes with exit 1; SIGTERM exits 0", async () => {
    const [p1, p2] = await Promise.all([freePort(), freePort()]);
    const c = start("vllm", ["serve", "m", "--host", "127.0.0.1", "--port", String(p1)], {
      STANDIN_CRASH_AFTER_MS: "600",
    });
    await waitHttp(`http://127.0.0.1:${p1}/health`, 200, 5000, c);
    expect((await c.exit).code).toBe(1);
    expect(c.stderr()).toContain("simulated engine crash");
    const t = start("vllm", ["serve", "m", "--host", "127.0.0.1", "--port", String(p2)]);
    await waitHttp(`http://127.0.0.1:${p2}/health`, 200, 5000, t);
    t.proc.kill("SIGTERM");
    expect(await t.exit).toEqual({ code: 0, signal: null });
  });

  it("a port already in use is a start-up error (exit 1)", async () => {
    const blocker = net.createServer().listen(0, "127.0.0.1");
    await new Promise((r) => blocker.once("listening", r));
    const port = (blocker.address() as net.AddressInfo).port;
    const r = await runToExit("vllm", ["serve", "m", "--host", "127.0.0.1", "--port", String(port)]);
    blocker.close();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("EADDRINUSE");
  });
});

// =================================================================================================
describe("P/D disaggregation through the vllm-router stand-in", () => {
  it("prefill with max_tokens=1 + do_remote_decode, then decode with the returned kv_transfer_params", async () => {
    const [pp, dp, rp, mp] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const kv = ["--kv-transfer-config", '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'];
    const P = start("vllm", ["serve", "Qwen/Qwen3-0.6B", "--host", "127.0.0.1", "--port", String(pp), ...kv], {
      VLLM_NIXL_SIDE_CHANNEL_HOST: "127.0.0.1",
      VLLM_NIXL_SIDE_CHANNEL_PORT: "5600",
    });
    const D = start("vllm", ["serve", "Qwen/Qwen3-0.6B", "--host", "127.0.0.1", "--port", String(dp), ...kv]);
    const prefill = `http://127.0.0.1:${pp}`;
    const decode = `http://127.0.0.1:${dp}`;
    const R = start("vllm-router", [
      "--policy",
      "consistent_hash",
      "--host",
      "127.0.0.1",
      "--port",
      String(rp),
      "--prometheus-port",
      String(mp),
      "--worker-startup-timeout-secs",
      "20",
      "--vllm-pd-disaggregation",
      "--prefill",
      prefill,
      "--decode",
      decode,
    ]);
    await waitHttp(`http://127.0.0.1:${rp}/health`, 200, 10000, R);
    void P;
    void D;
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${rp}/v1`, apiKey: "x", maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create(
        { model: "Qwen/Qwen3-0.6B", messages: [{ role: "user", content: "disaggregate me please" }], max_tokens: 8 },
        { headers: { "X-Session-ID": "pd-1" } },
      )
      .withResponse();
    expect(response.headers.get("x-standin-prefill-worker")).toBe(prefill);
    expect(response.headers.get("x-standin-decode-worker")).toBe(decode);
    expect(response.headers.get("x-standin-worker")).toBe(`${prefill},${decode}`);
    expect(response.headers.get("x-standin-engine")).toBe(`127.0.0.1:${dp}`);
    const direct = await postJson(`${decode}/v1/chat/completions`, {
      model: "Qwen/Qwen3-0.6B",
      messages: [{ role: "user", content: "disaggregate me please" }],
      max_tokens: 8,
    });
    expect(data.choices[0].message.content).toBe(direct.json.choices[0].message.content);
    const ps = await getJson(`${prefill}/standin/state`);
    expect(ps.prefill_only_requests).toBe(1);
    expect(ps.last_request.max_tokens).toBe(1);
    expect(ps.last_request.kv_transfer_params.do_remote_decode).toBe(true);
    const ds = await getJson(`${decode}/standin/state`);
    expect(ds.remote_prefill_requests).toBe(1);
    expect(ds.by_route["/v1/chat/completions"]).toBe(2);

    // streaming decode passes through
    const stream = await client.chat.completions.create({
      model: "Qwen/Qwen3-0.6B",
      messages: [{ role: "user", content: "disaggregate me please" }],
      max_tokens: 8,
      stream: true,
    });
    let s = "";
    for await (const ch of stream) s += ch.choices[0]?.delta?.content ?? "";
    expect(s).toBe(data.choices[0].message.content);
    expect((await getJson(`${prefill}/standin/state`)).prefill_only_requests).toBe(2);
  });
});

// =================================================================================================
describe("llm-d chain: envoy -> epp (stand-in pick protocol) -> pd-sidecar -> vLLM", () => {
  it("routes an OpenAI request through prefill and the decode sidecar; /health on envoy is 404", async () => {
    const [pp, dp, sp, gp, hp, mp, lp, ap] = await Promise.all(Array.from({ length: 8 }, () => freePort()));
    const kv = ["--kv-transfer-config", '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'];
    const P = start("vllm", ["serve", "m", "--host", "127.0.0.1", "--port", String(pp), ...kv]);
    const D = start("vllm", ["serve", "m", "--host", "127.0.0.1", "--port", String(dp), ...kv]);
    const dir = path.join(TMP, "llmd");
    fs.mkdirSync(dir, { recursive: true });
    const endpoints = path.join(dir, "endpoints.yaml");
    fs.writeFileSync(
      endpoints,
      [
        "endpoints:",
        `- {name: prefill-0-rank-0, address: 127.0.0.1, port: "${pp}", namespace: default, labels: {llm-d.ai/pool: prime-rl, llm-d.ai/role: prefill}}`,
        `- {name: decode-1-rank-0, address: 127.0.0.1, port: "${sp}", namespace: default, labels: {llm-d.ai/pool: prime-rl, llm-d.ai/role: decode}}`,
        "",
      ].join("\n"),
    );
    const eppYaml = path.join(dir, "epp.yaml");
    fs.writeFileSync(
      eppYaml,
      `apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- name: file-disc
  type: file-discovery
  parameters:
    path: ${endpoints}
    watchFile: true
- type: vllmhttp-parser
- type: prefix-cache-scorer
- type: queue-scorer
- type: max-score-picker
- name: pd-decider
  type: prefix-based-pd-decider
  parameters:
    nonCachedTokens: 0
- name: profile-handler
  type: disagg-profile-handler
  parameters:
    deciders:
      prefill: pd-decider
- type: prefill-filter
- type: decode-filter
schedulingProfiles:
- name: prefill
  plugins:
  - pluginRef: prefill-filter
  - pluginRef: prefix-cache-scorer
    weight: 2
  - pluginRef: max-score-picker
- name: decode
  plugins:
  - pluginRef: decode-filter
  - pluginRef: queue-scorer
    weight: 1
  - pluginRef: max-score-picker
requestHandler:
  parser:
    pluginRef: vllmhttp-parser
dataLayer:
  discovery:
    pluginRef: file-disc
`,
    );
    const envoyYaml = path.join(dir, "envoy.yaml");
    fs.writeFileSync(
      envoyYaml,
      `admin:
  address:
    socket_address: { address: 127.0.0.1, port_value: ${ap} }
static_resources:
  listeners:
  - name: listener_0
    address:
      socket_address: { address: 127.0.0.1, port_value: ${lp} }
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          stat_prefix: ingress_http
          stream_idle_timeout: 0s
          request_timeout: 0s
          route_config:
            name: local_route
            virtual_hosts:
            - name: backend
              domains: ["*"]
              routes:
              - match: { prefix: "/v1/" }
                route: { cluster: backend_cluster, timeout: 0s, idle_timeout: 86400s }
              - match: { prefix: "/inference/v1/" }
                route: { cluster: backend_cluster, timeout: 0s, idle_timeout: 86400s }
          http_filters:
          - name: envoy.filters.http.ext_proc
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor
              grpc_service:
                envoy_grpc:
                  cluster_name: epp_cluster
                timeout: 10s
              message_timeout: 1000s
              processing_mode:
                request_header_mode: SEND
                response_header_mode: SEND
                request_body_mode: FULL_DUPLEX_STREAMED
                response_body_mode: FULL_DUPLEX_STREAMED
                request_trailer_mode: SEND
                response_trailer_mode: SEND
          - name: envoy.filters.http.router
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
              suppress_envoy_headers: true
  clusters:
  - name: backend_cluster
    connect_timeout: 5s
    type: ORIGINAL_DST
    lb_policy: CLUSTER_PROVIDED
    original_dst_lb_config:
      use_http_header: true
      http_header_name: x-gateway-destination-endpoint
    circuit_breakers:
      thresholds:
      - priority: DEFAULT
        max_connections: 100000
        max_pending_requests: 100000
        max_requests: 100000
        max_retries: 1000
  - name: epp_cluster
    connect_timeout: 5s
    type: STRICT_DNS
    typed_extension_protocol_options:
      envoy.extensions.upstreams.http.v3.HttpProtocolOptions:
        "@type": type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions
        explicit_http_config:
          http2_protocol_options: {}
    load_assignment:
      cluster_name: epp_cluster
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address: { address: 127.0.0.1, port_value: ${gp} }
`,
    );
    const S = start("pd-sidecar", [
      "--port",
      String(sp),
      "--vllm-port",
      String(dp),
      "--kv-connector",
      "nixlv2",
      "--secure-proxy=false",
      "--enable-ssrf-protection=false",
      "--inference-pool",
      "prime-rl",
      "--data-parallel-size",
      "1",
    ]);
    const E = start("epp", [
      "--pool-name",
      "prime-rl",
      "--pool-namespace",
      "slurm",
      "--config-file",
      eppYaml,
      "--grpc-port",
      String(gp),
      "--grpc-health-port",
      String(hp),
      "--metrics-port",
      String(mp),
      "--secure-serving=false",
      "--metrics-endpoint-auth=false",
      "--tracing=false",
    ]);
    const V = start("envoy", ["-c", envoyYaml, "--log-level", "info"]);
    await Promise.all([
      waitHttp(`http://127.0.0.1:${pp}/health`, 200, 10000, P),
      waitHttp(`http://127.0.0.1:${sp}/health`, 200, 10000, S),
      waitHttp(`http://127.0.0.1:${hp}/`, 200, 10000, E),
      waitHttp(`http://127.0.0.1:${ap}/ready`, 200, 10000, V),
    ]);
    void D;
    expect((await fetch(`http://127.0.0.1:${lp}/health`)).status).toBe(404);

    const client = new OpenAI({ baseURL: `http://127.0.0.1:${lp}/v1`, apiKey: "x", maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create(
        { model: "m", messages: [{ role: "user", content: "route me through llm-d" }], max_tokens: 6 },
        { headers: { "X-Session-ID": "llmd-1" } },
      )
      .withResponse();
    expect(data.choices[0].message.content).toBeTruthy();
    expect(response.headers.get("x-standin-envoy-upstream")).toBe(`127.0.0.1:${sp}`);
    expect(response.headers.get("x-standin-prefill-worker")).toBe(`http://127.0.0.1:${pp}`);
    expect(response.headers.get("x-standin-engine")).toBe(`127.0.0.1:${dp}`);
    expect((await getJson(`http://127.0.0.1:${pp}/standin/state`)).prefill_only_requests).toBe(1);
    expect((await getJson(`http://127.0.0.1:${dp}/standin/state`)).remote_prefill_requests).toBe(1);
    const gen = await postJson(`http://127.0.0.1:${lp}/inference/v1/generate`, {
      token_ids: [5, 6, 7],
      sampling_params: { max_tokens: 3 },
    });
    expect(gen.status).toBe(200);
    expect(await getJson(`http://127.0.0.1:${gp}/pick?role=prefill&key=abc`)).toMatchObject({
      address: "127.0.0.1",
      port: pp,
      role: "prefill",
    });
    expect(metric(await (await fetch(`http://127.0.0.1:${mp}/metrics`)).text(), "inference_pool_ready_pods")).toBe(2);
  });

  it("epp refuses hostnames in file discovery and unknown plugin types (exit 1)", async () => {
    const dir = path.join(TMP, "llmd-bad");
    fs.mkdirSync(dir, { recursive: true });
    const ep = path.join(dir, "endpoints.yaml");
    fs.writeFileSync(ep, 'endpoints:\n- {name: a, address: node-001, port: "8100"}\n');
    const cfg = path.join(dir, "epp.yaml");
    fs.writeFileSync(
      cfg,
      `kind: EndpointPickerConfig\nplugins:\n- type: file-discovery\n  parameters: {path: ${ep}}\n`,
    );
    const args = (c: string) => [
      "--config-file",
      c,
      "--secure-serving=false",
      "--grpc-port",
      "1",
      "--grpc-health-port",
      "2",
      "--metrics-port",
      "3",
    ];
    const r1 = await runToExit("epp", args(cfg));
    expect(r1.code).toBe(1);
    expect(r1.stderr).toContain("node-001");
    const cfg2 = path.join(dir, "epp2.yaml");
    fs.writeFileSync(ep, 'endpoints:\n- {name: a, address: 10.1.2.3, port: "8100"}\n');
    fs.writeFileSync(
      cfg2,
      `kind: EndpointPickerConfig\nplugins:\n- type: file-discovery\n  parameters: {path: ${ep}}\n- type: magic-scorer\n`,
    );
    const r2 = await runToExit("epp", args(cfg2));
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain("magic-scorer");
    // --secure-serving defaults to true; the stand-in (plain HTTP) refuses to start without =false
    const r3 = await runToExit(
      "epp",
      args(cfg).filter((a) => a !== "--secure-serving=false"),
      { STANDIN_CHECK_ONLY: "1" },
    );
    expect(r3.code).toBe(1);
    expect(r3.stderr).toContain("--secure-serving=false");
  });

  // llm-d-router v0.10.0 pkg/epp/handlers/parsers.go + parsers/README.md: vllmhttp-parser claims only
  // inference/v1/generate, so an OpenAI path needs openai-parser in requestHandler.parsers.
  it("epp resolves a parser per path as v0.10.0 does: vllmhttp-parser alone refuses /v1/* (400)", async () => {
    const dir = path.join(TMP, "llmd-parsers");
    fs.mkdirSync(dir, { recursive: true });
    const ep = path.join(dir, "endpoints.yaml");
    fs.writeFileSync(ep, 'endpoints:\n- {name: a, address: 127.0.0.1, port: "8100"}\n');
    const pick = async (parsers: string[], paths: string[]) => {
      const [gp, hp, mp] = await Promise.all([freePort(), freePort(), freePort()]);
      const cfg = path.join(dir, `epp-${parsers.join("-")}.yaml`);
      fs.writeFileSync(
        cfg,
        [
          "kind: EndpointPickerConfig",
          "plugins:",
          `- {name: file-disc, type: file-discovery, parameters: {path: ${ep}}}`,
          ...parsers.map((t) => `- type: ${t}`),
          "- type: max-score-picker",
          "- type: single-profile-handler",
          "schedulingProfiles:",
          "- {name: default, plugins: [{pluginRef: max-score-picker}]}",
          "requestHandler:",
          "  parsers:",
          ...parsers.map((t) => `  - pluginRef: ${t}`),
          "dataLayer: {discovery: {pluginRef: file-disc}}",
          "",
        ].join("\n"),
      );
      const E = start("epp", [
        "--config-file",
        cfg,
        "--secure-serving=false",
        "--grpc-port",
        String(gp),
        "--grpc-health-port",
        String(hp),
        "--metrics-port",
        String(mp),
      ]);
      await waitHttp(`http://127.0.0.1:${hp}/`, 200, 10000, E);
      const out: number[] = [];
      for (const p of paths)
        out.push((await postJson(`http://127.0.0.1:${gp}/standin/pick`, { path: p, headers: {}, body: "{}" })).status);
      // A bodiless request (GET /v1/models) is routed without a parser (handlers/request.go).
      out.push(
        (await postJson(`http://127.0.0.1:${gp}/standin/pick`, { path: "/v1/models", headers: {}, body: "" })).status,
      );
      E.proc.kill("SIGTERM");
      return out;
    };
    const paths = ["/v1/completions", "/v1/chat/completions", "/inference/v1/generate"];
    expect(await pick(["vllmhttp-parser"], paths)).toEqual([400, 400, 200, 200]);
    expect(await pick(["vllmhttp-parser", "openai-parser"], paths)).toEqual([200, 200, 200, 200]);
  });
});

// =================================================================================================
describe("Mooncake stand-ins", () => {
  it("master (RPC + HTTP metadata + metrics) and a client that registers with it", async () => {
    const [rpc, meta, mx, cl] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const M = start("mooncake_master", [
      `-rpc_port=${rpc}`,
      "-enable_http_metadata_server",
      "-http_metadata_server_host=127.0.0.1",
      `-http_metadata_server_port=${meta}`,
      "-default_kv_lease_ttl=3600000",
      `-metrics_port=${mx}`,
    ]);
    // the client is started at the same time and must wait for the master itself
    const C = start("mooncake_client", [
      "-host=127.0.0.1",
      `-port=${cl}`,
      `-master_server_address=127.0.0.1:${rpc}`,
      `-metadata_server=http://127.0.0.1:${meta}/metadata`,
      "-protocol=tcp",
      "-global_segment_size=1073741824",
    ]);
    await waitTcp(cl);
    expect(M.proc.exitCode).toBeNull();
    expect(C.proc.exitCode).toBeNull();
    const reg = await fetch(
      `http://127.0.0.1:${meta}/metadata?key=${encodeURIComponent(`mooncake/rpc_meta/127.0.0.1:${cl}`)}`,
    );
    expect(reg.status).toBe(200);
    expect(await reg.json()).toMatchObject({ ip_or_host_name: "127.0.0.1", rpc_port: cl });
    const key = `http://127.0.0.1:${meta}/metadata?key=test%2Fk`;
    expect((await fetch(key)).status).toBe(404);
    expect((await fetch(key, { method: "PUT", body: '{"v":1}' })).status).toBe(200);
    expect(await (await fetch(key)).json()).toEqual({ v: 1 });
    expect((await fetch(key, { method: "DELETE" })).status).toBe(200);
    expect(metric(await (await fetch(`http://127.0.0.1:${mx}/metrics`)).text(), "standin_metadata_keys")).toBe(1);
    C.proc.kill("SIGTERM");
    expect((await C.exit).code).toBe(0);
  });

  it("a client that cannot reach its master exits 1; the standalone metadata server works", async () => {
    const [dead, port] = await Promise.all([freePort(), freePort()]);
    const r = await runToExit(
      "mooncake_client",
      [`-master_server_address=127.0.0.1:${dead}`, `-port=${await freePort()}`, "-metadata_server=P2PHANDSHAKE"],
      { STANDIN_MOONCAKE_CONNECT_TIMEOUT_MS: "500" },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("failed to connect to master");
    const S = start("mooncake_http_metadata_server", [
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--log-level",
      "INFO",
    ]);
    await waitHttp(`http://127.0.0.1:${port}/metadata?key=x`, 404, 10000, S);
    const key = `http://127.0.0.1:${port}/metadata?key=seg`;
    expect((await fetch(key, { method: "PUT", body: "abc" })).status).toBe(200);
    expect(await (await fetch(key)).text()).toBe("abc");
  });
});

// =================================================================================================
describe("prime-rl `inference` stand-in", () => {
  const CHECK = { STANDIN_CHECK_ONLY: "1" };
  /** An engine's argv as the planner renders it for the prime-rl RL fixture (--target slurm). */
  function plannedArgv(): string[] {
    const file = path.join(__dirname, "fixtures", "prime-rl", "rl-multi-node.toml");
    const plan = buildPlan(loadConfigFile(file, [], { target: "slurm" }), "rl-multi-node");
    const argv = plan.islands.flatMap((i) => i.engines)[0].argv.map((v) => showValue(v, 0));
    expect(argv[0]).toBe("inference");
    return argv.slice(1);
  }
  /** The same argv with one flag's value replaced. */
  function withFlag(argv: string[], name: string, value: string): string[] {
    const out = [...argv];
    const i = out.indexOf(name);
    expect(i, name).toBeGreaterThan(0);
    out[i + 1] = value;
    return out;
  }
  async function expectRejected(args: string[], named: string, reason: string) {
    const r = await runToExit("inference", args, CHECK);
    expect(r.code, `inference ${args.join(" ")} should exit 2\n${r.stderr}`).toBe(2);
    expect(r.stderr).toContain(`standin inference: unrecognized/invalid argument ${named}`);
    expect(r.stderr).toContain(reason);
  }

  it("accepts the planner's argv for the RL fixture and refuses what prime-rl or vLLM would", async () => {
    const argv = plannedArgv();
    expect(argv).toContain("--weight-broadcast.type");
    const ok = await runToExit("inference", argv, CHECK);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("standin inference: argv OK");
    const cls = "--vllm.worker-extension-cls";
    await Promise.all([
      // a worker extension that is not one of prime-rl's three classes
      expectRejected(
        withFlag(argv, cls, "my_pkg.worker.MyWorker"),
        cls,
        "is not one of prime-rl's weight-update workers",
      ),
      // prime-rl's filesystem worker with an nccl broadcast
      expectRejected(
        withFlag(argv, cls, "prime_rl.inference.vllm.worker.filesystem.FileSystemWeightUpdateWorker"),
        cls,
        "does not match --weight-broadcast.type nccl",
      ),
      // the nccl worker with a filesystem broadcast
      expectRejected(withFlag(argv, "--weight-broadcast.type", "filesystem"), cls, "does not match"),
      expectRejected(withFlag(argv, "--weight-broadcast.type", "gloo"), "--weight-broadcast.type", "invalid choice"),
      expectRejected([...argv, "--vllm.no-such-flag", "1"], "--vllm.no-such-flag", "unknown [vllm] key"),
      expectRejected([...argv, "--server.workers", "2"], "--server.workers", "unknown [server] key"),
      // vLLM's own checks, named in prime-rl's spelling
      expectRejected(
        withFlag(argv, "--vllm.tensor-parallel-size", "two"),
        "--vllm.tensor-parallel-size",
        "invalid int",
      ),
      expectRejected([...argv, "--vllm.enforce-eager", "maybe"], "--vllm.enforce-eager", "a switch takes no value"),
      expectRejected(["stray", ...argv], "stray", "unexpected positional argument"),
    ]);
    // [server] liveness-timeout-seconds is accepted; a switch's `false` is vLLM's --no- form.
    const more = await runToExit(
      "inference",
      [...argv, "--server.liveness-timeout-seconds", "30", "--vllm.enable-prefix-caching", "false"],
      CHECK,
    );
    expect(more.code, more.stderr).toBe(0);
  });

  it("serves the vLLM surface plus prime-rl's admin routes, and records the last weight update", async () => {
    const [port, rec] = [await freePort(), path.join(TMP, "prime-records")];
    const weights = fs.mkdtempSync(path.join(TMP, "step-"));
    const argv = [
      ...withFlag(withFlag(plannedArgv(), "--server.host", "127.0.0.1"), "--server.port", String(port)),
      "--vllm.enable-lora",
    ];
    const P = start("inference", argv, { STANDIN_RECORD_DIR: rec });
    const base = `http://127.0.0.1:${port}`;
    await waitHttp(`${base}/health`, 200, 10000, P);
    const models = await getJson(`${base}/v1/models`);
    expect(models.data.map((m: { id: string }) => m.id)).toEqual(["Qwen/Qwen3-8B"]);
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "unused" });
    const c = await client.completions.create({ model: "Qwen/Qwen3-8B", prompt: "hello there", max_tokens: 4 });
    expect(c.choices[0].text.length).toBeGreaterThan(0);
    expect(metric(await (await fetch(`${base}/metrics`)).text(), "vllm:request_success_total")).toBe(1);
    expect((await postJson(`${base}/pause`, {})).json).toEqual({ status: "paused" });
    expect((await postJson(`${base}/resume`, {})).json).toEqual({ status: "resumed" });

    const live = await fetch(`${base}/liveness`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "ok" });

    const up = await postJson(`${base}/update_weights`, { weight_dir: weights });
    expect(up.status).toBe(200);
    expect(up.json).toEqual({ status: "ok" });
    const state = await getJson(`${base}/standin/state`);
    expect(state.weight_updates).toBe(1);
    expect(state.last_weight_update.weight_dir).toBe(weights);
    expect(state.prime).toEqual({
      weight_broadcast_type: "nccl",
      worker_extension_cls: "prime_rl.inference.vllm.worker.nccl.NCCLWeightUpdateWorker",
      liveness_timeout_seconds: null,
    });
    const file = path.join(rec, `inference-${P.proc.pid}.json`);
    const record = JSON.parse(fs.readFileSync(file, "utf8"));
    expect(record.prog).toBe("inference");
    expect(record.listening).toBe(`127.0.0.1:${port}`);
    expect(record.last_weight_dir).toBe(weights);
    expect(record.weight_updates).toBe(1);
    // An NCCL broadcast sends no directory.
    expect((await postJson(`${base}/update_weights`, { weight_dir: null })).json).toEqual({ status: "ok" });
    expect(JSON.parse(fs.readFileSync(file, "utf8")).last_weight_dir).toBeNull();

    const bc = await postJson(`${base}/init_broadcaster`, {
      host: "127.0.0.1",
      port: 29501,
      rank_offset: 1,
      inference_world_size: 2,
    });
    expect(bc.json).toEqual({ status: "ok" });
    const lora = await postJson(`${base}/load_lora_adapter`, { lora_name: "step-1", lora_path: weights });
    expect(lora.json).toEqual({ status: "ok" });
    expect((await getJson(`${base}/v1/models`)).data.map((m: { id: string }) => m.id)).toContain("step-1");

    P.proc.kill("SIGTERM");
    expect((await P.exit).code).toBe(0);
  });
});

// =================================================================================================
// SGLang: `python3 -m sglang.launch_server` reaches the stand-in through bin/python3 (a shim that
// execs the real interpreter for anything else). Behind the real sglang-router: test/e2e/sglang-router-standins.e2e.test.ts.
// =================================================================================================

/** A fake "real" interpreter: prints its argv, so the shim's pass-through is observable. */
function fakePython(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const p = path.join(dir, "python3");
  fs.writeFileSync(p, `#!/bin/sh\necho "fake-python3 from ${dir}: $*"\n`, { mode: 0o755 });
  return p;
}

describe("SGLang stand-in: flags and the python3 shim", () => {
  it("refuses an unknown flag, a bad choice, an abbreviation and a missing --model-path (exit 2, as argparse)", async () => {
    const unknown = await runToExit("python3", [...SGL, "--model-path", TINY, "--no-such-flag", "1"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/standin sglang\.launch_server: unrecognized\/invalid argument --no-such-flag/);
    const choice = await runToExit("python3", [...SGL, "--model-path", TINY, "--disaggregation-mode", "middle"]);
    expect(choice.code).toBe(2);
    expect(choice.stderr).toMatch(/--disaggregation-mode: invalid choice: 'middle'/);
    const abbrev = await runToExit("python3", [...SGL, "--model-path", TINY, "--served-model", "x"]);
    expect(abbrev.code).toBe(2);
    expect(abbrev.stderr).toMatch(/prefix abbreviation of --served-model-name/);
    const badInt = await runToExit("python3", [...SGL, "--model-path", TINY, "--tp-size", "two"]);
    expect(badInt.code).toBe(2);
    expect(badInt.stderr).toMatch(/--tp-size: invalid int value: 'two'/);
    // SGLang's human_readable_int: SI k/M/G/T with decimals, IEC Ki/Mi/Gi/Ti integers only, case-sensitive
    const iecDecimal = await runToExit("python3", [...SGL, "--model-path", TINY, "--context-length", "1.5Ki"]);
    expect(iecDecimal.code).toBe(2);
    expect(iecDecimal.stderr).toMatch(/--context-length: invalid int value: '1.5Ki'/);
    const upperK = await runToExit("python3", [...SGL, "--model-path", TINY, "--context-length", "32K"]);
    expect(upperK.code).toBe(2);
    for (const v of ["32Ki", "25.6k", "32768"])
      expect(
        (await runToExit("python3", [...SGL, "--model-path", TINY, "--context-length", v], { STANDIN_CHECK_ONLY: "1" }))
          .code,
      ).toBe(0);
    const noModel = await runToExit("python3", [...SGL, "--port", "30000"]);
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toMatch(/required: --model-path/);
  });

  it("accepts what the program emits (STANDIN_CHECK_ONLY) and refuses start-up errors with exit 1", async () => {
    const ok = await runToExit(
      "python3",
      [
        ...SGL,
        "--model-path",
        TINY,
        "--served-model-name",
        "tiny",
        "--host",
        "0.0.0.0",
        "--port",
        "30000",
        "--tp-size",
        "4",
        "--dp-size",
        "2",
        "--ep-size",
        "4",
        "--enable-dp-attention",
        "--mem-fraction-static",
        "0.85",
        "--context-length",
        "8192",
        "--nnodes",
        "2",
        "--node-rank",
        "1",
        "--dist-init-addr",
        "10.0.0.1:5000",
        "--disaggregation-mode",
        "decode",
        "--disaggregation-transfer-backend",
        "nixl",
        "--disaggregation-bootstrap-port",
        "8998",
        "--api-key",
        "k",
        "--enable-metrics",
      ],
      { STANDIN_CHECK_ONLY: "1" },
    );
    // --enable-dp-attention still works in 0.5.23 but is deprecated for --attn-dp-size
    expect(ok.stderr).toMatch(
      /'--enable-dp-attention' is deprecated and will be removed in a future release\. Use '--attn-dp-size <dp-size>' instead\./,
    );
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/argv OK/);
    const noAddr = await runToExit("python3", [
      ...SGL,
      "--model-path",
      TINY,
      "--nnodes",
      "2",
      "--node-rank",
      "0",
      "--tp-size",
      "2",
    ]);
    expect(noAddr.code).toBe(1);
    expect(noAddr.stderr).toMatch(/--nnodes 2 needs --dist-init-addr/);
    const rank = await runToExit("python3", [
      ...SGL,
      "--model-path",
      TINY,
      "--nnodes",
      "2",
      "--node-rank",
      "2",
      "--dist-init-addr",
      "127.0.0.1:1",
    ]);
    expect(rank.code).toBe(1);
    expect(rank.stderr).toMatch(/--node-rank 2: must be in \[0, --nnodes 2\)/);
  });

  it("the python3 shim execs the real interpreter for anything but -m sglang.launch_server", async () => {
    const real = fakePython(path.join(TMP, "real-py"));
    const viaEnv = await runToExit("python3", ["-m", "sglang_router.launch_router", "--help"], {
      STANDIN_REAL_PYTHON3: real,
    });
    expect(viaEnv.code).toBe(0);
    expect(viaEnv.stdout.trim()).toBe(`fake-python3 from ${path.dirname(real)}: -m sglang_router.launch_router --help`);
    // Without STANDIN_REAL_PYTHON3: the next python3 on PATH after the shim's own folder.
    const later = fakePython(path.join(TMP, "later-py"));
    const viaPath = await runToExit("python3", ["-c", "print(1)"], {
      PATH: `${BIN}:${BIN}:${path.dirname(later)}:${baseEnv.PATH}`,
    });
    expect(viaPath.stdout.trim()).toBe(`fake-python3 from ${path.dirname(later)}: -c print(1)`);
    // The stand-in itself runs under Node's own process name, never a real program's: the SLURM node
    // cleanup kills this user's leftovers by name and command line (templates/slurm/cleanup.sh.mustache).
    // That name is Node's to choose: `node` up to Node 22, `MainThread` on 24, `node-MainThread` on 26.
    const { P } = await sglServer([]);
    const comm = fs.readFileSync(`/proc/${P.proc.pid}/comm`, "utf8").trim();
    const nodeComm = spawnSync("node", ["-e", 'process.stdout.write(require("fs").readFileSync("/proc/self/comm"))']);
    expect(comm).toBe(nodeComm.stdout.toString().trim());
    const { programs, workers } = cleanupPatterns();
    expect(programs.test(comm), `${programs} against ${comm}`).toBe(false);
    const cmdline = fs.readFileSync(`/proc/${P.proc.pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    expect(workers.test(cmdline), `${workers} against ${cmdline}`).toBe(false);
    // ...while the same patterns do catch the real programs' names and SGLang's real server.
    expect(programs.test("vllm") && workers.test("python3 -m sglang.launch_server --port 1")).toBe(true);
    expect(P.stderr()).toMatch(/TEST STAND-IN python3 -m sglang\.launch_server/);
    P.proc.kill("SIGTERM");
    expect((await P.exit).code).toBe(0);
  });
});

/** The SLURM node cleanup's name and command-line patterns, as an SGLang island's script renders them. */
function cleanupPatterns(): { programs: RegExp; workers: RegExp } {
  const cfg = loadConfigText(
    'engine = "sglang"\n[model]\nname = "Qwen/Qwen3-8B"\n[slurm]\njob_name = "t"\nexclusive = true\n',
    "t.toml",
  );
  const plan = buildPlan(cfg, "t");
  const { script } = renderIslandScript(plan, plan.islands[0]);
  const quoted = (name: string) => new RegExp(script.match(new RegExp(`^${name}='([^']*)'$`, "m"))![1]);
  return { programs: quoted("programs"), workers: quoted("workers") };
}

describe("SGLang stand-in: HTTP surface in SGLang's shapes", () => {
  let base = "";
  const weights = path.join(TMP, "sgl-weights-step-1");
  beforeAll(async () => {
    fs.mkdirSync(weights, { recursive: true });
    ({ base } = await sglServer([
      "--served-model-name",
      "tiny",
      "--context-length",
      "64",
      "--tp-size",
      "2",
      "--enable-metrics",
    ]));
  });

  it("/health, /health_generate, /ping, /v1/models, /model_info, /server_info (and their /get_ forms)", async () => {
    for (const p of ["/health", "/health_generate", "/ping"]) {
      const r = await fetch(base + p);
      expect([p, r.status, await r.text()]).toEqual([p, 200, ""]);
    }
    const models = await getJson(`${base}/v1/models`);
    expect(models.object).toBe("list");
    expect(models.data).toHaveLength(1);
    expect(models.data[0]).toMatchObject({
      id: "tiny",
      object: "model",
      owned_by: "sglang",
      root: "tiny",
      max_model_len: 64,
    });
    expect((await getJson(`${base}/v1/models/tiny`)).id).toBe("tiny");
    const missing = await fetch(`${base}/v1/models/other`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.code).toBe("model_not_found");
    for (const p of ["/model_info", "/get_model_info"])
      expect(await getJson(base + p)).toMatchObject({
        model_path: TINY,
        served_model_name: "tiny",
        tokenizer_path: TINY,
        is_generation: true,
        preferred_sampling_params: null,
        weight_version: "default",
        disaggregation_mode: "null",
      });
    expect((await fetch(`${base}/ready`)).status).toBe(200);
    for (const p of ["/server_info", "/get_server_info"]) {
      const info = await getJson(base + p);
      expect(info).toMatchObject({
        model_path: TINY,
        served_model_name: "tiny",
        tp_size: 2,
        port: Number(new URL(base).port),
        context_length: 64,
        disaggregation_mode: "null",
        enable_metrics: true,
      });
      expect(info.version).toMatch(/standin/);
      expect(Array.isArray(info.internal_states)).toBe(true);
      expect(info.max_total_num_tokens).toBeGreaterThan(0);
    }
  });

  it("native /generate: text or input_ids, sampling_params, return_logprob, meta_info", async () => {
    const a = await postJson(`${base}/generate`, {
      text: "the of and to",
      sampling_params: { max_new_tokens: 5, ignore_eos: true },
    });
    expect(a.status).toBe(200);
    expect(typeof a.json.text).toBe("string");
    expect(a.json.output_ids).toHaveLength(5);
    expect(a.json.meta_info).toMatchObject({
      prompt_tokens: 4,
      completion_tokens: 5,
      finish_reason: { type: "length", length: 5 },
      weight_version: "default",
    });
    expect(a.json.meta_info.output_token_logprobs).toBeUndefined();
    const ids = a.json.output_ids.slice(0, 3);
    const b = await postJson(`${base}/generate`, {
      input_ids: ids,
      sampling_params: { max_new_tokens: 3, ignore_eos: true },
      return_logprob: true,
      logprob_start_len: 0,
      top_logprobs_num: 2,
      return_text_in_logprobs: true,
    });
    expect(b.json.meta_info.prompt_tokens).toBe(3);
    expect(b.json.meta_info.input_token_logprobs).toHaveLength(3);
    expect(b.json.meta_info.input_token_logprobs[0][0]).toBeNull(); // no logprob for the first prompt token
    expect(b.json.meta_info.input_token_logprobs.map((t: unknown[]) => t[1])).toEqual(ids);
    const out = b.json.meta_info.output_token_logprobs;
    expect(out.map((t: unknown[]) => t[1])).toEqual(b.json.output_ids);
    for (const [lp, , text] of out) {
      expect(lp).toBeLessThan(0);
      expect(typeof text).toBe("string");
    }
    expect(b.json.meta_info.output_top_logprobs[0]).toHaveLength(2);
    // a batch answers a list; the same prompt twice hits the prefix cache
    const batch = await postJson(`${base}/generate`, {
      text: ["the of and to", "x y"],
      sampling_params: { max_new_tokens: 2 },
    });
    expect(batch.json).toHaveLength(2);
    expect(batch.json[0].meta_info.cached_tokens).toBeGreaterThan(0);
    // too long for --context-length 64
    const long = await postJson(`${base}/generate`, { text: "w ".repeat(80), sampling_params: { max_new_tokens: 2 } });
    expect(long.status).toBe(400);
    expect(long.json).toMatchObject({ object: "error", code: 400 });
    expect(long.json.message).toMatch(/longer than the model's context length \(64 tokens\)/);
  });

  it("OpenAI completions and chat (openai client): logprobs, token ids, streams", async () => {
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "none", maxRetries: 0 });
    const c = await client.completions.create({
      model: "tiny",
      prompt: "the of and",
      max_tokens: 4,
      logprobs: 2,
      return_token_ids: true,
    } as any);
    const ch = c.choices[0] as any;
    expect(c.object).toBe("text_completion");
    expect(ch.logprobs.tokens).toHaveLength(ch.token_ids.length);
    expect(Object.keys(ch.logprobs.top_logprobs[0])).toHaveLength(2);
    expect(ch.prompt_token_ids).toHaveLength(3);
    expect(["stop", "length"]).toContain(ch.finish_reason);
    expect("matched_stop" in ch).toBe(true);
    // the same tokens as the native API for the same prompt ids
    const native = await postJson(`${base}/generate`, {
      input_ids: ch.prompt_token_ids,
      sampling_params: { max_new_tokens: 4 },
    });
    expect(native.json.output_ids).toEqual(ch.token_ids);
    const chat = await client.chat.completions.create({
      model: "tiny",
      messages: [{ role: "user", content: "hello there" }],
      max_tokens: 3,
      logprobs: true,
      top_logprobs: 2,
      return_token_ids: true,
    } as any);
    const cc = chat.choices[0] as any;
    expect(chat.object).toBe("chat.completion");
    expect(cc.message.role).toBe("assistant");
    expect(cc.logprobs.content.length).toBe(cc.response_token_ids.length); // 0.5.23's chat name for them
    expect(cc.logprobs.content[0].top_logprobs).toHaveLength(2);
    expect(cc.prompt_token_ids.length).toBe(chat.usage!.prompt_tokens);
    const stream = await client.chat.completions.create({
      model: "tiny",
      messages: [{ role: "user", content: "hello there" }],
      max_tokens: 3,
      stream: true,
      stream_options: { include_usage: true },
    });
    const noIdsInStreams = await postJson(`${base}/v1/chat/completions`, {
      model: "tiny",
      messages: [{ role: "user", content: "x" }],
      stream: true,
      return_token_ids: true,
    });
    expect(noIdsInStreams.status).toBe(400);
    let text = "";
    let usage: any = null;
    for await (const part of stream) {
      text += part.choices[0]?.delta?.content ?? "";
      if (part.usage) usage = part.usage;
    }
    expect(text).toBe(cc.message.content);
    expect(usage.completion_tokens).toBe(chat.usage!.completion_tokens);
  });

  it("/update_weights_from_disk, /flush_cache and /metrics with SGLang's sglang: names", async () => {
    const bad = await postJson(`${base}/update_weights_from_disk`, { model_path: path.join(TMP, "no-such-dir") });
    expect(bad.status).toBe(400);
    expect(bad.json.success).toBe(false);
    const ok = await postJson(`${base}/update_weights_from_disk`, { model_path: weights, weight_version: "step-1" });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({
      success: true,
      message: "Succeeded to update model weights. Weight version updated to step-1.",
      num_paused_requests: 0,
    });
    expect(await getJson(`${base}/model_info`)).toMatchObject({ model_path: weights, weight_version: "step-1" });
    const flush = await fetch(`${base}/flush_cache`, { method: "POST" });
    expect(flush.status).toBe(200);
    expect(await flush.text()).toMatch(/^Cache flushed\./);
    const before = await (await fetch(`${base}/metrics`)).text();
    await postJson(`${base}/generate`, {
      text: "metrics please",
      sampling_params: { max_new_tokens: 3, ignore_eos: true },
    });
    const after = await (await fetch(`${base}/metrics`)).text();
    for (const name of [
      "sglang:num_running_reqs",
      "sglang:num_queue_reqs",
      "sglang:token_usage",
      "sglang:cache_hit_rate",
      "sglang:gen_throughput",
      "sglang:max_total_num_tokens",
    ])
      expect(after, name).toMatch(
        new RegExp(
          `^${name}\\{model_name="tiny",engine_type="unified",tp_rank="0",pp_rank="0",moe_ep_rank="0"\\} `,
          "m",
        ),
      );
    expect(metric(after, "sglang:prompt_tokens_total") - metric(before, "sglang:prompt_tokens_total")).toBe(2);
    expect(metric(after, "sglang:generation_tokens_total") - metric(before, "sglang:generation_tokens_total")).toBe(3);
    expect(metric(after, "sglang:num_requests_total") - metric(before, "sglang:num_requests_total")).toBe(1);
    expect(metric(after, "sglang:e2e_request_latency_seconds_count")).toBeGreaterThan(0);
    expect(after).not.toMatch(/^vllm:/m);
  });

  it("serves no /metrics without --enable-metrics, as SGLang", async () => {
    const { base: b2 } = await sglServer([]);
    expect((await fetch(`${b2}/metrics`)).status).toBe(404);
  });

  it("lists --lora-paths adapters in /v1/models, and answers /health 503 while warming up", async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const P = start(
      "python3",
      [
        ...SGL,
        "--model-path",
        TINY,
        "--port",
        String(port),
        "--enable-lora",
        "--lora-paths",
        "sql=/loras/sql",
        "/loras/chat",
      ],
      { STANDIN_SGLANG_WARMUP_MS: "1500" },
    );
    await waitHttp(`${base}/ping`, 200, 10000, P);
    expect((await fetch(`${base}/health`)).status).toBe(503);
    await waitHttp(`${base}/health`, 200, 10000, P);
    const ids = (await getJson(`${base}/v1/models`)).data.map(
      (m: { id: string; root: string; parent: string | null }) => [m.id, m.root, m.parent],
    );
    expect(ids).toEqual([
      [TINY, TINY, null],
      ["sql", "/loras/sql", TINY],
      ["/loras/chat", "/loras/chat", TINY],
    ]);
  });
});

describe("SGLang stand-in: --api-key as SGLang's middleware enforces it", () => {
  it("every path but /health* and /metrics needs Authorization: Bearer <key>", async () => {
    const { base } = await sglServer(["--api-key", "sgl-secret", "--enable-metrics"]);
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect((await fetch(`${base}/health_generate`)).status).toBe(200);
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
    for (const p of ["/v1/models", "/model_info", "/server_info", "/get_server_info"]) {
      const r = await fetch(base + p);
      expect([p, r.status, await r.json()]).toEqual([p, 401, { error: "Unauthorized" }]);
      const w = await fetch(base + p, { headers: { authorization: "Bearer wrong" } });
      expect([p, w.status]).toEqual([p, 401]);
      const k = await fetch(base + p, { headers: { authorization: "Bearer sgl-secret" } });
      expect([p, k.status]).toEqual([p, 200]);
    }
    expect((await postJson(`${base}/generate`, { text: "x", sampling_params: { max_new_tokens: 1 } })).status).toBe(
      401,
    );
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "sgl-secret", maxRetries: 0 });
    expect((await client.completions.create({ model: TINY, prompt: "x", max_tokens: 2 })).choices).toHaveLength(1);
    const wrong = new OpenAI({ baseURL: `${base}/v1`, apiKey: "nope", maxRetries: 0 });
    await expect(wrong.completions.create({ model: TINY, prompt: "x", max_tokens: 2 })).rejects.toMatchObject({
      status: 401,
    });
    // admin routes take --api-key when there is no --admin-api-key
    expect((await fetch(`${base}/flush_cache`, { method: "POST" })).status).toBe(401);
    expect(
      (await fetch(`${base}/flush_cache`, { method: "POST", headers: { authorization: "bearer sgl-secret" } })).status,
    ).toBe(200);
    // the key never reaches /server_info
    const info = await (await fetch(`${base}/server_info`, { headers: { authorization: "Bearer sgl-secret" } })).text();
    expect(info).not.toContain("sgl-secret");
  });
});

describe("SGLang stand-in: --admin-api-key guards the admin routes", () => {
  it("weight updates and flush_cache take the admin key; inference routes the api key", async () => {
    const { base } = await sglServer(["--api-key", "user-key", "--admin-api-key", "admin-key"]);
    const as = (key: string) => ({
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model_path: TMP }),
    });
    expect((await fetch(`${base}/update_weights_from_disk`, as("user-key"))).status).toBe(401);
    expect((await fetch(`${base}/update_weights_from_disk`, as("admin-key"))).status).toBe(200);
    expect((await fetch(`${base}/v1/models`, { headers: { authorization: "Bearer admin-key" } })).status).toBe(401);
    expect((await fetch(`${base}/v1/models`, { headers: { authorization: "Bearer user-key" } })).status).toBe(200);
  });
});

/** A multi-node SGLang server's shared flags: tp 2 per node over `nodes` nodes, joined at `dist`. */
const groupArgs = (model: string, nodes: number, dist: number) => [
  "--model-path",
  model,
  "--host",
  "127.0.0.1",
  "--tp-size",
  String(2 * nodes),
  "--nnodes",
  String(nodes),
  "--dist-init-addr",
  `127.0.0.1:${dist}`,
];

describe("SGLang stand-in: multi-node join at --dist-init-addr", () => {
  it("rank 0 serves HTTP only once every rank joined; ranks > 0 serve SGLang's dummy health server", async () => {
    const [p0, p1, p2, dist] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const common = groupArgs(TINY, 3, dist);
    const R0 = start("python3", [...SGL, ...common, "--port", String(p0), "--node-rank", "0"]);
    await waitTcp(dist);
    const R1 = start("python3", [...SGL, ...common, "--port", String(p1), "--node-rank", "1"]);
    // rank 1 joined, but rank 2 has not: neither rank 0 nor rank 1 serves yet
    await sleep(1000);
    const refused = (port: number) =>
      fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.status,
        () => "refused",
      );
    expect(await refused(p1)).toBe("refused");
    // a rank that does not match rank 0 is refused and exits 1
    const bad = await runToExit("python3", [
      ...SGL,
      ...groupArgs("other/model", 3, dist),
      "--port",
      String(p2),
      "--node-rank",
      "2",
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/refused it: model differs from rank 0's/);
    expect(await refused(p0)).toBe("refused");
    const R2 = start("python3", [...SGL, ...common, "--port", String(p2), "--node-rank", "2"]);
    await waitHttp(`http://127.0.0.1:${p0}/health`, 200, 10000, R0);
    expect((await getJson(`http://127.0.0.1:${p0}/standin/state`)).joined_ranks).toEqual([0, 1, 2]);
    await waitHttp(`http://127.0.0.1:${p1}/health`, 200, 10000, R1);
    await waitHttp(`http://127.0.0.1:${p2}/health_generate`, 200, 10000, R2);
    expect((await fetch(`http://127.0.0.1:${p1}/v1/models`)).status).toBe(404);
    expect(
      (await postJson(`http://127.0.0.1:${p0}/generate`, { text: "x", sampling_params: { max_new_tokens: 1 } })).status,
    ).toBe(200);
    // rank 0 stops: the other ranks go with it
    R0.proc.kill("SIGTERM");
    expect((await R0.exit).code).toBe(0);
    expect((await R1.exit).code).toBe(0);
    expect((await R2.exit).code).toBe(0);
  });

  it("rank 0 exits 1 when a joined rank dies (as NCCL would make it)", async () => {
    const [p0, p1, dist] = await Promise.all([freePort(), freePort(), freePort()]);
    const common = groupArgs(TINY, 2, dist);
    const R0 = start("python3", [...SGL, ...common, "--port", String(p0), "--node-rank", "0"]);
    const R1 = start("python3", [...SGL, ...common, "--port", String(p1), "--node-rank", "1"]);
    await waitHttp(`http://127.0.0.1:${p0}/health`, 200, 10000, R0);
    R1.proc.kill("SIGKILL");
    expect((await R0.exit).code).toBe(1);
    expect(R0.stderr()).toMatch(/lost node rank 1/);
  });
});

describe("SGLang stand-in: prefill/decode bootstrap", () => {
  it("a prefill refuses requests without bootstrap fields; a decode fails when the prefill bootstrap is unreachable", async () => {
    const bp = await freePort();
    const { port: pp } = await sglServer([
      "--disaggregation-mode",
      "prefill",
      "--disaggregation-bootstrap-port",
      String(bp),
    ]);
    const { port: dp } = await sglServer(["--disaggregation-mode", "decode", "--enable-metrics"], {
      STANDIN_SGLANG_KV_TIMEOUT_MS: "3000",
    });
    const body = { model: TINY, prompt: "the of and", max_tokens: 4 };
    const noBootstrap = await postJson(`http://127.0.0.1:${pp}/v1/completions`, body);
    expect(noBootstrap.status).toBe(400);
    expect(noBootstrap.json.message).toMatch(/no bootstrap_host\/bootstrap_room/);
    // the bootstrap server answers as SGLang's does
    expect(await (await fetch(`http://127.0.0.1:${bp}/health`)).text()).toBe("OK");
    expect((await fetch(`http://127.0.0.1:${bp}/route`)).status).toBe(400);
    expect(
      await getJson(
        `http://127.0.0.1:${bp}/route?prefill_dp_rank=-1&prefill_cp_rank=-1&target_tp_rank=-1&target_pp_rank=-1`,
      ),
    ).toMatchObject({ attn_tp_size: 1, dp_size: 1, pp_size: 1, prefill_http_port: pp });
    // decode: bootstrap server unreachable -> the request fails, and is counted
    const deadPort = await freePort();
    const unreachable = await postJson(`http://127.0.0.1:${dp}/v1/completions`, {
      ...body,
      bootstrap_host: "127.0.0.1",
      bootstrap_port: deadPort,
      bootstrap_room: 42,
    });
    expect(unreachable.status).toBe(500);
    expect(unreachable.json.message).toMatch(
      new RegExp(`cannot reach the prefill bootstrap server 127.0.0.1:${deadPort} for bootstrap_room 42`),
    );
    expect(
      metric(await (await fetch(`http://127.0.0.1:${dp}/metrics`)).text(), "sglang:num_bootstrap_failed_reqs_total"),
    ).toBe(1);
    // no bootstrap_port (sglang-router sends null for `--prefill URL` without one): SGLang dials host:None
    const noPort = await postJson(`http://127.0.0.1:${dp}/v1/completions`, {
      ...body,
      bootstrap_host: "127.0.0.1",
      bootstrap_port: null,
      bootstrap_room: 44,
    });
    expect(noPort.status).toBe(500);
    expect(noPort.json.message).toMatch(/names no bootstrap_port/);
    // reachable, but no prefill request with that room ever comes -> fails after the transfer timeout
    const orphan = await postJson(`http://127.0.0.1:${dp}/v1/completions`, {
      ...body,
      bootstrap_host: "127.0.0.1",
      bootstrap_port: bp,
      bootstrap_room: 43,
    });
    expect(orphan.status).toBe(500);
    expect(orphan.json.message).toMatch(/no prefill request with bootstrap_room 43/);
    // the same room on both sides (a u63, past 2^53): both answer; the decode's tokens are the unified ones
    const room = "9223372036854775001";
    const raw = (port: number) =>
      fetch(`http://127.0.0.1:${port}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: `{"model":"${TINY}","prompt":"the of and","max_tokens":4,"ignore_eos":true,"bootstrap_host":"127.0.0.1","bootstrap_port":${bp},"bootstrap_room":${room}}`,
      }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));
    const [pr, dr] = await Promise.all([raw(pp), raw(dp)]);
    expect([pr.status, dr.status]).toEqual([200, 200]);
    expect(pr.json.usage.completion_tokens).toBe(1); // the prefill computes one token
    expect(dr.json.usage.completion_tokens).toBe(4);
    expect((await getJson(`http://127.0.0.1:${dp}/standin/state`)).last_request.bootstrap_room).toBe(room);
    const { base: unified } = await sglServer([]);
    expect((await postJson(`${unified}/v1/completions`, { ...body, ignore_eos: true })).json.choices[0].text).toBe(
      dr.json.choices[0].text,
    );
  });
});
