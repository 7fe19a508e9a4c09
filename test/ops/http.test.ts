import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureText, getText, HTTP_TIMEOUT_MS, probeAll } from "../../components/ops/http";

/** One local server with the routes the probes use, plus a silent one and one that cuts its answer. */
let server: http.Server;
let base = "";
beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === "/health") res.writeHead(200).end();
    else if (req.url === "/v1/models") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ data: [{ id: "m" }], auth: req.headers.authorization ?? null }));
    } else if (req.url === "/cut") {
      res.writeHead(200, { "content-length": "100" });
      res.write("partial");
      setTimeout(() => res.socket?.destroy(), 20);
    } else if (req.url !== "/silent") res.writeHead(404).end("no"); // /silent never answers
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("HTTP for the fleet CLI", () => {
  it("returns status and body, and sends the engines' API key when the caller has it", async () => {
    expect(await getText(`${base}/health`)).toEqual({ status: 200, body: "" });
    expect(await getText(`${base}/nope`)).toEqual({ status: 404, body: "no" });
    const before = process.env.VLLM_API_KEY;
    process.env.VLLM_API_KEY = "k1";
    try {
      expect(JSON.parse((await getText(`${base}/v1/models`)).body).auth).toBe("Bearer k1");
    } finally {
      if (before === undefined) delete process.env.VLLM_API_KEY;
      else process.env.VLLM_API_KEY = before;
    }
  });

  it("a silent server fails within the deadline and reads as a timeout", async () => {
    const t0 = Date.now();
    const err = await getText(`${base}/silent`, 200).catch((e: unknown) => e);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(failureText(err)).toBe(`timeout after ${HTTP_TIMEOUT_MS} ms`);
  });

  it("a refused connection reads as its socket error code; a cut-off answer and a non-HTTP URL are errors", async () => {
    expect(failureText(await getText("http://127.0.0.1:9/health").catch((e: unknown) => e))).toBe("ECONNREFUSED");
    await expect(getText(`${base}/cut`)).rejects.toThrow();
    await expect(getText("ftp://127.0.0.1/x")).rejects.toThrow(/not an http\(s\) URL/);
  });

  it("probes /health and /v1/models of every URL at once", async () => {
    const probes = await probeAll([`${base}/v1`, `${base}/v1/`, "http://127.0.0.1:9/v1"], "m");
    expect(probes.get(`${base}/v1`)).toEqual({ health: 200, models: 200, listsModel: true });
    expect(probes.get(`${base}/v1/`)).toEqual({ health: 200, models: 200, listsModel: true });
    expect(probes.get("http://127.0.0.1:9/v1")).toEqual({
      health: null,
      models: null,
      listsModel: false,
      error: "ECONNREFUSED",
    });
    expect((await probeAll([`${base}/v1`], "other")).get(`${base}/v1`)).toEqual({
      health: 200,
      models: 200,
      listsModel: false,
    });
  });
});
