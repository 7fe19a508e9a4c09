/**
 * The program's own ssh to the login node (components/slurm/login-shell.ts), which `pulumi preview`
 * and `up` use to see a gone island before they plan, against the test cluster's real sshd: the
 * pinned host key is checked (a wrong one is refused before any command runs), a jump host is
 * crossed (the same sshd forwarding to itself, as a bastion would), and the status query answers
 * through it.
 */
import { describe, expect, it } from "vitest";
import { loginShell, type LoginConnection } from "../../components/slurm/deploy";
import { login, privateKey } from "./cluster";

const direct: LoginConnection = { ...login, privateKey };

describe("the program's ssh to the login node (ssh2, the real sshd of the test cluster)", () => {
  it("runs a script (bash -s, the script on stdin) with the pinned host key; exit status and both streams come back", async () => {
    const r = await loginShell(direct).run('echo "out $(id -un)"; echo err >&2; exit 3');
    expect(r).toEqual({ code: 3, stdout: `out ${login.user}\n`, stderr: "err\n" });
  });

  it("refuses a login node whose host key is not the pinned one, before any command runs", async () => {
    const other = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOvlyGSkCuhcXfJzL5v1BfTJcQxGX7GvRm9H2BjzOAdX";
    await expect(loginShell({ ...direct, hostKey: other }).run("touch /tmp/never")).rejects.toThrow(/host|verif|key/i);
  });

  it("crosses a jump host (the same sshd, forwarding to itself)", async () => {
    const viaJump: LoginConnection = { ...direct, proxy: { ...login, privateKey } };
    const r = await loginShell(viaJump).run("echo through $((20 + 22))");
    expect(r).toMatchObject({ code: 0, stdout: "through 42\n" });
  });
});
