import type { ConfigIssue } from "../../../../config/issues";
import { joinPath } from "../../../../config/issues";
import { didYouMean } from "../../../../config/suggest";
import { vllmRelease } from "./version";

const isTable = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * A user's own `--kv-transfer-config` (vllm_extra.kv_transfer_config, prime-rl's
 * [vllm.kv_transfer_config]) against vLLM's KVTransferConfig: its fields, a kv_role vLLM accepts
 * (it refuses a connector without one), and a connector vLLM registers, unless
 * kv_connector_module_path names the module that defines it. The object itself reaches vLLM as given.
 */
export function checkOwnConnector(value: unknown, at: string, version?: string): ConfigIssue[] {
  // The connector names vLLM's KVConnectorFactory registers, KVTransferConfig's fields and its
  // kv_role values, at the stack's vLLM release (vendored by bin/sync-upstream.ts).
  const release = vllmRelease(version);
  const VLLM_KV_CONNECTORS = release.kv_connectors;
  const VLLM_KV_TRANSFER_FIELDS = release.kv_transfer_config_fields;
  const VLLM_KV_ROLES = release.kv_roles;
  if (!isTable(value)) return [{ path: at, message: "expects a table (KVTransferConfig's fields), not an array" }];
  const issues: ConfigIssue[] = [];
  for (const key of Object.keys(value)) {
    if (!VLLM_KV_TRANSFER_FIELDS.includes(key))
      issues.push({
        path: joinPath(at, key),
        message: `"${key}" is not a field of vLLM's KVTransferConfig${didYouMean(key, [...VLLM_KV_TRANSFER_FIELDS])}`,
      });
  }
  const { kv_connector: name, kv_role: role, kv_connector_module_path: module } = value;
  if (module !== undefined && (typeof module !== "string" || module === ""))
    issues.push({ path: joinPath(at, "kv_connector_module_path"), message: "expects a Python module path" });
  if (typeof name !== "string" || name === "")
    issues.push({ path: joinPath(at, "kv_connector"), message: "is required: the connector's name" });
  else if (module === undefined && !VLLM_KV_CONNECTORS.includes(name))
    issues.push({
      path: joinPath(at, "kv_connector"),
      message: `"${name}" is not a connector vLLM registers${didYouMean(name, [...VLLM_KV_CONNECTORS])} (set kv_connector_module_path for a connector of your own)`,
    });
  if (typeof role !== "string" || !VLLM_KV_ROLES.includes(role))
    issues.push({
      path: joinPath(at, "kv_role"),
      message: `${role === undefined ? "is required (vLLM refuses a connector without one)" : "is not a role vLLM knows"}: one of ${VLLM_KV_ROLES.join(", ")}`,
    });
  const extra = value.kv_connector_extra_config;
  if (extra !== undefined && !isTable(extra))
    issues.push({ path: joinPath(at, "kv_connector_extra_config"), message: "expects a table" });
  return issues;
}
