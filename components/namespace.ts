/**
 * Pulumi config namespace of this program (Pulumi.yaml `name`). In a module of its own so that code
 * outside the Pulumi program (the fleet CLI) can name config keys without loading @pulumi/pulumi.
 */
export const NS = "vllm-fleet";
