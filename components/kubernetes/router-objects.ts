import { createHash } from "node:crypto";
import { WORKER_STARTUP_TIMEOUT_S } from "../plan/router-plan";
import type { HttpRouterPlan, IslandPlan, LlmdPlan } from "../plan/deployment-plan";
import { resolveDeep, type Ref } from "../plan/values";
import { k8sRefs, labels, meta, MOUNTED_FILES, singletonDeployment, type K8sContext } from "./render-context";
import { servingSelector } from "./engine-pod";
import { fieldEnv, httpProbe, resources, SECRET_KEYS, secretEnv, tcpProbe, type K8sObject } from "./objects";
import { k8sArgv } from "./kubelet-values";
import { yamlPackage } from "../lazy-packages";
import { routerFollower } from "./router-follower";
import { readyServiceHost, readyServices } from "./ready-services";

/** The client-facing Service: `<island>-router`, whatever runs behind it. */
function routerService(
  ctx: K8sContext,
  island: IslandPlan,
  selector: Record<string, string>,
  ports: { name: string; port: number }[],
): K8sObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(ctx, ctx.names.routerService(island.index), selector),
    spec: { selector, ports: ports.map((p) => ({ name: p.name, port: p.port, targetPort: p.port })) },
  };
}

/**
 * vllm-router (or sglang-router for SGLang: the same router lineage and routes) with static worker
 * URLs: every engine's per-pod DNS name, in the plan's order (P/D: --prefill then --decode).
 * vllm-router gets no API key: it forwards the client's Authorization header and the engines check
 * it, whereas it would add a key it held for any caller. sglang-router holds it (holdsApiKey): it
 * demands it of clients, and finds keyed workers only with it; the command names the Secret's
 * variable, which kubelet expands ($(VAR)), so no object holds the key. Its follower
 * (router-follower.ts) keeps it to the engines whose weights are current; a router no follower can
 * tell its workers (vllm-router in P/D mode) is given each engine's ready Service instead of the
 * pod's name (ready-services.ts), which does the same through Kubernetes' own readiness.
 */
function httpRouterObjects(ctx: K8sContext, island: IslandPlan, r: HttpRouterPlan): K8sObject[] {
  const selector = labels(ctx, "router", island.index);
  const name = ctx.names.routerService(island.index);
  const key = r.holdsApiKey && ctx.secrets.includes("apiKey");
  // Unfollowed, it reaches each engine through the engine's ready Service (ready-services.ts).
  const nodeHost = r.follow ? undefined : readyServiceHost(ctx, island);
  const command = [
    ...k8sArgv(ctx, island.index, r.argv, nodeHost),
    ...(key ? ["--api-key", `$(${SECRET_KEYS.apiKey})`] : []),
  ];
  // The config rule "vllm-router on Kubernetes needs a router image" refuses a fleet without one.
  const image = ctx.target.router_image;
  if (image === undefined) throw new Error(`kubernetes.router_image is required for ${r.kind} on Kubernetes`);
  return [
    singletonDeployment(ctx, name, selector, {
      containers: [
        {
          name: r.kind,
          image,
          command,
          ...(key ? { env: [secretEnv(ctx.names.secret, SECRET_KEYS.apiKey)] } : {}),
          ports: [
            { name: "http", containerPort: r.port },
            { name: "metrics", containerPort: r.metricsPort },
          ],
          // The router listens only once its workers answer, which can take a model load.
          startupProbe: tcpProbe(r.port, 10, Math.ceil(WORKER_STARTUP_TIMEOUT_S / 10)),
          // /readiness, not /health: /health fails while any one worker is unhealthy, which would take
          // the island's only router out of its Service for one bad engine. /liveness: the process.
          readinessProbe: httpProbe("/readiness", r.port, 5, 3),
          livenessProbe: httpProbe("/liveness", r.port, 10, 6),
          resources: resources(ctx.target.router_resources.cpu, ctx.target.router_resources.memory),
        },
      ],
    }),
    routerService(ctx, island, selector, [
      { name: "http", port: r.port },
      { name: "metrics", port: r.metricsPort },
    ]),
    ...routerFollower(ctx, island, r, image),
    ...(r.follow ? [] : readyServices(ctx, island)),
  ];
}

/** References inside a config file the router pod reads (files get no kubelet expansion). */
function fileRefs(ctx: K8sContext, island: number) {
  const resolve = k8sRefs(ctx, island, "");
  return (ref: Ref) => {
    if (ref.ref === "self") throw new Error("internal error: a router config file cannot name the pod's own address");
    return resolve(ref);
  };
}

const yamlText = (data: unknown) => yamlPackage().stringify(data, { aliasDuplicateObjects: false });

/**
 * llm-d standalone, as llm-d-router's config/charts/standalone Helm chart lays it out
 * (github.com/llm-d/llm-d-router): an InferencePool selecting the island's serving engine
 * pods, the EPP with Envoy beside it in one Deployment, their ServiceAccount and read-only RBAC,
 * the two config files as ConfigMaps, the EPP's gRPC Service (the pool's endpoint picker) and the
 * client-facing router Service on Envoy's listener.
 */
