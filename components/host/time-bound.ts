/**
 * A time bound on a command @pulumi/command runs. Its customTimeouts do not stop a running command,
 * over ssh (components/slurm/login-bound.ts) or on this machine (components/local/island-run.ts),
 * so every command runs under coreutils `timeout`: when the bound runs out it sends SIGTERM to the
 * command's whole process group and, `killAfter` seconds later, SIGKILL.
 */
export interface TimeBound {
  seconds: number;
  killAfter: number;
}

/** `command` under `timeout`: a simple command, so any shell runs it, csh included. */
export function underTimeout(bound: TimeBound, command: string): string {
  return `timeout -k ${bound.killAfter} ${bound.seconds} ${command}`;
}
