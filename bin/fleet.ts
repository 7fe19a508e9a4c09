/**
 * Operating a fleet: `npm run fleet -- <verb> <stack> [options]`. See README "Fleet CLI".
 *
 *   status     PENDING / LAUNCHING / READY / FAILED / SHUTDOWN per island and process
 *   metrics    load, KV cache, throughput and prefix-cache hits of every engine (--watch)
 *   logs       the tail of each engine's (and the router's) log; --job adds the batch output
 *   endpoints  the trainer contract as the fleet reports it now
 *   list       the model catalog
 *
 * Exit status: 0 when the question was answered (whatever the fleet's state), 1 when it could not
 * be (ssh or scheduler failure), 2 for a usage or stack-file error.
 */
import { ConfigError, parseOverrides, type Override } from "../components/config";
import { endpointsCommand, engineTargets, logsScript, metricsRows, scrapeAll, statusCommand } from "../components/ops/commands";
import { endpointsText, metricsText, statusText } from "../components/ops/render-text";
import { resolveSource, type SourceOptions } from "../components/ops/source";
import { catalogCommand } from "../components/ops/catalog-list";

const USAGE = `usage: npm run fleet -- <status|metrics|logs|endpoints> <stack name or file> [options] [--<key.path> <value> ...]
       npm run fleet -- list [model] [--catalog <file>] [--json]
options:
  --json                    machine-readable output (one JSON document; --watch: one per line)
  --login [user@]host[:port]  the SLURM login node (default: vllm-fleet:login in Pulumi.<stack>.yaml)
  -i, --identity <key file>   ssh private key (default: your ssh agent and ~/.ssh/config)
  --ssh-option <Key=Value>    extra ssh -o option (repeatable)
  --local                   run scheduler commands here (this machine is the login node)
  --pulumi-config <file>    Pulumi.<stack>.yaml to read stackFile, overrides and login from
  --endpoints <file>        read URLs from an endpoints.json or \`pulumi stack output --json\`
  metrics: --watch, --interval <seconds> (default 2)
  logs:    --process <engine id|router|envoy> (repeatable; default all), -n <lines> (default 40), --job`;

const VALUE_FLAGS = new Set(["--login", "-i", "--identity", "--ssh-option", "--pulumi-config", "--endpoints", "--interval", "--process", "-n", "--catalog"]);
const BOOL_FLAGS = new Set(["--json", "--watch", "--local", "--job"]);

interface Args {
  verb: string;
  positional: string[];
  values: Map<string, string[]>;
  flags: Set<string>;
  overrides: Override[];
}

function parseArgs(argv: string[]): Args {
  const [verb = "", ...more] = argv;
  const values = new Map<string, string[]>();
  const flags = new Set<string>();
  const rest: string[] = [];
  for (let i = 0; i < more.length; i++) {
    const a = more[i];
    const key = a === "-i" ? "--identity" : a;
    if (VALUE_FLAGS.has(a)) {
      if (i + 1 >= more.length) throw new UsageError(`${a} needs a value`);
      values.set(key, [...(values.get(key) ?? []), more[++i]]);
    } else if (BOOL_FLAGS.has(a)) flags.add(a);
    else rest.push(a);
  }
  const { overrides, rest: positional } = parseOverrides(rest);
  return { verb, positional, values, flags, overrides };
}

class UsageError extends Error {}

const one = (a: Args, flag: string) => a.values.get(flag)?.at(-1);

function source(a: Args) {
  const o: SourceOptions = {
    stack: a.positional[0],
    endpoints: one(a, "--endpoints"),
    pulumiConfig: one(a, "--pulumi-config"),
    overrides: a.overrides,
    login: one(a, "--login"),
    identity: one(a, "--identity"),
    sshOptions: a.values.get("--ssh-option") ?? [],
    local: a.flags.has("--local"),
  };
  if (!o.stack && !o.endpoints) throw new UsageError("name a stack (or pass --endpoints <file>)");
  return resolveSource(o);
}

function needShell(src: ReturnType<typeof resolveSource>, verb: string) {
  if (src.view.target === "slurm" && !src.shell) {
    throw new UsageError(`${verb} on a SLURM fleet needs the login node: --login user@host[:port], --local on the login node, or vllm-fleet:login in Pulumi.<stack>.yaml`);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function main(argv: string[], out: (s: string) => void = (s) => process.stdout.write(s), err: (s: string) => void = (s) => process.stderr.write(s)): Promise<number> {
  let a: Args;
  try {
    a = parseArgs(argv);
    const json = a.flags.has("--json");
    switch (a.verb) {
      case "status": {
        const src = source(a);
        needShell(src, "status");
        const report = await statusCommand(src.view, src.shell);
        out(json ? JSON.stringify(report, null, 2) + "\n" : statusText(report) + "\n");
        return 0;
      }
      case "metrics": {
        const src = source(a);
        needShell(src, "metrics");
        const interval = Number(one(a, "--interval") ?? 2);
        if (!(interval > 0)) throw new UsageError("--interval must be a positive number of seconds");
        const engines = await engineTargets(src.view, src.shell);
        if (!engines.length) {
          err("no engine has an address yet (is the job running? try `fleet status`)\n");
          return 1;
        }
        let before = await scrapeAll(engines);
        for (;;) {
          await sleep(interval * 1000);
          const now = await scrapeAll(engines);
          const { rows, total } = metricsRows(engines, now, before);
          if (json) out(JSON.stringify({ at: new Date().toISOString(), model: src.view.model, total, engines: rows }) + "\n");
          else out((a.flags.has("--watch") ? "\x1b[2J\x1b[H" : "") + metricsText(src.view.model, rows, total) + "\n");
          if (!a.flags.has("--watch")) return 0;
          before = now;
        }
      }
      case "logs": {
        const src = source(a);
        needShell(src, "logs");
        if (!src.shell) throw new UsageError("logs reads the job's log files on the login node: SLURM fleets only (Kubernetes: kubectl logs)");
        if (src.view.islands.some((i) => !i.islandDir)) throw new UsageError("logs needs the stack file (where the logs are), not --endpoints");
        const wanted = a.values.get("--process");
        const lines = Number(one(a, "-n") ?? 40);
        if (!Number.isInteger(lines) || lines < 1) throw new UsageError("-n must be a positive whole number");
        const run = await src.shell.run(logsScript(src.view, (id) => !wanted || wanted.includes(id), lines, a.flags.has("--job")));
        out(run.stdout);
        if (run.code !== 0) {
          err(run.stderr);
          return 1;
        }
        return 0;
      }
      case "endpoints": {
        const src = source(a);
        const { endpoints, missing } = await endpointsCommand(src.view, src.shell);
        if (missing.length) err(`island(s) ${missing.join(", ")}: no endpoints.json yet (it is written once every endpoint serves; see \`fleet status\`)\n`);
        out(json ? JSON.stringify(endpoints, null, 2) + "\n" : endpointsText(endpoints) + "\n");
        return 0;
      }
      case "list": {
        out(catalogCommand(a.positional[0], one(a, "--catalog"), json) + "\n");
        return 0;
      }
      default:
        throw new UsageError(a.verb ? `unknown verb "${a.verb}"` : "no verb");
    }
  } catch (e) {
    if (e instanceof UsageError) {
      err(`${e.message}\n${USAGE}\n`);
      return 2;
    }
    if (e instanceof ConfigError) {
      err(e.message + "\n");
      return 2;
    }
    err(`${(e as Error).message}\n`);
    return 1;
  }
}

if (require.main === module) void main(process.argv.slice(2)).then((code) => (process.exitCode = code));