function llmdObjects(ctx: K8sContext, island: IslandPlan, r: LlmdPlan): K8sObject[] {
  const i = island.index;
  const selector = labels(ctx, "router", i);
  const eppName = ctx.names.eppService(i);
  const pool = ctx.names.prefix(i);
  const eppText = yamlText(resolveDeep(r.epp.config, fileRefs(ctx, i)));
  const envoyText = yamlText(resolveDeep(r.envoy.config, fileRefs(ctx, i)));
  const configMap = (file: "epp-config" | "envoy-config", text: string): K8sObject => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: meta(ctx, `${eppName}-${file === "epp-config" ? "config" : "envoy"}`, selector),
    data: { [MOUNTED_FILES[file].file]: text },
  });
  const [eppConfig, envoyConfig] = [configMap("epp-config", eppText), configMap("envoy-config", envoyText)];
  const targetPort = r.pd
    ? island.engines.find((e) => e.role === "prefill")!.port!
    : island.endpoints.engines[0].url.port;
  const mounts = (["epp-config", "envoy-config"] as const).map((f) => ({
    name: f,
    mountPath: MOUNTED_FILES[f].dir,
    readOnly: true,
  }));
  // A changed EPP or Envoy config must roll the pod: the files are read once at start.
  const configHash = createHash("sha256").update(eppText).update(envoyText).digest("hex").slice(0, 16);
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: meta(ctx, eppName, selector) },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: meta(ctx, eppName, selector),
      rules: [
        { apiGroups: [""], resources: ["pods"], verbs: ["get", "watch", "list"] },
        { apiGroups: ["inference.networking.k8s.io"], resources: ["inferencepools"], verbs: ["get", "watch", "list"] },
        // llm-d-router v0.10.0 watches InferenceObjective and InferenceModelRewrite in llm-d.ai
        // (apix/v1alpha2) or, failing that, the legacy inference.networking.x-k8s.io, whichever CRDs
        // the cluster has (pkg/epp/server/controller_config.go populateWithDiscovery).
        {
          apiGroups: ["llm-d.ai", "inference.networking.x-k8s.io"],
          resources: ["inferenceobjectives", "inferencemodelrewrites"],
          verbs: ["get", "watch", "list"],
        },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: meta(ctx, eppName, selector),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: eppName },
      subjects: [{ kind: "ServiceAccount", name: eppName, namespace: ctx.names.namespace }],
    },
    eppConfig,
    envoyConfig,
    {
      apiVersion: "inference.networking.k8s.io/v1",
      kind: "InferencePool",
      metadata: meta(ctx, pool, selector),
      spec: {
        // P/D: prefill engines and decode sidecars listen on this one port (a config rule).
        targetPorts: [{ number: targetPort }],
        selector: { matchLabels: servingSelector(ctx, i) },
        endpointPickerRef: {
          name: eppName,
          kind: "Service",
          port: { number: r.epp.grpcPort },
          failureMode: "FailClose",
        },
      },
    },
    singletonDeployment(
      ctx,
      ctx.names.routerService(i),
      selector,
      {
        serviceAccountName: eppName,
        terminationGracePeriodSeconds: 130,
        containers: [
          {
            name: "epp",
            image: ctx.target.epp_image,
            args: k8sArgv(ctx, i, r.epp.argv.slice(1)),
            env: [fieldEnv("NAMESPACE", "metadata.namespace"), fieldEnv("POD_NAME", "metadata.name")],
            ports: [
              { name: "grpc", containerPort: r.epp.grpcPort },
              { name: "grpc-health", containerPort: r.epp.healthPort },
              { name: "metrics", containerPort: r.epp.metricsPort },
            ],
            readinessProbe: { grpc: { port: r.epp.healthPort, service: "inference-extension" }, periodSeconds: 2 },
            livenessProbe: {
              grpc: { port: r.epp.healthPort, service: "inference-extension" },
              initialDelaySeconds: 5,
              periodSeconds: 10,
            },
            resources: resources(ctx.target.epp_resources.cpu, ctx.target.epp_resources.memory),
            volumeMounts: mounts.filter((m) => m.name === "epp-config"),
          },
          {
            name: "envoy",
            image: ctx.target.envoy_image,
            args: k8sArgv(ctx, i, r.envoy.argv.slice(1)),
            ports: [{ name: "http", containerPort: r.port }],
            readinessProbe: tcpProbe(r.port, 5, 3),
            livenessProbe: tcpProbe(r.port, 10, 6),
            resources: resources(ctx.target.envoy_resources.cpu, ctx.target.envoy_resources.memory),
            volumeMounts: mounts.filter((m) => m.name === "envoy-config"),
          },
        ],
        volumes: [
          { name: "epp-config", configMap: { name: eppConfig.metadata.name } },
          { name: "envoy-config", configMap: { name: envoyConfig.metadata.name } },
        ],
      },
      // Recreate: one EPP at a time; the hash rolls the pod when a config file changes.
      { recreate: true, annotations: { "vllm-fleet/config-hash": configHash } },
    ),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: meta(ctx, eppName, selector),
      spec: {
        selector,
        ports: [
          { name: "grpc-ext-proc", port: r.epp.grpcPort, targetPort: r.epp.grpcPort, appProtocol: "http2" },
          { name: "http-metrics", port: r.epp.metricsPort, targetPort: r.epp.metricsPort },
        ],
      },
    },
    routerService(ctx, island, selector, [{ name: "http", port: r.port }]),
  ];
}

/** The island's router objects, whichever router the stack names. */
export function routerObjects(ctx: K8sContext, island: IslandPlan): K8sObject[] {
  const r = island.router;
  if (!r) return [];
  return r.kind === "llm-d" ? llmdObjects(ctx, island, r) : httpRouterObjects(ctx, island, r);
}
