import { Command, Option } from "commander";
import { KEEP_DEFAULTS } from "../components/ops/keep";

/* The fleet CLI's verbs and options (bin/fleet.ts): each option with its help and the verbs that list it. */

export type Verb = "status" | "metrics" | "logs" | "endpoints" | "list" | "jobs" | "keep" | "cost" | "wake";
const FLEET_VERBS: Verb[] = ["status", "metrics", "logs", "endpoints", "keep", "cost", "wake"];

interface OptionSpec {
  flags: string;
  help: string;
  /** The verbs whose --help lists it. Every verb accepts every option, as the CLI always has. */
  verbs: Verb[];
  group?: string;
  repeatable?: boolean;
}

const WHERE = "Where the fleet is (SLURM: how to reach the login node):";
const OPTIONS: OptionSpec[] = [
  {
    flags: "--json",
    help: "machine-readable output: one JSON document (metrics --watch: one per line)",
    verbs: ["status", "metrics", "endpoints", "list", "jobs", "cost", "wake"],
  },
  {
    flags: "--watch",
    help: "keep scraping every --interval seconds and redraw the table (Ctrl-C ends it)",
    verbs: ["metrics"],
  },
  {
    flags: "--interval <seconds>",
    help: "seconds between the two scrapes the rates come from, and between redraws (default 2)",
    verbs: ["metrics"],
  },
  {
    flags: "--process <id>",
    help: "only this process's log: an engine id as `fleet status` shows it, router or envoy (repeatable; default all)",
    verbs: ["logs"],
    repeatable: true,
  },
  { flags: "-n <lines>", help: "lines from the end of each log (default 40)", verbs: ["logs"] },
  {
    flags: "--every <seconds>",
    help: `seconds between checks (default ${KEEP_DEFAULTS.every})`,
    verbs: ["keep"],
  },
  {
    flags: "--max-ups <n>",
    help: `pulumi ups allowed within --window before keep gives up, exit 1 (default ${KEEP_DEFAULTS.maxUps})`,
    verbs: ["keep"],
  },
  {
    flags: "--window <seconds>",
    help: `the window --max-ups counts in (default ${KEEP_DEFAULTS.window})`,
    verbs: ["keep"],
  },
  { flags: "--once", help: "one check (and at most one pulumi up), then exit: for cron", verbs: ["keep"] },
  { flags: "--job", help: "also the tail of the batch job's own output (slurm-<job id>.out)", verbs: ["logs"] },
  { flags: "--catalog <file>", help: "a user models.yaml merged over the built-in catalog", verbs: ["list"] },
  {
    flags: "--service <name>",
    help: "which service of a stack with [services] (its [services.<name>] table); required there",
    verbs: FLEET_VERBS,
  },
  {
    flags: "--pulumi-config <file>",
    help: "the Pulumi.<stack>.yaml to read stackFile, overrides, namespace and login from (default: Pulumi.<stack>.yaml beside Pulumi.yaml, if there is one)",
    verbs: [...FLEET_VERBS, "jobs"],
    group: WHERE,
  },
  {
    flags: "--endpoints <file>",
    help: "read the URLs from an island's endpoints.json or `pulumi stack output --json` instead of planning the stack (the stack may then be left out)",
    verbs: FLEET_VERBS,
    group: WHERE,
  },
  {
    flags: "--login <[user@]host[:port]>",
    help: "the SLURM login node to ask (default: vllm-fleet:login in Pulumi.<stack>.yaml)",
    verbs: [...FLEET_VERBS, "jobs"],
    group: WHERE,
  },
  {
    flags: "-i, --identity <key file>",
    help: "ssh private key for the login node (default: your ssh agent and ~/.ssh/config)",
    verbs: [...FLEET_VERBS, "jobs"],
    group: WHERE,
  },
  {
    flags: "--ssh-option <Key=Value>",
    help: "an extra ssh -o option (repeatable)",
    verbs: [...FLEET_VERBS, "jobs"],
    group: WHERE,
    repeatable: true,
  },
  {
    flags: "--local",
    help: "run the scheduler commands on this machine (it is the login node)",
    verbs: [...FLEET_VERBS, "jobs"],
    group: WHERE,
  },
  {
    flags: "--kubeconfig <file>",
    help: "Kubernetes: the kubeconfig whose API server status reads (default: vllm-fleet:kubeconfig in Pulumi.<stack>.yaml when it is a path, else $KUBECONFIG or ~/.kube/config)",
    verbs: ["status", "cost", "wake"],
    group: WHERE,
  },
  {
    flags: "--context <name>",
    help: "Kubernetes: the kubeconfig context (default: vllm-fleet:context in Pulumi.<stack>.yaml, else the current one)",
    verbs: ["status", "cost", "wake"],
    group: WHERE,
  },
];

/** What commander makes of OPTIONS. */
export interface Opts {
  json?: boolean;
  watch?: boolean;
  interval?: string;
  process?: string[];
  n?: string;
  job?: boolean;
  catalog?: string;
  pulumiConfig?: string;
  endpoints?: string;
  service?: string;
  login?: string;
  identity?: string;
  sshOption?: string[];
  local?: boolean;
  kubeconfig?: string;
  context?: string;
  every?: string;
  maxUps?: string;
  window?: string;
  once?: boolean;
}

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

export function addOptions(cmd: Command, verb: Verb): Command {
  for (const spec of OPTIONS) {
    const option = new Option(spec.flags, spec.help).hideHelp(!spec.verbs.includes(verb));
    if (spec.repeatable) option.argParser(collect);
    if (spec.group) option.helpGroup(spec.group);
    cmd.addOption(option);
  }
  return cmd;
}
