import * as http from "node:http";
import * as https from "node:https";
import { sharedRoutes } from "../plan/engines";
import type { Probe } from "./status";

/** Every HTTP call the CLI makes has a deadline: a hung engine must not hang `fleet status`. */
export const HTTP_TIMEOUT_MS = 3000;

/** The API key the engines were given, if the caller has it: vLLM checks it on /v1 routes. */
const authHeaders = (apiKey: string | undefined): Record<string, string> =>
  apiKey ? { authorization: `Bearer ${apiKey}` } : {};

/** The error a request that missed its deadline fails with (failureText names it). */
class TimeoutError extends Error {
  override name = "TimeoutError";
}

/**
 * GET with a deadline for the whole exchange, body included. node:http rather than fetch: a fleet
 * probe is one small GET per engine, and fetch's per-request machinery (web streams, abort signals,
 * its own header lists) costs about three times the CPU, which is what grows with the engine count.
 * The default agents keep connections alive, so `metrics --watch` reuses them between scrapes.
 */
export function getText(
  url: string,
  timeoutMs = HTTP_TIMEOUT_MS,
  apiKey = process.env.VLLM_API_KEY,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") return reject(new Error(`${url}: not an http(s) URL`));
    let timer: NodeJS.Timeout | undefined;
    const fail = (err: Error) => {
      clearTimeout(timer);
      reject(err);
    };
    const req = (u.protocol === "https:" ? https : http).get(u, { headers: authHeaders(apiKey) }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body });
      });
      res.on("error", fail);
      res.on("close", () => res.complete || fail(new Error(`${url}: the response was cut off`)));
    });
    req.on("error", fail);
    // Rejects first, so the socket error the destroy causes cannot pass for the reason.
    timer = setTimeout(() => {
      fail(new TimeoutError(`${url}: no answer within ${timeoutMs} ms`));
      req.destroy();
    }, timeoutMs);
  });
}

/** Why a request failed, in a few words: a timeout, a socket error code, or the message. */
export const failureText = (err: unknown): string => {
  const e = err as { name?: string; code?: string; cause?: { code?: string }; message?: string };
  if (e.name === "TimeoutError") return `timeout after ${HTTP_TIMEOUT_MS} ms`;
  return e.code ?? e.cause?.code ?? e.message ?? String(err);
};

/**
 * The engine's health and model-list routes on the URL's origin (with the fleet's key, when known),
 * both at once. Routers answer on the same OpenAI-compatible paths as the engines behind them.
 */
export async function probe(baseUrl: string, model: string, apiKey?: string): Promise<Probe> {
  const origin = new URL(baseUrl).origin;
  const routes = sharedRoutes();
  const [health, models] = await Promise.allSettled([
    getText(`${origin}${routes.health}`, HTTP_TIMEOUT_MS, apiKey),
    getText(`${origin}${routes.models}`, HTTP_TIMEOUT_MS, apiKey),
  ]);
  let listsModel = false;
  if (models.status === "fulfilled" && models.value.status === 200) {
    try {
      listsModel =
        (JSON.parse(models.value.body) as { data?: { id?: string }[] }).data?.some((m) => m.id === model) ?? false;
    } catch {
      listsModel = false;
    }
  }
  const error = health.status === "rejected" && models.status === "rejected" ? failureText(health.reason) : undefined;
  return {
    health: health.status === "fulfilled" ? health.value.status : null,
    models: models.status === "fulfilled" ? models.value.status : null,
    listsModel,
    ...(error ? { error } : {}),
  };
}

/**
 * Each engine's weight version (`route`: Engine.routes.weightVersion, its "weight_version" field),
 * added to its probe; null where the route does not answer one (vLLM without VLLM_SERVER_DEV_MODE).
 * Engines only: a router would pass the path to one of its workers.
 */
export async function probeWeightVersions(
  probes: Map<string, Probe>,
  engineUrls: string[],
  route: string,
  apiKey?: string,
): Promise<void> {
  await Promise.all(
    [...new Set(engineUrls)].map(async (u) => {
      const p = probes.get(u);
      if (!p || p.health !== 200) return;
      try {
        const r = await getText(`${new URL(u).origin}${route}`, HTTP_TIMEOUT_MS, apiKey);
        const v = r.status === 200 ? (JSON.parse(r.body) as { weight_version?: unknown }).weight_version : undefined;
        p.weightVersion = v === undefined || v === null ? null : String(v);
      } catch {
        p.weightVersion = null;
      }
    }),
  );
}

/** Probes every URL in parallel (one round, however many engines). */
export async function probeAll(urls: string[], model: string, apiKey?: string): Promise<Map<string, Probe>> {
  const unique = [...new Set(urls)];
  const results = await Promise.all(unique.map((u) => probe(u, model, apiKey)));
  return new Map(unique.map((u, i) => [u, results[i]]));
}
