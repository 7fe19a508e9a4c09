/**
 * Schema validation for rendered Kubernetes objects: built-in kinds through the npm package
 * kubernetes-models (the Kubernetes OpenAPI schema), custom resources through the CRDs vendored in
 * test/fixtures/upstream/crds (by `npm run sync-upstream`) with ajv (the PodMonitor through the
 * transcribed subset POD_MONITOR_V1 below), strict about unknown fields as the API server's strict field
 * validation is.
 */
import Ajv from "ajv";
import * as fs from "node:fs";
import * as path from "node:path";

const CRD_DIR = path.resolve(__dirname, "..", "fixtures", "upstream", "crds");

/** kubernetes-models is ESM-only; loaded once through dynamic import (untyped under commonjs). */
async function models(): Promise<Record<string, any>> {
  const load = (m: string) => import(m as string);
  const [core, apps, rbac, policy] = await Promise.all([
    load("kubernetes-models/v1"),
    load("kubernetes-models/apps/v1"),
    load("kubernetes-models/rbac.authorization.k8s.io/v1"),
    load("kubernetes-models/policy/v1"),
  ]);
  return {
    "v1/Namespace": core.Namespace,
    "v1/Service": core.Service,
    "v1/ConfigMap": core.ConfigMap,
    "v1/Secret": core.Secret,
    "v1/ServiceAccount": core.ServiceAccount,
    "v1/PodTemplate": core.PodTemplate,
    "apps/v1/StatefulSet": apps.StatefulSet,
    "apps/v1/Deployment": apps.Deployment,
    "rbac.authorization.k8s.io/v1/Role": rbac.Role,
    "rbac.authorization.k8s.io/v1/RoleBinding": rbac.RoleBinding,
    "policy/v1/PodDisruptionBudget": policy.PodDisruptionBudget,
  };
}

/** Unknown fields are errors wherever the schema lists properties and does not preserve unknowns. */
function strict(schema: any): any {
  if (Array.isArray(schema)) return schema.map(strict);
  if (!schema || typeof schema !== "object") return schema;
  const out: any = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, strict(v)]));
  if (out.properties && out.additionalProperties === undefined && !out["x-kubernetes-preserve-unknown-fields"])
    out.additionalProperties = false;
  return out;
}

function crdValidators(): Record<string, (o: unknown) => string[]> {
  // Formats (int32, int-or-string, ...) are Kubernetes' own; types and fields are what we check.
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, logger: false });
  const out: Record<string, (o: unknown) => string[]> = {};
  for (const file of fs.readdirSync(CRD_DIR).filter((f) => f.endsWith(".json"))) {
    const crd = JSON.parse(fs.readFileSync(path.join(CRD_DIR, file), "utf8"));
    for (const v of crd.spec.versions) {
      const schema = strict(v.schema.openAPIV3Schema);
      // metadata is ObjectMeta, validated by the API server itself rather than the CRD schema.
      schema.properties.metadata = { type: "object" };
      const validate = ajv.compile(schema);
      out[`${crd.spec.group}/${v.name}/${crd.spec.names.kind}`] = (o) =>
        validate(o)
          ? []
          : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
    }
  }
  return out;
}

/**
 * The part of prometheus-operator's PodMonitor CRD that the fleet uses, transcribed (the CRD is not
 * vendored): prometheus-operator v0.93.0, example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml,
 * version v1: spec requires selector (a LabelSelector: matchLabels is a map of strings);
 * podMetricsEndpoints[] items have port (string: a container port's name), path (string) and scheme
 * (enum http, https, HTTP, HTTPS). Strict: a field outside this subset fails, so a new one is
 * checked against the CRD before it is added here.
 */
const POD_MONITOR_V1 = {
  type: "object",
  required: ["apiVersion", "kind", "metadata", "spec"],
  properties: {
    apiVersion: { const: "monitoring.coreos.com/v1" },
    kind: { const: "PodMonitor" },
    metadata: { type: "object" },
    spec: {
      type: "object",
      required: ["selector"],
      properties: {
        selector: {
          type: "object",
          properties: { matchLabels: { type: "object", additionalProperties: { type: "string" } } },
        },
        podMetricsEndpoints: {
          type: "array",
          items: {
            type: "object",
            properties: {
              port: { type: "string" },
              path: { type: "string" },
              scheme: { enum: ["http", "https", "HTTP", "HTTPS"], type: "string" },
            },
          },
        },
      },
    },
  },
};

export interface Validator {
  /** Problems with one object; [] when it is valid. Throws for a kind it cannot check. */
  (o: { apiVersion: string; kind: string; [k: string]: unknown }): string[];
}

export async function k8sValidator(): Promise<Validator> {
  const builtin = await models();
  const crds = crdValidators();
  {
    const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
    const validate = ajv.compile(strict(POD_MONITOR_V1));
    crds["monitoring.coreos.com/v1/PodMonitor"] = (o) =>
      validate(o)
        ? []
        : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
  }
  const check: Validator = (o) => {
    const key = `${o.apiVersion}/${o.kind}`;
    if (crds[key]) {
      const problems = crds[key](o);
      // The CRD embeds pod templates loosely in places; check them against the core schema too.
      if (o.kind === "LeaderWorkerSet") {
        const lwt = (o as any).spec.leaderWorkerTemplate;
        for (const [name, template] of [
          ["leader", lwt.leaderTemplate],
          ["worker", lwt.workerTemplate],
        ]) {
          if (template)
            problems.push(
              ...check({ apiVersion: "v1", kind: "PodTemplate", metadata: { name }, template }).map(
                (p) => `${name}Template: ${p}`,
              ),
            );
        }
      }
      return problems;
    }
    const Model = builtin[key];
    if (!Model) throw new Error(`no schema for ${key}`);
    try {
      new Model(o).validate();
      return [];
    } catch (e) {
      return [(e as Error).message];
    }
  };
  return check;
}

/**
 * What kubelet makes of a command/args/env string: `$(VAR)` becomes VAR's value when defined,
 * `$$` becomes `$`, anything else stays (k8s.io/kubernetes third_party/forked/golang/expansion).
 */
export function kubeletExpand(s: string, env: Record<string, string>): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== "$" || i + 1 >= s.length) {
      out += s[i];
      continue;
    }
    const next = s[i + 1];
    if (next === "$") {
      out += "$";
      i++;
    } else if (next === "(") {
      const close = s.indexOf(")", i + 2);
      if (close < 0) {
        out += "$(";
        i++;
        continue;
      }
      const name = s.slice(i + 2, close);
      out += name in env ? env[name] : `$(${name})`;
      i = close;
    } else {
      out += "$" + next;
      i++;
    }
  }
  return out;
}
