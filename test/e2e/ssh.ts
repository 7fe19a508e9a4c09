import { Client } from "ssh2";

/** The fields of a remote.Command connection this runner honours (as the provider would). */
export interface Connection {
  host: string;
  port: number;
  user: string;
  privateKey: string;
  hostKey?: string;
}

export interface RemoteRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs one command over SSH the way @pulumi/command's remote.Command does: an exec request with the
 * command string as is, stdin piped and then closed, the host key checked when one is given.
 * `cutWhen` drops the connection mid-command once stderr satisfies it. `onStdout` sees the stdout
 * received so far as each chunk arrives (the readiness bench timestamps the endpoints line with it).
 */
export function runRemote(
  conn: Connection,
  command: string,
  stdin?: string,
  timeoutMs = 600_000,
  cutWhen?: (stderr: string) => boolean,
  onStdout?: (stdout: string) => void,
): Promise<RemoteRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const client = new Client();
    const timer = setTimeout(() => {
      client.end();
      reject(new Error(`remote command still running after ${timeoutMs} ms: ${command.slice(0, 80)}`));
    }, timeoutMs);
    client
      .on("ready", () => {
        client.exec(command, (err, stream) => {
          if (err) {
            clearTimeout(timer);
            client.end();
            return reject(err);
          }
          let stdout = "";
          let stderr = "";
          stream.on("data", (d: Buffer) => {
            stdout += d.toString();
            onStdout?.(stdout);
          });
          stream.stderr.on("data", (d: Buffer) => {
            stderr += d.toString();
            // Cut the connection as an interrupted `pulumi up` would (the remote side sees its pipes close).
            if (cutWhen?.(stderr)) {
              clearTimeout(timer);
              client.end();
              resolve({ code: null, stdout, stderr, ms: Date.now() - started });
            }
          });
          stream.on("close", (code: number | null) => {
            clearTimeout(timer);
            client.end();
            resolve({ code, stdout, stderr, ms: Date.now() - started });
          });
          stream.end(stdin ?? "");
        });
      })
      .on("error", (err) => {
        clearTimeout(timer);
        reject(err);
      })
      .connect({
        host: conn.host,
        port: conn.port,
        username: conn.user,
        privateKey: conn.privateKey,
        readyTimeout: 15_000,
        hostVerifier: (key: Buffer) => !conn.hostKey || key.toString("base64") === conn.hostKey.split(/\s+/)[1],
      });
  });
}
