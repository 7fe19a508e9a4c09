/**
 * Rule "a namespace the fleet creates holds nothing it does not create" (issue 31 fault 1): where
 * it does not fire. Where it does is test/fixtures/invalid/rule-k8s-*-namespace.toml.
 */
import { describe, expect, it } from "vitest";
import { loadConfigText } from "../../components/config";
import { issuesOf } from "../helpers";

const k8s = (lines: string) =>
  `[model]\nname = "Qwen/Qwen3-8B"\n[kubernetes]\nrouter_image = "registry.example.com/vllm-router:0.1.17"\n${lines}\n`;
const REFS = 'model_cache = { pvc = "hf" }\nimage_pull_secrets = ["regcred"]\nservice_account = "sa"';

describe("a namespace the fleet creates holds nothing it does not create", () => {
  it("refuses a PVC, pull Secrets and a ServiceAccount in a named namespace create_namespace = true creates, each by its key", () => {
    const issues = issuesOf(k8s(`namespace = "models"\ncreate_namespace = true\n${REFS}`));
    expect(issues.map((i) => i.path).sort()).toEqual([
      "kubernetes.image_pull_secrets",
      "kubernetes.model_cache.pvc",
      "kubernetes.service_account",
    ]);
    for (const i of issues) {
      expect(i.message).toContain('the fleet creates namespace "models" (kubernetes.create_namespace = true)');
      expect(i.message).toContain(
        'remove create_namespace = true, so that the fleet uses namespace "models" as it exists',
      );
    }
  });

  // Issue 43 item 5: a namespace the stack names is used as it exists, as Helm does unless asked.
  it("accepts them in a namespace the stack names, without create_namespace = false", () => {
    const cfg = loadConfigText(k8s(`namespace = "rl-prod"\n${REFS}`));
    expect(cfg.target).toMatchObject({ namespace: "rl-prod", service_account: "sa", image_pull_secrets: ["regcred"] });
    expect(cfg.target).toHaveProperty("create_namespace", undefined);
  });

  it("accepts them in a namespace that exists (create_namespace = false), named or the fleet's own name", () => {
    expect(() => loadConfigText(k8s(`namespace = "models"\ncreate_namespace = false\n${REFS}`))).not.toThrow();
    expect(() => loadConfigText(k8s(`create_namespace = false\n${REFS}`))).not.toThrow();
  });

  it("accepts them in a namespace every cluster has, which the fleet never creates", () => {
    expect(() => loadConfigText(k8s(`namespace = "default"\n${REFS}`))).not.toThrow();
  });

  it("leaves a hostPath cache, a PriorityClass and a storage class alone: nothing namespaced to wait for", () => {
    const text = k8s(
      'model_cache = { host_path = "/mnt/hf" }\npriority_class = "high"\ndisk_offload_storage_class = "nvme"',
    );
    expect(() => loadConfigText(text)).not.toThrow();
  });
});
