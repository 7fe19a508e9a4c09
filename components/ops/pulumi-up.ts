import { spawn } from "node:child_process";
import { PACKAGE_ROOT } from "../package-root";

/** Lines of a failed up's output `fleet keep` logs. */
const TAIL_LINES = 20;

/**
 * `pulumi up --yes --non-interactive --stack <stack>` in this project (the folder of Pulumi.yaml),
 * with this process's environment (its Pulumi backend and passphrase); `pulumi` from PATH, or
 * $PULUMI_BIN. Resolves to its exit status and the tail of its output.
 */
export function pulumiUp(stack: string): Promise<{ code: number; tail: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.env.PULUMI_BIN || "pulumi", ["up", "--yes", "--non-interactive", "--stack", stack], {
      cwd: PACKAGE_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const keepTail = (d: Buffer) => {
      output = (output + d.toString()).slice(-64 * 1024);
    };
    child.stdout.on("data", keepTail);
    child.stderr.on("data", keepTail);
    const tail = () => output.trimEnd().split("\n").slice(-TAIL_LINES).join("\n");
    child.on("error", (e) => resolve({ code: 127, tail: `could not run pulumi: ${e.message}` }));
    child.on("close", (code) => resolve({ code: code ?? 1, tail: tail() }));
  });
}
