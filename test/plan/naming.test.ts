import { describe, expect, it } from "vitest";
import { islandFolder, islandName, islandTag } from "../../components/plan/naming";
import { jobName } from "../../components/slurm";
import { k8sNames } from "../../components/kubernetes";
import { plan, SLURM, stackText } from "../helpers";

describe("names from (stack, service, island)", () => {
  it("a stack's one (unnamed) service keeps the names it always had", () => {
    expect([islandTag(undefined, 2), islandName("prod", undefined, 2), islandFolder(undefined, 2)]).toEqual([
      "i2",
      "prod-i2",
      "island-2",
    ]);
  });

  it("a named service sits between the stack and the island, in names and folders", () => {
    expect([islandTag("chat", 0), islandName("prod", "chat", 0), islandFolder("chat", 0)]).toEqual([
      "chat-i0",
      "prod-chat-i0",
      "chat/island-0",
    ]);
  });

  it("the targets build their island names with it", () => {
    const p = plan(`model = "Qwen/Qwen3-8B"\n${SLURM}`, "prod");
    expect(jobName(p, 0)).toBe("t-prod-i0");
    expect(jobName({ ...p, service: "chat" }, 0)).toBe("t-prod-chat-i0");
    const k = plan(stackText("k8s-single-node"), "prod");
    expect(k8sNames({ ...k, service: "chat" }).pod(k.islands[0], 0).pod).toMatch(/^prod-chat-i0-/);
    expect(k8sNames(k).pod(k.islands[0], 0).pod).toMatch(/^prod-i0-/);
  });
});
