import type { Probe } from "./status";

/** Every HTTP call the CLI makes has a deadline: a hung engine must not hang `fleet status`. */
export const HTTP_TIMEOUT_MS = 3000;

/** The API key the engines were given, if the caller has it: vLLM checks it on /v1 routes. */
const authHeaders = (): Record<string, string> => (process.env.VLLM_API_KEY ? { authorization: `Bearer ${process.env.VLLM_API_KEY}` } : {});

export async function getText(url: string, timeoutMs = HTTP_TIMEOUT_MS): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { headers: authHeaders(), signal: AbortSignal.timeout(timeoutMs) });
  return { status: res.status, body: await res.text() };
}

/** Why a request failed, in a few words: a timeout, a socket error code, or the message. */
export const failureText = (err: unknown): string => {
  const e = err as { name?: string; cause?: { code?: string }; message?: string };
  if (e.name === "TimeoutError") return `timeout after ${HTTP_TIMEOUT_MS} ms`;
  return e.cause?.code ?? e.message ?? String(err);
};

/** /health on the origin and /v1/models under the base URL, both at once. */
export async function probe(baseUrl: string, model: string): Promise<Probe> {
  const origin = new URL(baseUrl).origin;
  const [health, models] = await Promise.allSettled([getText(`${origin}/health`), getText(`${baseUrl.replace(/\/$/, "")}/models`)]);
  let listsModel = false;
  if (models.status === "fulfilled" && models.value.status === 200) {
    try {
      listsModel = (JSON.parse(models.value.body) as { data?: { id?: string }[] }).data?.some((m) => m.id === model) ?? false;
    } catch {
      listsModel = false;
    }
  }
  const error = health.status === "rejected" && models.status === "rejected" ? failureText(health.reason) : undefined;
  return { health: health.status === "fulfilled" ? health.value.status : null, listsModel, ...(error ? { error } : {}) };
}

/** Probes every URL in parallel (one round, however many engines). */
export async function probeAll(urls: string[], model: string): Promise<Map<string, Probe>> {
  const unique = [...new Set(urls)];
  const results = await Promise.all(unique.map((u) => probe(u, model)));
  return new Map(unique.map((u, i) => [u, results[i]]));
}
