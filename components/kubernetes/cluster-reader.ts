/*
 * Reads a fleet's workloads, pods and events from the API server for readiness.ts: the waiter that
 * `pulumi up` runs (bin/k8s-wait.ts) and `fleet status`. Credentials come from a kubeconfig as
 * kubectl reads it, through @kubernetes/client-node (tokens, client certificates, exec plugins such
 * as EKS's and GKE's); requests are plain GETs whose JSON is kept as the API server wrote it (the
 * client's typed models turn timestamps into Dates and drop nothing we need, but raw JSON is what
 * kubectl -o json shows and what the tests' snapshots hold). Loaded lazily: the CLIs that never
 * talk to a cluster do not pay for it.
 */
import * as http from "node:http";
import * as https from "node:https";
import type { ClusterAccess, PodAnswer } from "../target";
import { refKey, type ClusterSnapshot, type KubeEvent, type KubeObject, type WorkloadRef } from "./readiness";

/** The API server did not answer as expected: the message says which request and what came back. */
export class ClusterReadError extends Error {}

const PATHS: Record<WorkloadRef["kind"], string> = {
  StatefulSet: "/apis/apps/v1/namespaces/%s/statefulsets/",
  Deployment: "/apis/apps/v1/namespaces/%s/deployments/",
  LeaderWorkerSet: "/apis/leaderworkerset.x-k8s.io/v1/namespaces/%s/leaderworkersets/",
};

