/** Pulumi config namespace of this program (Pulumi.yaml `name`): config keys are `vllm-fleet:<key>`. */
export const NS = "vllm-fleet";
