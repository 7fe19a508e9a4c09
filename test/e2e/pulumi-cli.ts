/**
 * The real Pulumi engine for the end-to-end suite (issue 25): the CLI, its Node language host and
 * the command provider v1.2.1, run as a user runs them, on a copy of this project.
 *
 * Where the toolchain comes from: FLEET_PULUMI_TOOLCHAIN (a folder, or the .tar.xz archive of one,
 * holding `pulumi`, `pulumi-language-nodejs` and `pulumi-resource-command`; .ci/run points it at
 * the prebuilt one beside the clone), else a `pulumi` on PATH with the command plugin already
 * installed. Plugins are installed from files (`pulumi plugin install ... --file`) and automatic
 * acquisition is off, so nothing is ever downloaded. State lives in a temporary file:// backend.
 * Without a toolchain, `pulumiToolchain()` says why and the suite skips with one loud line.
 *
 * The Kubernetes suite also asks for the kubernetes provider (`pulumiToolchain({ kubernetes: true })`):
 * `pulumi-resource-kubernetes` in the toolchain folder, or the archive
 * `pulumi-resource-kubernetes-v<version>.tar.xz` beside it (the shared tools folder beside the clone
 * has one), installed with `pulumi plugin install resource kubernetes <version> --file`; on the PATH
 * route it must already be installed. Missing, it is reported like a missing toolchain.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { newerSource } from "../../components/build-freshness";
import { ROOT } from "./program-capture";

export const COMMAND_PROVIDER_VERSION = "1.2.1";
/** The Kubernetes provider the Kubernetes suite installs: the version @pulumi/kubernetes (package.json) asks for. */
export const KUBERNETES_PROVIDER_VERSION = "4.34.2";
const KUBERNETES_PROVIDER_ARCHIVE = `pulumi-resource-kubernetes-v${KUBERNETES_PROVIDER_VERSION}.tar.xz`;
const CACHE = process.env.FLEET_PYENV_CACHE ?? "/var/cache/vllm-fleet";

export interface Toolchain {
  /** Folder with `pulumi` and `pulumi-language-nodejs` (put first on PATH). */
  bin: string;
  /** PULUMI_HOME: where the plugins are installed. */
  home: string;
  /** Where it came from, for the log. */
  from: string;
}

/**
 * The folder of an archive, extracted once per archive (keyed by its size and mtime); `marker` is
 * the file whose presence means a complete extraction.
 */