export interface ClusterReader {
  /** The API server's URL, for messages. */
  server: string;
  snapshot(namespace: string, workloads: WorkloadRef[], podSelector?: string): Promise<ClusterSnapshot>;
  /**
   * GET `path` on a pod's `port` through the API server's pod proxy (the pods' addresses are
   * in-cluster): its JSON, or undefined when the pod, its port or its answer is not there.
   */
  podGet(namespace: string, pod: string, port: number, path: string): Promise<unknown>;
  /** The same for a text answer (Prometheus exposition): the text, or why there is none. */
  podProxyText(namespace: string, pod: string, port: number, path: string): Promise<PodText>;
  /** A ConfigMap's data; undefined when the API server says it does not exist (404); throws on any other answer. */
  configMapData(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  /** The last `lines` lines of a container's log (the pod log API, as `kubectl logs --tail`). */
  podLog(namespace: string, pod: string, container: string, lines: number): Promise<PodText>;
  /** An object's annotations (`pulumi up`: a workload's, release-observe.ts); undefined when it does not exist (404); throws on any other answer. */
  objectAnnotations(path: string): Promise<Record<string, string> | undefined>;
  /** A JSON merge patch of an API path (`fleet wake`: a scale subresource, a ConfigMap's key); throws unless 200. */
  mergePatch(path: string, body: unknown): Promise<void>;
}

/** A ConfigMap's API path. */
export const configMapPath = (namespace: string, name: string) =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${encodeURIComponent(name)}`;

/** Why the API server refused: its Status message, or the start of its text when that is not JSON. */
function apiMessage(text: string): string {
  try {
    return (JSON.parse(text) as { message?: string }).message ?? text.slice(0, 300);
  } catch {
    return text.slice(0, 300);
  }
}

/** A pod's answer through the API server, or why there is none (said, never guessed). */
export type PodText = PodAnswer;

export async function clusterReader(access: ClusterAccess): Promise<ClusterReader> {
  // An ES module (client-node 1.x): Node 20.19+ loads it through require(); loaded here, when needed.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const k8s = require("@kubernetes/client-node") as typeof import("@kubernetes/client-node");
  const kc = new k8s.KubeConfig();
  if (access.kubeconfigData !== undefined) kc.loadFromString(access.kubeconfigData);
  else if (access.kubeconfigPath !== undefined) kc.loadFromFile(access.kubeconfigPath);
  else kc.loadFromDefault();
  if (access.context) kc.setCurrentContext(access.context);
  const cluster = kc.getCurrentCluster();
  if (!cluster)
    throw new ClusterReadError(
      `the kubeconfig has no cluster for context "${kc.getCurrentContext() || "(none)"}": set kubeconfig (and context) in the stack's Pulumi config, or KUBECONFIG`,
    );
  const server = cluster.server.replace(/\/+$/, "");

  type Answer = { status: number; body?: { message?: string; items?: unknown[] } };
  /** GET `path` on the API server: its status and text. */
  async function fetchText(path: string, accept: string, patch?: unknown): Promise<{ status: number; text: string }> {
    const method = patch === undefined ? "GET" : "PATCH";
    const headers: Record<string, string> = { Accept: accept };
    if (patch !== undefined) headers["Content-Type"] = "application/merge-patch+json";
    const opts: https.RequestOptions = { method, headers, timeout: 30_000 };
    await kc.applyToHTTPSOptions(opts);
    const mod = server.startsWith("http:") ? http : https;
    return new Promise((resolve, reject) => {
      const req = mod.request(server + path, opts, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on("timeout", () => req.destroy(new Error("no answer within 30 s")));
      req.on("error", (e) => reject(new ClusterReadError(`${method} ${server}${path}: ${e.message}`)));
      req.end(patch === undefined ? undefined : JSON.stringify(patch));
    });
  }
  async function get(path: string): Promise<Answer> {
    const { status, text } = await fetchText(path, "application/json");
    try {
      return { status, body: text ? JSON.parse(text) : undefined };
    } catch {
      throw new ClusterReadError(`GET ${server}${path}: answered ${status} with no JSON`);
    }
  }
  /** A pod's subresource (`log?...`, `<pod>:<port>/proxy/...`): its text, or why not. */
  async function podText(
    namespace: string,
    podPath: string,
  ): Promise<{ ok: true; text: string } | { ok: false; why: string }> {
    const at = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${podPath}`;
    try {
      const { status, text } = await fetchText(at, "*/*");
      if (status === 200) return { ok: true, text };
      return { ok: false, why: `the API server answered ${status}: ${apiMessage(text)}` };
    } catch (e) {
      return { ok: false, why: (e as Error).message };
    }
  }

  /** GET `path`: its JSON, or undefined when the API server says it does not exist (404); throws on any other answer. */
  async function found(path: string): Promise<object | undefined> {
    const r = await get(path);
    if (r.status === 404) return undefined;
    if (r.status !== 200)
      throw new ClusterReadError(`GET ${server}${path} answered ${r.status}: ${r.body?.message ?? "no message"}`);
    return r.body ?? {};
  }

  async function must(path: string): Promise<{ items?: unknown[] }> {
    const r = await get(path);
    if (r.status !== 200)
      throw new ClusterReadError(`GET ${server}${path} answered ${r.status}: ${r.body?.message ?? "no message"}`);
    return r.body ?? {};
  }

  return {
    server,
    async mergePatch(path, body) {
      const { status, text } = await fetchText(path, "application/json", body);
      if (status !== 200) throw new ClusterReadError(`PATCH ${server}${path} answered ${status}: ${apiMessage(text)}`);
    },
    async configMapData(namespace, name) {
      const body = await found(configMapPath(namespace, name));
      return body && ((body as { data?: Record<string, string> }).data ?? {});
    },
    async objectAnnotations(path) {
      const body = await found(path);
      return body && ((body as { metadata?: { annotations?: Record<string, string> } }).metadata?.annotations ?? {});
    },
    podProxyText: (namespace, pod, port, path) =>
      podText(namespace, `${encodeURIComponent(`${pod}:${port}`)}/proxy${path}`),
    podLog: (namespace, pod, container, lines) =>
      podText(
        namespace,
        `${encodeURIComponent(pod)}/log?container=${encodeURIComponent(container)}&tailLines=${lines}`,
      ),
    async podGet(namespace, pod, port, path) {
      const at = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(`${pod}:${port}`)}/proxy${path}`;
      try {
        const r = await get(at);
        return r.status === 200 ? r.body : undefined;
      } catch {
        return undefined;
      }
    },
    async snapshot(namespace, refs, podSelector) {
      const ns = encodeURIComponent(namespace);
      const q = podSelector ? `?labelSelector=${encodeURIComponent(podSelector)}` : "";
      const [objects, pods, replicaSets, events] = await Promise.all([
        Promise.all(
          refs.map(async (ref) => {
            const r = await get(PATHS[ref.kind].replace("%s", ns) + encodeURIComponent(ref.name));
            if (r.status === 404) return undefined;
            if (r.status !== 200)
              throw new ClusterReadError(
                `GET ${ref.kind} ${namespace}/${ref.name} answered ${r.status}: ${r.body?.message ?? "no message"}`,
              );
            return [refKey(ref), r.body as unknown as KubeObject] as const;
          }),
        ),
        must(`/api/v1/namespaces/${ns}/pods${q}`),
        refs.some((r) => r.kind === "Deployment")
          ? must(`/apis/apps/v1/namespaces/${ns}/replicasets${q}`)
          : Promise.resolve({ items: [] }),
        must(`/api/v1/namespaces/${ns}/events`),
      ]);
      return {
        workloads: new Map(objects.filter((o): o is readonly [string, KubeObject] => !!o)),
        pods: pods.items as KubeObject[],
        replicaSets: replicaSets.items as KubeObject[],
        events: events.items as KubeEvent[],
      };
    },
  };
}
