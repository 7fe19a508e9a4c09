import { describe, expect, it } from "vitest";
import { engineMetrics, parseScrape, totalMetrics, wantedLines } from "../../components/ops/metrics";

/** Two DP ranks of one engine process, as vLLM V1 labels them. */
function text(v: {
  running: [number, number];
  prompt: number;
  gen: number;
  q: number;
  h: number;
  kv: [number, number];
  ttft: [number, number];
}) {
  return `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} ${v.running[0]}
vllm:num_requests_running{engine="1",model_name="m"} ${v.running[1]}
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 2.0
vllm:num_requests_waiting{engine="1",model_name="m"} 1.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} ${v.kv[0]}
vllm:kv_cache_usage_perc{engine="1",model_name="m"} ${v.kv[1]}
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="m"} ${v.prompt}
vllm:prompt_tokens_total{engine="1",model_name="m"} ${v.prompt}
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="m"} ${v.gen}
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="m"} ${v.q}
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="m"} ${v.h}
# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="stop",model_name="m"} 3.0
vllm:request_success_total{engine="0",finished_reason="length",model_name="m"} 4.0
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="m"} 1.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} ${v.ttft[1]}
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} ${v.ttft[1]}
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} ${v.ttft[0]}
`;
}

describe("vLLM /metrics, reduced", () => {
  const a = parseScrape(
    text({ running: [1, 2], prompt: 100, gen: 40, q: 100, h: 20, kv: [0.2, 0.4], ttft: [0.5, 5] }),
    10_000,
  );
  const b = parseScrape(
    text({ running: [3, 0], prompt: 400, gen: 240, q: 300, h: 170, kv: [0.5, 0.7], ttft: [1.7, 11] }),
    12_000,
  );

  it("sums series across ranks and labels (vec-inf keeps only the last series)", () => {
    expect(a).toMatchObject({
      running: 3,
      waiting: 3,
      promptTokens: 200,
      generationTokens: 40,
      prefixQueries: 100,
      prefixHits: 20,
      requests: 7,
    });
    expect(a.kvUsage).toBeCloseTo(0.3);
  });

  it("parses only the wanted families: histograms, _created series and other families are dropped before parsing, unchanged numbers", () => {
    const extra = `# HELP vllm:prompt_tokens_created Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_created gauge
vllm:prompt_tokens_created{engine="0",model_name="m"} 1.7e+09
# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",engine="0"} 1.0
# TYPE python_gc_objects_collected_total counter
python_gc_objects_collected_total{generation="0"} 123.0
`;
    const full = text({ running: [1, 2], prompt: 100, gen: 40, q: 100, h: 20, kv: [0.2, 0.4], ttft: [0.5, 5] }) + extra;
    const kept = wantedLines(full);
    expect(kept).not.toMatch(/time_to_first_token|_created|cache_config_info|python_gc/);
    expect(kept).toContain('vllm:request_success_total{engine="0",finished_reason="length",model_name="m"} 4.0');
    expect(kept.split("\n").filter((l) => l && !l.startsWith("#"))).toHaveLength(13);
    expect(parseScrape(full, 10_000)).toEqual(a);
    // Labels with spaces, braces and escaped quotes stay the parser's business.
    expect(
      parseScrape(
        '# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="a {b} \\"c\\""} 4\n',
        0,
      ).running,
    ).toBe(4);
  });

  it("rates come from counter deltas over the window; gauges are the latest", () => {
    const m = engineMetrics(b, a);
    expect(m).toMatchObject({
      running: 3,
      waiting: 3,
      promptTps: 300,
      generationTps: 100,
      requestsPerS: 0,
      windowS: 2,
    });
    expect(m.prefixHitRate).toBeCloseTo(150 / 200);
    expect(m.kvUsage).toBeCloseTo(0.6);
  });

  it("the first scrape has no rates, only the lifetime hit rate; a restart gives no rate rather than a negative or sticky one", () => {
    expect(engineMetrics(a)).toMatchObject({ promptTps: null, generationTps: null, windowS: null, prefixHitRate: 0.2 });
    const restarted = engineMetrics(a, b);
    expect(restarted).toMatchObject({ promptTps: null, generationTps: null, requestsPerS: null });
  });

  it("the fleet total sums throughput and load and averages KV usage", () => {
    const t = totalMetrics([engineMetrics(b, a), engineMetrics(b, a)]);
    expect(t).toMatchObject({ running: 6, waiting: 6, promptTps: 600, generationTps: 200 });
    expect(t.kvUsage).toBeCloseTo(0.6);
  });
});
