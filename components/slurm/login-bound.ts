import { underTimeout, type TimeBound } from "../host/time-bound";

/**
 * Time bounds on the login node. remote.Command's customTimeouts do not bound a running command:
 * pulumi-go-provider v1.3.0 turns them into the deadline of the request's context
 * (middleware/cancel/cancel.go, Wrap), and pulumi-command v1.2.1 uses that context only to dial
 * (provider/pkg/provider/remote/connection.go, Dial through dialWithRetry) and to log
 * (util/util.go, LogOutput). remote/commandOutputs.go `run` then calls session.Run(cmd), which
 * takes no context (golang.org/x/crypto v0.48.0 ssh/session.go: Run is Start then Wait), so a
 * command that hangs keeps `pulumi up` waiting forever, deadline or not.
 *
 * So every command runs under coreutils `timeout` on the login node (components/host/time-bound.ts):
 * when the bound runs out it sends SIGTERM to the command's whole process group (a hung squeue or
 * curl included; create's trap then cancels what it submitted) and, `killAfter` seconds later, SIGKILL.
 */
export type LoginBound = TimeBound;

/** `command` under `timeout` on the login node: a simple command, so any login shell runs it, csh included. */
export const boundedOnLogin = underTimeout;

/**
 * Room for the dial before the command starts: 10 tries of at most 15 s (login-connection.ts),
 * twice that through a jump host.
 */
const DIAL_SLACK_S = 300;

/**
 * The customTimeouts for a command with this bound. They end the provider's context, which only
 * the dial and the log stream use: set past the dial, the bound and its SIGKILL, the bound on the
 * login node is the one that acts, and the cleanup's last lines still reach `pulumi up`.
 */
export function providerTimeoutSeconds(bound: LoginBound): number {
  return DIAL_SLACK_S + bound.seconds + bound.killAfter;
}
