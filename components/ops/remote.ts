import { spawnScript, type Shell } from "../host/shell";

export { localShell, runChecked, type Shell } from "../host/shell";

export interface SshTarget {
  user?: string;
  host: string;
  port?: number;
  identity?: string;
  /** Extra `-o Key=Value` options (e.g. a known_hosts file). */
  options: string[];
}

/** `user@host[:port]` as the --login flag and the login config give it. */
export function parseLoginFlag(text: string): Pick<SshTarget, "user" | "host" | "port"> {
  const m = /^(?:([A-Za-z0-9._-]+)@)?([A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(text);
  if (!m) throw new Error(`--login ${JSON.stringify(text)}: expected [user@]host[:port]`);
  return { ...(m[1] ? { user: m[1] } : {}), host: m[2], ...(m[3] ? { port: Number(m[3]) } : {}) };
}

/** OpenSSH in batch mode: the user's agent, keys and ~/.ssh/config apply; it never prompts. */
export function sshShell(t: SshTarget): Shell {
  const dest = t.user ? `${t.user}@${t.host}` : t.host;
  const args = [
    "-T",
    "-o",
    "BatchMode=yes",
    "-o",
    "ConnectTimeout=10",
    ...(t.port ? ["-p", String(t.port)] : []),
    ...(t.identity ? ["-i", t.identity, "-o", "IdentitiesOnly=yes"] : []),
    ...t.options.flatMap((o) => ["-o", o]),
    dest,
    "bash -s",
  ];
  return {
    describe: `ssh ${dest}${t.port ? `:${t.port}` : ""}`,
    run: (script, timeoutMs = 60_000) => spawnScript("ssh", args, script, timeoutMs),
  };
}
