import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { K8sObject } from "./objects";

/**
 * Creates one rendered object as its typed Pulumi resource (custom resources generically). The
 * logical name is the object's name, so URNs read like `kubectl get` output.
 */
export function k8sResource(o: K8sObject, opts: pulumi.CustomResourceOptions): pulumi.CustomResource {
  const { name } = o.metadata;
  switch (o.kind) {
    case "Namespace":
      return new k8s.core.v1.Namespace(name, o, opts);
    case "Service":
      return new k8s.core.v1.Service(name, o, opts);
    case "ConfigMap":
      return new k8s.core.v1.ConfigMap(name, o, opts);
    case "Secret":
      return new k8s.core.v1.Secret(name, o, opts);
    case "ServiceAccount":
      return new k8s.core.v1.ServiceAccount(name, o, opts);
    case "StatefulSet":
      return new k8s.apps.v1.StatefulSet(name, o, opts);
    case "Deployment":
      return new k8s.apps.v1.Deployment(name, o, opts);
    case "Role":
      return new k8s.rbac.v1.Role(name, o, opts);
    case "RoleBinding":
      return new k8s.rbac.v1.RoleBinding(name, o, opts);
    case "PodDisruptionBudget":
      return new k8s.policy.v1.PodDisruptionBudget(name, o, opts);
    case "LeaderWorkerSet":
    case "InferencePool":
    case "PodMonitor":
      return new k8s.apiextensions.CustomResource(name, o, opts);
  }
}