function extracted(archive: string, marker = "pulumi", prefix = "pulumi-toolchain"): string {
  const st = fs.statSync(archive);
  const key = createHash("sha256")
    .update(`${path.resolve(archive)}\0${st.size}\0${st.mtimeMs}`)
    .digest("hex")
    .slice(0, 16);
  const dir = path.join(fs.existsSync(CACHE) || tryMkdir(CACHE) ? CACHE : os.tmpdir(), `${prefix}-${key}`);
  if (!fs.existsSync(path.join(dir, marker))) {
    const tmp = `${dir}.partial-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    execFileSync("tar", ["-xJf", archive, "-C", tmp]);
    // Another process (.ci/run runs two end-to-end suites at once) may have finished first: its
    // folder, complete, may be in use; ours is dropped.
    if (fs.existsSync(path.join(dir, marker))) fs.rmSync(tmp, { recursive: true, force: true });
    else {
      fs.rmSync(dir, { recursive: true, force: true });
      try {
        fs.renameSync(tmp, dir);
      } catch (e) {
        if (!fs.existsSync(path.join(dir, marker))) throw e;
        fs.rmSync(tmp, { recursive: true, force: true });
      }
    }
  }
  return dir;
}

function tryMkdir(dir: string): boolean {
  try {
    fs.mkdirSync(dir, { recursive: true });
    return true;
  } catch {
    return false;
  }
}

const onPath = (name: string): string | undefined => {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    const p = path.join(dir, name);
    if (dir && fs.existsSync(p)) return p;
  }
  return undefined;
};

/**
 * The toolchain, ready to run (plugins installed into a fresh PULUMI_HOME from files), or the
 * reason there is none. Never downloads: PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION is set for
 * every run, and a PATH install without the command plugin is reported, not completed.
 */
export function pulumiToolchain(opts: { kubernetes?: boolean } = {}): Toolchain | { missing: string } {
  const given = process.env.FLEET_PULUMI_TOOLCHAIN;
  if (given) {
    if (!fs.existsSync(given)) return { missing: `FLEET_PULUMI_TOOLCHAIN=${given} does not exist` };
    let dir = given;
    if (fs.statSync(given).isDirectory()) {
      const archive = fs.readdirSync(given).find((f) => /^pulumi-toolchain-.*\.tar\.xz$/.test(f));
      if (!fs.existsSync(path.join(given, "pulumi")) && archive) dir = extracted(path.join(given, archive));
    } else dir = extracted(given);
    for (const b of ["pulumi", "pulumi-language-nodejs", "pulumi-resource-command"])
      if (!fs.existsSync(path.join(dir, b))) return { missing: `${dir} has no ${b}` };
    // The language host beside the CLI, the provider apart: on PATH it would be used instead of
    // the installed plugin, with a warning on every run.
    // (Linked from a folder of its own: the given one may be read-only, as the shared folder is in CI.)
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-pulumi-bin-"));
    for (const b of ["pulumi", "pulumi-language-nodejs"]) fs.symlinkSync(path.join(dir, b), path.join(bin, b));
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-pulumi-home-"));
    const env = baseEnv({ bin, home, from: given });
    execFileSync(
      path.join(bin, "pulumi"),
      [
        "plugin",
        "install",
        "resource",
        "command",
        COMMAND_PROVIDER_VERSION,
        "--file",
        path.join(dir, "pulumi-resource-command"),
      ],
      { env, stdio: "pipe" },
    );
    if (opts.kubernetes) {
      // Beside the toolchain: its folder, or the folder holding the toolchain archive.
      const folder = fs.statSync(given).isDirectory() ? given : path.dirname(given);
      const provider = kubernetesProviderBinary(dir, folder);
      if ("missing" in provider) return provider;
      execFileSync(
        path.join(bin, "pulumi"),
        ["plugin", "install", "resource", "kubernetes", KUBERNETES_PROVIDER_VERSION, "--file", provider.binary],
        { env, stdio: "pipe" },
      );
    }
    return { bin, home, from: `${given} (${dir})` };
  }
  const pulumi = onPath("pulumi");
  if (!pulumi)
    return {
      missing:
        "no Pulumi CLI: set FLEET_PULUMI_TOOLCHAIN to a prebuilt toolchain (folder or archive) or put pulumi on PATH",
    };
  const home = process.env.PULUMI_HOME ?? path.join(os.homedir(), ".pulumi");
  const plugin = path.join(home, "plugins", `resource-command-v${COMMAND_PROVIDER_VERSION}`);
  if (!fs.existsSync(plugin))
    return {
      missing: `${pulumi} has no command plugin v${COMMAND_PROVIDER_VERSION} in ${home}/plugins (install it with pulumi plugin install resource command ${COMMAND_PROVIDER_VERSION} --file <binary>; the suite downloads nothing)`,
    };
  if (opts.kubernetes) {
    const k8s = path.join(home, "plugins", `resource-kubernetes-v${KUBERNETES_PROVIDER_VERSION}`);
    if (!fs.existsSync(k8s))
      return {
        missing: `${pulumi} has no kubernetes plugin v${KUBERNETES_PROVIDER_VERSION} in ${home}/plugins (install it with pulumi plugin install resource kubernetes ${KUBERNETES_PROVIDER_VERSION} --file <binary>; the suite downloads nothing)`,
      };
  }
  return { bin: path.dirname(pulumi), home, from: pulumi };
}

/**
 * The pulumi-resource-kubernetes binary: in the toolchain folder itself, or extracted (once, cached)
 * from pulumi-resource-kubernetes-v<version>.tar.xz in the folder the toolchain was given as.
 */
function kubernetesProviderBinary(toolchainDir: string, folder: string): { binary: string } | { missing: string } {
  const name = "pulumi-resource-kubernetes";
  if (fs.existsSync(path.join(toolchainDir, name))) return { binary: path.join(toolchainDir, name) };
  const archive = path.join(folder, KUBERNETES_PROVIDER_ARCHIVE);
  if (!fs.existsSync(archive))
    return {
      missing: `no Kubernetes provider v${KUBERNETES_PROVIDER_VERSION}: neither ${toolchainDir}/${name} nor ${archive} exists`,
    };
  return { binary: path.join(extracted(archive, name, "pulumi-kubernetes"), name) };
}

/**
 * Removes the temporary folders pulumiToolchain() made for a FLEET_PULUMI_TOOLCHAIN toolchain (its
 * PATH links and its PULUMI_HOME with the installed plugins: 300 MB with the kubernetes provider);
 * a PATH install is the user's and is left alone.
 */
export function disposeToolchain(t: Toolchain) {
  for (const dir of [t.bin, t.home])
    if (/^fleet-pulumi-(bin|home)-/.test(path.basename(dir)) && path.dirname(dir) === os.tmpdir())
      fs.rmSync(dir, { recursive: true, force: true });
}

/** The environment of every Pulumi run: no update check, no plugin download, no agent socket. */
function baseEnv(t: Toolchain): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${t.bin}${path.delimiter}${process.env.PATH ?? ""}`,
    PULUMI_HOME: t.home,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_SKIP_CONFIRMATIONS: "true",
    PULUMI_COPILOT: "false",
    NO_COLOR: "1",
  };
  // The provider dials the agent whenever SSH_AUTH_SOCK is set (README): the suite uses its key.
  delete env.SSH_AUTH_SOCK;
  return env;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * A copy of this project (tracked and new files, the built dist/ with its times kept, node_modules
 * linked), a temporary file:// state backend and a passphrase: a user's clone after `npm ci`, in
 * which Pulumi.<stack>.yaml files come and go without touching the repository.
 */
export class PulumiProject {
  readonly dir: string;
  readonly state: string;
  readonly env: NodeJS.ProcessEnv;
  readonly log: string[] = [];

  constructor(readonly toolchain: Toolchain) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-project-"));
    this.state = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-state-"));
    const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      cwd: ROOT,
      encoding: "utf8",
    })
      .split("\0")
      // A developer's own Pulumi.<stack>.yaml stays behind: the suite configures its stacks itself.
      // node_modules is linked below (a worktree whose node_modules is itself a link lists it as a new file).
      .filter(
        (f) => f && f !== "node_modules" && fs.existsSync(path.join(ROOT, f)) && !/^Pulumi\.[^/]+\.yaml$/.test(f),
      );
    for (const f of files) {
      fs.mkdirSync(path.dirname(path.join(this.dir, f)), { recursive: true });
      fs.cpSync(path.join(ROOT, f), path.join(this.dir, f), { preserveTimestamps: true });
    }
    fs.cpSync(path.join(ROOT, "dist"), path.join(this.dir, "dist"), { recursive: true, preserveTimestamps: true });
    fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(this.dir, "node_modules"));
    // As `npm ci` builds a clone: a dist/ older than a source would be refused by the program.
    if (newerSource(this.dir, path.join(this.dir, "dist", "index.js")))
      execFileSync("npm", ["run", "-s", "build"], { cwd: this.dir, stdio: "inherit" });
    this.env = {
      ...baseEnv(toolchain),
      PULUMI_BACKEND_URL: `file://${this.state}`,
      PULUMI_CONFIG_PASSPHRASE: "fleet-e2e-passphrase",
    };
  }

  /** Runs `pulumi <args>` in the project; resolves with its output whatever the exit code. */
  pulumi(args: string[], opts: { input?: string; timeoutMs?: number; onStart?: (c: ChildProcess) => void } = {}) {
    return this.spawn(path.join(this.toolchain.bin, "pulumi"), args, opts);
  }

  /** Runs a bash script in the project, with Pulumi's environment (README lines run as written). */
  bash(script: string, opts: { timeoutMs?: number } = {}) {
    return this.spawn("bash", ["-euo", "pipefail", "-c", script], opts);
  }

  /** Like pulumi(), but a non-zero exit is an error that shows the output's tail. */
  async ok(args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<Run> {
    const r = await this.pulumi(args, opts);
    if (r.code !== 0)
      throw new Error(`pulumi ${args.join(" ")} exited ${r.code}:\n${(r.stdout + r.stderr).slice(-4000)}`);
    return r;
  }

  private spawn(
    cmd: string,
    args: string[],
    opts: { input?: string; timeoutMs?: number; onStart?: (c: ChildProcess) => void },
  ): Promise<Run> {
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const child = spawn(cmd, args, { cwd: this.dir, env: this.env, stdio: ["pipe", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`${path.basename(cmd)} ${args.join(" ")}: still running after ${opts.timeoutMs} ms`));
      }, opts.timeoutMs ?? 600_000);
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("error", (e) => (clearTimeout(timer), reject(e)));
      child.on("close", (code) => {
        clearTimeout(timer);
        const ms = Date.now() - started;
        this.log.push(`${path.basename(cmd)} ${args.join(" ")} -> exit ${code} in ${(ms / 1000).toFixed(1)} s`);
        resolve({ code, stdout, stderr, ms });
      });
      child.stdin.end(opts.input ?? "");
      opts.onStart?.(child);
    });
  }

  /** `pulumi stack output --json` of the selected stack (secrets shown: the suite checks them). */
  async outputs(): Promise<Record<string, any>> {
    return JSON.parse((await this.ok(["stack", "output", "--json", "--show-secrets"])).stdout);
  }

  /** Removes the project copy and the state (after every stack was destroyed). */
  dispose() {
    fs.rmSync(this.dir, { recursive: true, force: true });
    fs.rmSync(this.state, { recursive: true, force: true });
  }
}

/**
 * `--plaintext key=value` pairs for `pulumi config set-all --path`, as a user types them: the login
 * connection under `login.*` and each override under `overrides["<dotted key>"]` (objects one
 * level deep, such as slurm.launcher).
 */
export function configPairs(login: Record<string, unknown>, overrides: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(login)) out.push("--plaintext", `login.${k}=${v}`);
  for (const [k, v] of Object.entries(overrides)) {
    if (v && typeof v === "object")
      for (const [kk, vv] of Object.entries(v)) out.push("--plaintext", `overrides["${k}"].${kk}=${vv}`);
    else out.push("--plaintext", `overrides["${k}"]=${v}`);
  }
  return out;
}
