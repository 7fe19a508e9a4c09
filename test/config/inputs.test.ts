/**
 * Inputs users really write (issue 18): CRLF files, Kubernetes quantities in every form Kubernetes
 * takes, model names with slips, TOML mistakes that need the key and the character named,
 * command-line values for string keys, stack names typed as paths, GPUs named by their GRES type,
 * and tensor parallelism the model's heads cannot take. The refusals are also fixtures of the
 * invalid corpus (test/fixtures/invalid); this file holds what must be accepted, and the details.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigError, formatIssue, loadConfigText, parseOverrides } from "../../components/config";
import { gpuTypeFromHint } from "../../components/config/gpu-types";
import { describeChar } from "../../components/config/lookalike";
import { parseToml } from "../../components/config/toml";
import { missingStack, resolveStackFile } from "../../components/stack-file";
import { issuesOf, load, plan, ROOT, runPlanCli, SLURM, stackText } from "../helpers";

afterEach(() => vi.restoreAllMocks());

const INPUTS = path.join(ROOT, "test/fixtures/inputs");

describe("line endings", () => {
  const crlf = fs.readFileSync(path.join(INPUTS, "crlf-comments.toml"), "utf8");

  it("the fixture really has CRLF line endings, comments before them included", () => {
    expect(crlf).toContain("# one replica per node\r\n");
    expect(crlf.replace(/\r\n/g, "")).not.toContain("\n");
  });

  it("loads a CRLF file, comments before the CR included, as its LF twin", () => {
    const c = load(crlf);
    expect(c).toEqual(load(crlf.replace(/\r\n/g, "\n")));
    expect(c.model.name).toBe("Qwen/Qwen3-8B");
    expect(c.deployment).toMatchObject({ type: "multi_node", num_nodes: 2 });
    const { code } = runPlanCli([path.join(INPUTS, "crlf-comments.toml")]);
    expect(code).toBe(0);
  });

  it("keeps line and column numbers right in a CRLF file", () => {
    const [issue] = issuesOf(`# c\r\n[model]\r\nname = "Qwen/Qwen3-8B"\r\nname = "x"\r\n`);
    expect(issue).toMatchObject({ line: 4, column: 1 });
    expect(issue.message).toContain("model.name is already defined at line 3");
  });

  it("refuses a lone CR (TOML 1.0 ends lines with LF or CRLF only), at its line and column", () => {
    const r = parseToml(`[model]\nname = "m"\r[slurm]\n`);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issue).toMatchObject({ path: "", line: 2, column: 11 });
    expect(r.issue.message).toContain("carriage return (U+000D) without a line feed");
    // Shown as a symbol: a raw CR would send the terminal's cursor back over the line.
    expect(formatIssue(r.issue)).toContain('name = "m"␍[slurm]');
  });

  it("keeps CRLF inside a multi-line string as a line break", () => {
    const r = parseToml(`a = """x\r\ny"""\r\n`);
    expect(r.ok && r.value.a).toBe("x\ny");
  });
});

describe("Kubernetes quantities", () => {
  const k8s = (q: string) =>
    `[model]\nname = "Qwen/Qwen3-8B"\n[kubernetes]\nrouter_image = "r.example/vllm-router:1"\nshm_size = "${q}"\ndisk_offload_size = "${q}"\n`;

  // resource.Quantity: <signed number><binary SI | decimal SI | decimal exponent>.
  it.each(["64G", "2T", "1e3", "500m", "16Gi", "1.5Gi", ".5Ei", "5.", "+1Ki", "1E-3", "100n", "250u", "3k", "2P", "7"])(
    "accepts %s wherever a quantity key exists, as written",
    (q) => {
      const t = load(k8s(q)).target;
      expect(t).toMatchObject({ kind: "kubernetes", shm_size: q, disk_offload_size: q });
    },
  );

  it.each(["16GB", "1K", "1e1.5", "Gi", "1 Gi", "", "0x10", "1Gi "])("refuses %j naming both keys", (q) => {
    const paths = issuesOf(k8s(q)).map((i) => i.path);
    expect(paths).toEqual(["kubernetes.shm_size", "kubernetes.disk_offload_size"]);
  });

  it("refuses a size of zero or below", () => {
    for (const q of ["0", "0Gi", "-1Gi"])
      expect(issuesOf(k8s(q)).map((i) => i.message)).toEqual([
        "must be greater than zero",
        "must be greater than zero",
      ]);
  });

  it("the rendered volume gets the quantity as written", () => {
    const p = plan(k8s("64G"));
    expect(JSON.stringify(p.settings)).toContain('"shm_size":"64G"');
  });
});

describe("wide-EP over several nodes", () => {
  const wide = (tp: number, dp: number, nodes: number, gpn = 8) =>
    `enable_expert_parallel = true\n[model]\nname = "PrimeIntellect/INTELLECT-3"\n[parallel]\ntp = ${tp}\ndp = ${dp}\n[deployment]\ntype = "multi_node"\nnum_nodes = ${nodes}\ngpus_per_node = ${gpn}${SLURM}`;

  it("accepts tp x dp = num_nodes x gpus_per_node", () => {
    expect(load(wide(2, 12, 3)).parallel).toEqual({ tp: 2, dp: 12 });
    expect(load(wide(4, 4, 4, 4)).parallel).toEqual({ tp: 4, dp: 4 });
  });

  it("refuses ranks that leave GPUs idle, with the dp that fills them (not 9 for 8 ranks on 3 nodes)", () => {
    const [issue] = issuesOf(wide(1, 8, 3));
    expect(issue.path).toBe("parallel.dp");
    expect(issue.message).toContain("(try parallel.dp = 24)");
    expect(issue.message).not.toContain("dp = 9");
    // The hint is right: the suggested dp plans.
    expect(() => load(wide(1, 24, 3))).not.toThrow();
  });

  it("refuses dp = 9 over 3 nodes, which divides evenly but fills 9 of 24 GPUs", () => {
    expect(issuesOf(wide(1, 9, 3)).map((i) => i.path)).toEqual(["parallel.dp"]);
  });

  it("refuses a tp that cannot tile a node, suggesting the tps that can", () => {
    const [issue] = issuesOf(wide(3, 8, 3));
    expect(issue.path).toBe("parallel.tp");
    expect(issue.message).toContain("(try parallel.tp = 2 or 4)");
  });
});

describe("model names", () => {
  const named = (name: string) => `[model]\nname = ${JSON.stringify(name)}${SLURM}`;

  it.each([
    "Qwen/Qwen3-8B",
    "qwen3-8b",
    "gpt2",
    "my_org/model.v2-final",
    "/models/Qwen3-8B",
    "./Qwen3-8B",
    "../weights/qwen",
    "~/models/qwen",
    "models/Qwen/Qwen3-8B",
    "/data/my models/qwen",
  ])("accepts %s (a Hugging Face id, a catalog alias or a path)", (name) => {
    expect(() => load(named(name))).not.toThrow();
  });

  it("serves a catalog alias under the id, with the catalog's defaults", () => {
    const c = load(named("qwen3-8b"));
    expect(c.model.name).toBe("Qwen/Qwen3-8B");
    expect(c.catalog?.id).toBe("Qwen/Qwen3-8B");
  });

  it.each([" Qwen/Qwen3-8B", "Qwen/Qwen3-8B "])("refuses %j: the catalog's defaults would be lost", (name) => {
    const [issue] = issuesOf(named(name));
    expect(issue.path).toBe("model.name");
    expect(issue.message).toContain("must not start or end with a space");
  });

  it.each(["Qwen/Qwen3 8B", "Qwen:Qwen3-8B", "org/-model", "org/model--x", "org/a..b", "org/model.git", "a/b@main"])(
    "refuses %j: neither a Hugging Face id nor a path",
    (name) => {
      expect(issuesOf(named(name)).map((i) => i.message)).toEqual([
        expect.stringContaining("is neither a Hugging Face model id"),
      ]);
    },
  );

  it.each([
    ["Qwen/Qwen3-8b", "Qwen/Qwen3-8B", "model names are case-sensitive"],
    ["QWEN/QWEN3-32B", "Qwen/Qwen3-32B", "model names are case-sensitive"],
    ["Qwen3-8B", "Qwen/Qwen3-8B", '"qwen3-8b" is its alias'],
    ["Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B", '"qwen3-30b-a3b" is its alias'],
    ["Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", '"llama-3.1-70b-instruct" is its alias'],
    ["GLM-4.5-Air", "zai-org/GLM-4.5-Air", '"glm-4.5-air" is its alias'],
    ["DeepSeek-V3", "deepseek-ai/DeepSeek-V3", '"deepseek-v3" is its alias'],
    ["INTELLECT-3", "PrimeIntellect/INTELLECT-3", '"intellect-3" is its alias'],
    ["Meta-Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "(e.g. vec-inf's)"],
    ["meta-llama/Meta-Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", "another name for it"],
  ])("refuses %s, suggesting %s", (name, id, why) => {
    const issues = issuesOf(named(name));
    expect(issues.map((i) => i.path)).toEqual(["model.name"]);
    expect(issues[0].message).toContain(`did you mean "${id}"?`);
    expect(issues[0].message).toContain(why);
  });

  it("a bare name the catalog does not know still plans (a legacy id, or a directory)", () => {
    expect(load(named("Qwen2.5-7B-Instruct")).catalog).toBeUndefined();
  });

  it("suggests the same in the RL layout and in prime-rl's, at the key the file wrote", () => {
    expect(issuesOf(`[inference]\nmodel = "qwen/qwen3-8b"${SLURM}`).map((i) => i.path)).toEqual(["inference.model"]);
    expect(issuesOf(`[vllm]\nmodel = "qwen/qwen3-8b"${SLURM}`).map((i) => i.path)).toEqual(["vllm.model"]);
  });
});

describe("TOML errors", () => {
  const tomlIssue = (text: string) => {
    const r = parseToml(text);
    if (r.ok) throw new Error("expected a TOML error");
    return r.issue;
  };

  it("a duplicate key names the key and its first line, and shows the line with a caret", () => {
    const issue = tomlIssue(`[model]\nname = "a"\n\n[slurm]\njob_name = "x"\n\n[model]\nname = "b"\n`);
    expect(issue).toMatchObject({ path: "", line: 7, column: 1 });
    expect(issue.message).toBe(
      "invalid TOML: the table [model] is already defined at line 1; a key may be defined only once",
    );
    expect(formatIssue(issue)).toBe(
      [
        "<file> (line 7, column 1): invalid TOML: the table [model] is already defined at line 1; a key may be defined only once",
        "      7 | [model]",
        "        | ^",
      ].join("\n"),
    );
  });

  it("names the key in every way TOML can define it twice", () => {
    const cases: [string, string, number][] = [
      [`[model]\nname = "a"\n  name = "b"\n`, "model.name is already defined at line 2", 3],
      [
        `[inference.parallel]\ntp = 1\n[inference]\nparallel.tp = 2\n`,
        "inference.parallel.tp is already defined at line 2",
        4,
      ],
      [`a.b = 1\n[a]\n`, "the table [a] is already defined at line 1 (as a table, by a dotted key)", 2],
      [`[[t]]\n[t]\n`, "the table [t] is already defined at line 1 (as an array of tables)", 2],
      [`m = { name = "a" }\nm.x = 1\n`, "m.x cannot be defined: m is already defined at line 1 as a value", 2],
      [`[[t]]\na = 1\n[[t]]\na = 2\na = 3\n`, "t.a is already defined at line 4", 5],
      [`s = """\n[model]\n"""\n[model]\nx = 1\n[model]\n`, "the table [model] is already defined at line 4", 6],
      [
        `arr = [\n  "a", # [model]\n]\n"quoted.key" = 1\n"quoted.key" = 2\n`,
        '"quoted.key" is already defined at line 4',
        5,
      ],
    ];
    for (const [text, message, line] of cases) {
      const issue = tomlIssue(text);
      expect(issue.message, text).toContain(message);
      expect(issue.line, text).toBe(line);
    }
  });

  it("drops @iarna/toml's dangling colon and position", () => {
    const issue = tomlIssue(`[model]\nname = "x\n`);
    expect(issue.message).not.toMatch(/:\s*$/);
    expect(issue.message).not.toMatch(/row \d+, col \d+/);
  });

  it("says which character a key or value holds when it is a look-alike", () => {
    expect(tomlIssue(`[slurm]\njоb_name = "x"\n`)).toMatchObject({
      line: 2,
      column: 2,
      message: expect.stringContaining('U+043E CYRILLIC SMALL LETTER O, which looks like "o"'),
    });
    const quoted = issuesOf(`[model]\nname = "Qwen/Qwen3-8B"\n[slurm]\n"pаrtition" = "gpu"\n`);
    expect(quoted[0].message).toContain('(it holds U+0430 CYRILLIC SMALL LETTER A, which looks like "a")');
    const value = issuesOf(`[model]\nname = "Qwen/Qwen3-8B"\n[deployment]\ntype = "single\u2013node"${SLURM}`);
    expect(value[0].message).toContain('U+2013 EN DASH, which looks like "-"');
  });

  it("names characters by their Unicode names", () => {
    expect(describeChar("о")).toBe('U+043E CYRILLIC SMALL LETTER O, which looks like "o"');
    expect(describeChar("è")).toBe('U+00E8 LATIN SMALL LETTER E WITH GRAVE, which looks like "e"');
    expect(describeChar("ａ")).toBe('U+FF41 FULLWIDTH LATIN SMALL LETTER A, which looks like "a"');
    expect(describeChar("\u00a0")).toBe("U+00A0 NO-BREAK SPACE, which looks like a space");
    expect(describeChar("\u200b")).toBe("U+200B ZERO WIDTH SPACE, which is invisible");
    expect(describeChar("字")).toBe("U+5B57");
  });
});

describe("command-line overrides", () => {
  const loadWith = (args: string[], text = stackText("single-node")) =>
    loadConfigText(text, "t.toml", parseOverrides(args).overrides);

  it("takes a value for a string key as the string typed: --slurm.time 04:00:00 is not a TOML time", () => {
    const c = loadWith(["--slurm.time", "04:00:00"]);
    expect(c.target).toMatchObject({ kind: "slurm", time: "04:00:00" });
    expect(loadWith(["--slurm.time=2-00:00:00"]).target).toMatchObject({ time: "2-00:00:00" });
  });

  it("keeps digits and quotes of string values as typed", () => {
    expect(loadWith(["--slurm.partition", "007"]).target).toMatchObject({ partition: "007" });
    expect(loadWith(["--slurm.partition", '"gpu"']).target).toMatchObject({ partition: "gpu" });
    expect(loadWith(["--env_vars.NCCL_DEBUG_SUBSYS", "0123"]).env_vars.NCCL_DEBUG_SUBSYS).toBe("0123");
    expect(loadWith(["--vllm_extra.tokenizer", "1e3"]).vllm_extra.tokenizer).toBe("1e3");
  });

  it("reads non-string keys as TOML literals, as before", () => {
    const c = loadWith(["--server.port", "8001", "--model.max_model_len", "2048", "--model.enforce_eager"]);
    expect([c.server.port, c.model.max_model_len, c.model.enforce_eager]).toEqual([8001, 2048, true]);
    expect(loadWith(["--vllm_extra.max_num_seqs", "64"]).vllm_extra.max_num_seqs).toBe(64);
  });

  it("types by the file's layout: RL and prime-rl files too", () => {
    expect(loadWith(["--slurm.time", "04:00:00"], stackText("multi-replica")).target).toMatchObject({
      time: "04:00:00",
    });
    expect(loadWith(["--slurm.time", "04:00:00"], stackText("prime-single-node")).target).toMatchObject({
      time: "04:00:00",
    });
  });

  it("still refuses a bad value, showing it as typed", () => {
    try {
      loadWith(["--slurm.time", "4h"]);
      throw new Error("accepted");
    } catch (e) {
      expect((e as ConfigError).issues).toEqual([
        { path: "slurm.time", message: "must be a SLURM time such as 60, 04:00:00 or 2-00:00:00" },
      ]);
    }
  });
});

describe("stack file names", () => {
  it("reports the path the user typed for a missing file", () => {
    const { code, stderr } = runPlanCli(["./nope.toml"]);
    expect(code).toBe(2);
    expect(stderr).toContain(`no stack file ./nope.toml: no such file (${path.resolve("nope.toml")})`);
    expect(stderr).not.toContain("nope.toml.toml");
  });

  it("takes name.toml for a stack under stacks/", () => {
    expect(resolveStackFile("single-node.toml")).toEqual({
      file: path.join(ROOT, "stacks", "single-node.toml"),
      stack: "single-node",
    });
    const { code, stdout } = runPlanCli(["single-node.toml"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^stack single-node /);
  });

  it("suggests near stack names", () => {
    expect(missingStack("multi-replca")).toContain('(did you mean "multi-replica"?)');
    expect(missingStack("k8s-singlenode")).toContain('"k8s-single-node"');
    expect(missingStack("./wide-ep.toml")).toContain('(did you mean "wide-ep"');
    expect(missingStack("zzzzzz")).not.toContain("did you mean");
    const { stderr } = runPlanCli(["disagregated"]);
    expect(stderr).toContain('no stack "disagregated"');
    expect(stderr).toContain('did you mean "disaggregated"');
  });
});

describe("GPU type from the target", () => {
  const gres = (g: string, model = "Qwen/Qwen3-8B") =>
    `[model]\nname = "${model}"\nmax_model_len = 8192\n[deployment]\ngpus_per_node = 1\n[slurm]\njob_name = "t"\ngres = "${g}"\n`;

  it.each([
    ["gpu:a40:1", "A40", 46068 * 2 ** 20],
    ["gpu:nvidia_a40:1", "A40", 46068 * 2 ** 20],
    ["gpu:l40:1", "L40", 46068 * 2 ** 20],
    ["gpu:l40s:1", "L40S", 46068 * 2 ** 20],
    ["gpu:a10g:1", "A10", 22.18 * 2 ** 30],
    ["gpu:a100:1", "A100-40GB", 40960 * 2 ** 20],
    ["gpu:h200:1", "H200", 139.81 * 2 ** 30],
    ["gpu:b200:1", "B200", 178.35 * 2 ** 30],
  ])("knows %s as %s", (g, type, bytes) => {
    const m = plan(gres(g)).memory!;
    expect(m.gpu).toMatchObject({ type, assumed: false, from: `slurm.gres = "${g}"` });
    expect(m.gpu.bytes).toBeCloseTo(bytes, 0);
  });

  it("checks the memory of the board GRES names: Qwen3-32B at tp = 1 does not fit an A40", () => {
    const issues = (() => {
      try {
        plan(gres("gpu:a40:1", "Qwen/Qwen3-32B").replace("[slurm]", "[parallel]\ntp = 1\n[slurm]"));
      } catch (e) {
        return (e as ConfigError).issues;
      }
      throw new Error("planned");
    })();
    expect(issues[0].message).toContain('A40 (45.0 GiB, slurm.gres = "gpu:a40:1")');
  });

  it("says a GRES type it does not know is unknown rather than taking it for an H100", () => {
    const p = plan(gres("gpu:mi300x:1"));
    expect(p.memory!.gpu).toMatchObject({ assumed: true, unknown: "mi300x" });
    expect(p.memory!.gpu.from).toContain('slurm.gres = "gpu:mi300x:1" names GPU type "mi300x"');
    expect(p.warnings).toContainEqual(expect.stringContaining('GPU type "mi300x" is unknown'));
  });

  it("does not take a neighbouring board for a new one", () => {
    const name = (hint: string) => gpuTypeFromHint(hint)?.name;
    expect(["NVIDIA-A40", "NVIDIA-A10G", "NVIDIA-L40", "a100", "NVIDIA-RTX-A4000", "l4", "a4000"].map(name)).toEqual([
      "A40",
      "A10",
      "L40",
      "A100-40GB",
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("knows a Kubernetes product label the same way", () => {
    const p = plan(
      `[model]\nname = "Qwen/Qwen3-8B"\n[kubernetes]\nrouter_image = "r.example/vllm-router:1"\nnode_selector = { "nvidia.com/gpu.product" = "NVIDIA-A40" }\n`,
    );
    expect(p.memory!.gpu).toMatchObject({ type: "A40", assumed: false });
  });
});

describe("tensor parallelism and the model's heads", () => {
  const tp = (model: string, n: number, gpn = 16) =>
    `[model]\nname = "${model}"\n[parallel]\ntp = ${n}\ndp = 1\n[deployment]\ngpus_per_node = ${gpn}${SLURM}`;

  it("refuses a tp that does not divide the attention heads, naming parallel.tp", () => {
    const issues = issuesOf(tp("meta-llama/Llama-3.1-8B-Instruct", 3));
    expect(issues).toEqual([
      {
        path: "parallel.tp",
        message:
          "tp = 3 does not fit the 32 attention heads of meta-llama/Llama-3.1-8B-Instruct: vLLM splits them evenly over the tensor-parallel ranks (try parallel.tp = 2 or 4)",
      },
    ]);
  });

  it("refuses a tp that divides the query heads but neither divides nor is a multiple of the KV heads", () => {
    // GLM-4.5-Air: 96 query heads, 8 KV heads. tp = 12 divides 96, but 8 KV heads cannot go evenly to 12 ranks.
    const [issue] = issuesOf(tp("zai-org/GLM-4.5-Air", 12));
    expect(issue.path).toBe("parallel.tp");
    expect(issue.message).toContain("does not fit the 8 KV heads of zai-org/GLM-4.5-Air");
    expect(issue.message).toContain("(try parallel.tp = 8 or 16)");
  });

  it("accepts KV-head replication (tp a multiple of the KV heads) and MLA models", () => {
    expect(load(tp("Qwen/Qwen3-30B-A3B", 8)).parallel.tp).toBe(8); // 32 heads, 4 KV heads on 2 ranks each
    expect(load(tp("deepseek-ai/DeepSeek-V3", 16)).parallel.tp).toBe(16);
    expect(issuesOf(tp("deepseek-ai/DeepSeek-V3", 3))[0].message).toContain("128 attention heads");
  });

  it("checks nothing for a model the catalog does not know", () => {
    expect(load(tp("org/unknown-model", 3)).parallel.tp).toBe(3);
  });

  it("names prime-rl's key in its layout", () => {
    const issues = issuesOf(`[vllm]\nmodel = "meta-llama/Llama-3.1-8B-Instruct"\ntensor_parallel_size = 3${SLURM}`);
    expect(issues.map((i) => i.path)).toEqual(["vllm.tensor_parallel_size"]);
    expect(issues[0].message).toContain("(try vllm.tensor_parallel_size = 2 or 4)");
  });
});
