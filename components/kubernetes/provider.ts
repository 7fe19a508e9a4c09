import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { secretConfig } from "../pulumi-config";

/**
 * The cluster to deploy to, from Pulumi config: `kubeconfig` (a path, or the file's contents as a
 * secret), `context`, and the namespace the plan chose. Without `kubeconfig` the provider uses
 * $KUBECONFIG or ~/.kube/config, as kubectl does.
 *
 * enableSecretMutable: a changed credential updates the fleet's Secret in place. By default
 * pulumi-kubernetes replaces a Secret whose data changes (provider/pkg/provider/diff.go,
 * forceNewProperties: .stringData and .data unless enableSecretMutable), and since the Secret has a
 * fixed name the replacement deletes it before creating it again (provider.go Diff,
 * deleteBeforeReplace): a pod (re)starting in between fails on its secretKeyRef. Replacing it
 * would not restart running pods either; the digest on their templates does (island.ts). Set here,
 * the flag also overrides PULUMI_K8S_ENABLE_SECRET_MUTABLE from the environment (provider.go
 * Configure), so every operator's `pulumi up` behaves alike.
 */
export function kubernetesProvider(
  name: string,
  config: pulumi.Config,
  namespace: string,
  opts?: pulumi.CustomResourceOptions,
): k8s.Provider {
  const { path, data, context } = clusterConfig(config);
  const kubeconfig = data ?? path;
  return new k8s.Provider(
    name,
    {
      ...(kubeconfig !== undefined ? { kubeconfig } : {}),
      ...(context !== undefined ? { context } : {}),
      namespace,
      enableSecretMutable: true,
    },
    opts,
  );
}

/** The cluster as Pulumi config names it: a kubeconfig path or its contents (a secret), and a context. */
export interface ClusterConfig {
  path?: string;
  data?: pulumi.Output<string>;
  context?: string;
}

export function clusterConfig(config: pulumi.Config): ClusterConfig {
  const raw = config.get("kubeconfig");
  const context = config.get("context");
  // A path is not a credential; the file's contents are, and must be a config secret.
  const isData = raw !== undefined && /[\n{]/.test(raw.trim());
  const data = isData ? secretConfig(config, "kubeconfig", "< ~/.kube/config") : undefined;
  return {
    ...(raw !== undefined && !isData ? { path: raw } : {}),
    ...(data ? { data } : {}),
    ...(context !== undefined ? { context } : {}),
  };
}
