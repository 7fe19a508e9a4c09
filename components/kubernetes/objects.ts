import type * as k8s from "@pulumi/kubernetes";
import { SECRETS, type SecretName } from "../credentials";

/*
 * Plain Kubernetes objects as the renderer produces them. The Pulumi SDK's input types give the
 * compiler the API's field names, so a misspelt field fails `tsc`; tests validate the values
 * against the OpenAPI schemas (kubernetes-models) and the CRDs.
 */
export type Container = k8s.types.input.core.v1.Container;
export type EnvVar = k8s.types.input.core.v1.EnvVar;
export type PodSpec = k8s.types.input.core.v1.PodSpec;
export type PodTemplateSpec = k8s.types.input.core.v1.PodTemplateSpec;
export type Probe = k8s.types.input.core.v1.Probe;
export type Volume = k8s.types.input.core.v1.Volume;
export type VolumeMount = k8s.types.input.core.v1.VolumeMount;
export type PersistentVolumeClaim = k8s.types.input.core.v1.PersistentVolumeClaim;

export interface Meta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
}

/** leaderworkerset.x-k8s.io/v1 (fields we set; the CRD is vendored in test/fixtures/upstream/crds). */
export interface LeaderWorkerSetSpec {
  replicas: number;
  startupPolicy: "LeaderCreated" | "LeaderReady";
  networkConfig: { subdomainPolicy: "Shared" | "UniquePerReplica" };
  leaderWorkerTemplate: {
    size: number;
    restartPolicy: "RecreateGroupOnPodRestart" | "RecreateGroupAfterStart" | "None";
    leaderTemplate: PodTemplateSpec;
    workerTemplate: PodTemplateSpec;
    volumeClaimTemplates?: PersistentVolumeClaim[];
    persistentVolumeClaimRetentionPolicy?: { whenDeleted: "Delete" | "Retain"; whenScaled: "Delete" | "Retain" };
  };
}

/** inference.networking.k8s.io/v1 InferencePool (fields we set). */
export interface InferencePoolSpec {
  targetPorts: { number: number }[];
  selector: { matchLabels: Record<string, string> };
  endpointPickerRef: { name: string; kind: "Service"; port: { number: number }; failureMode: "FailOpen" | "FailClose" };
}

/**
 * monitoring.coreos.com/v1 PodMonitor (fields we set), as prometheus-operator v0.93.0 defines it
 * (example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml; checked in test/kubernetes/validate.ts).
 */
export interface PodMonitorSpec {
  selector: { matchLabels: Record<string, string> };
  podMetricsEndpoints: { port: string; path: string; scheme: "http" }[];
}

export type K8sObject =
  | { apiVersion: "v1"; kind: "Namespace"; metadata: Omit<Meta, "namespace"> }
  | { apiVersion: "v1"; kind: "Service"; metadata: Meta; spec: k8s.types.input.core.v1.ServiceSpec }
  | { apiVersion: "v1"; kind: "ConfigMap"; metadata: Meta; data?: Record<string, string> }
  | { apiVersion: "v1"; kind: "Secret"; metadata: Meta; type: "Opaque"; stringData: Record<string, string> }
  | { apiVersion: "v1"; kind: "ServiceAccount"; metadata: Meta }
  | { apiVersion: "apps/v1"; kind: "StatefulSet"; metadata: Meta; spec: k8s.types.input.apps.v1.StatefulSetSpec }
  | { apiVersion: "apps/v1"; kind: "Deployment"; metadata: Meta; spec: k8s.types.input.apps.v1.DeploymentSpec }
  | {
      apiVersion: "rbac.authorization.k8s.io/v1";
      kind: "Role";
      metadata: Meta;
      rules: k8s.types.input.rbac.v1.PolicyRule[];
    }
  | {
      apiVersion: "rbac.authorization.k8s.io/v1";
      kind: "RoleBinding";
      metadata: Meta;
      roleRef: k8s.types.input.rbac.v1.RoleRef;
      subjects: k8s.types.input.rbac.v1.Subject[];
    }
  | { apiVersion: "leaderworkerset.x-k8s.io/v1"; kind: "LeaderWorkerSet"; metadata: Meta; spec: LeaderWorkerSetSpec }
  | { apiVersion: "inference.networking.k8s.io/v1"; kind: "InferencePool"; metadata: Meta; spec: InferencePoolSpec }
  | {
      apiVersion: "policy/v1";
      kind: "PodDisruptionBudget";
      metadata: Meta;
      spec: k8s.types.input.policy.v1.PodDisruptionBudgetSpec;
    }
  | { apiVersion: "monitoring.coreos.com/v1"; kind: "PodMonitor"; metadata: Meta; spec: PodMonitorSpec };

/**
 * Kubernetes expands `$(VAR)` in command, args and env values, and reads `$$` as `$`. Doubling
 * every `$` makes a string reach the container exactly as written (kubelet expansion rules).
 */
export const k8sLiteral = (s: string) => s.replaceAll("$", () => "$$"); // a function: in a replacement string "$$" means "$"

/** An env var read from the pod's own fields (downward API). */
export const fieldEnv = (name: string, fieldPath: string): EnvVar => ({ name, valueFrom: { fieldRef: { fieldPath } } });

/** The keys of the fleet Secret, filled from Pulumi config secrets; objects only reference them. */
export const SECRET_KEYS = { hfToken: SECRETS.hfToken.env, apiKey: SECRETS.apiKey.env } as const;
export type { SecretName };

export const secretEnv = (secret: string, key: string): EnvVar => ({
  name: key,
  valueFrom: { secretKeyRef: { name: secret, key } },
});

export const tcpProbe = (port: number, periodSeconds: number, failureThreshold: number): Probe => ({
  tcpSocket: { port },
  periodSeconds,
  timeoutSeconds: 5,
  failureThreshold,
});
export const httpProbe = (path: string, port: number, periodSeconds: number, failureThreshold: number): Probe => ({
  httpGet: { path, port },
  periodSeconds,
  timeoutSeconds: 5,
  failureThreshold,
});

/** A container's CPU request and memory request = limit (memory is not compressible: no overcommit). */
export const resources = (cpu: string, memory: string) => ({ requests: { cpu, memory }, limits: { memory } });

/** The annotation that turns off pulumi-kubernetes' own readiness wait for one object. */
export const SKIP_AWAIT = "pulumi.com/skipAwait";

/** `o` with the provider's await off (workloads: their wait is readiness-command.ts). */
export function skipProviderAwait(o: K8sObject): K8sObject {
  const annotations = { ...(o.metadata.annotations ?? {}), [SKIP_AWAIT]: "true" };
  return { ...o, metadata: { ...o.metadata, annotations } } as K8sObject;
}
