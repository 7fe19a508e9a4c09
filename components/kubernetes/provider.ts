import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { secretConfig } from "../pulumi-config";

/**
 * The cluster to deploy to, from Pulumi config: `kubeconfig` (a path, or the file's contents as a
 * secret), `context`, and the namespace the plan chose. Without `kubeconfig` the provider uses
 * $KUBECONFIG or ~/.kube/config, as kubectl does.
 */
export function kubernetesProvider(
  name: string,
  config: pulumi.Config,
  namespace: string,
  opts?: pulumi.CustomResourceOptions,
): k8s.Provider {
  const raw = config.get("kubeconfig");
  let kubeconfig: pulumi.Input<string> | undefined;
  if (raw !== undefined) {
    // A path is not a credential; the file's contents are, and must be a config secret.
    kubeconfig = /[\n{]/.test(raw.trim()) ? secretConfig(config, "kubeconfig", "< ~/.kube/config") : raw;
  }
  const context = config.get("context");
  return new k8s.Provider(
    name,
    {
      ...(kubeconfig !== undefined ? { kubeconfig } : {}),
      ...(context !== undefined ? { context } : {}),
      namespace,
    },
    opts,
  );
}
