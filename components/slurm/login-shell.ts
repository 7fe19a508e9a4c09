import type * as command from "@pulumi/command";
import type * as pulumi from "@pulumi/pulumi";
import { Client, type ClientChannel, type ConnectConfig } from "ssh2";
import type { Shell } from "../host/shell";

/** A remote.Command connection with its values known (the program reads it before planning). */
export type LoginConnection = pulumi.Unwrap<command.types.input.remote.ConnectionArgs>;
type Hop = Pick<LoginConnection, "host" | "port" | "user" | "privateKey" | "hostKey">;

/**
 * How a hop is reached, as remote.Command reaches it: its user and key (or the ssh agent when no key
 * is configured), and, when a host key is pinned, only that key, offered as the one algorithm
 * (pulumi-command v1.2.1 remote/connection.go: HostKeyAlgorithms = [publicKey.Type()]).
 */
function hopConfig(hop: Hop, timeoutMs: number): ConnectConfig {
  const [type, blob] = (hop.hostKey ?? "").split(" ");
  const pinned = blob ? Buffer.from(blob, "base64") : undefined;
  return {
    host: hop.host,
    port: hop.port ?? 22,
    username: hop.user ?? "root",
    ...(hop.privateKey ? { privateKey: hop.privateKey } : { agent: process.env.SSH_AUTH_SOCK }),
    readyTimeout: timeoutMs,
    ...(pinned
      ? {
          algorithms: { serverHostKey: [type as never] },
          hostVerifier: (key: Buffer) => key.equals(pinned),
        }
      : {}),
  };
}

/** Connects to the login node, through its jump host when it has one; the caller ends the clients. */
function connect(conn: LoginConnection, timeoutMs: number): Promise<Client[]> {
  const dial = (cfg: ConnectConfig): Promise<Client> =>
    new Promise((resolve, reject) => {
      const c = new Client();
      c.once("ready", () => resolve(c)).once("error", reject);
      c.connect(cfg);
    });
  const login = hopConfig(conn, timeoutMs);
  if (!conn.proxy) return dial(login).then((c) => [c]);
  const proxy = conn.proxy;
  return dial(hopConfig(proxy, timeoutMs)).then(
    (jump) =>
      new Promise<Client[]>((resolve, reject) => {
        jump.forwardOut("127.0.0.1", 0, conn.host, conn.port ?? 22, (err, sock) => {
          if (err) {
            jump.end();
            return reject(err);
          }
          dial({ ...login, sock }).then(
            (c) => resolve([c, jump]),
            (e: unknown) => {
              jump.end();
              reject(e instanceof Error ? e : new Error(String(e)));
            },
          );
        });
      }),
  );
}

/**
 * The login node as a Shell, over ssh2 in this process: the key stays in memory (never a file or an
 * argument) and the pinned host key is checked. Each run is one connection running `bash -s` with
 * the script on stdin, as remote.Command runs a create.
 */
export function loginShell(conn: LoginConnection): Shell {
  const where = `${conn.user ?? "root"}@${conn.host}:${conn.port ?? 22}`;
  return {
    describe: `ssh ${where}`,
    run: async (script, timeoutMs = 60_000) => {
      const clients = await connect(conn, Math.min(timeoutMs, (conn.perDialTimeout ?? 15) * 1000));
      const end = () => clients.forEach((c) => c.end());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          end();
          reject(new Error(`ssh ${where} did not finish within ${timeoutMs} ms`));
        }, timeoutMs);
        clients[0].exec("bash -s", (err, stream: ClientChannel) => {
          if (err) {
            clearTimeout(timer);
            end();
            return reject(err);
          }
          let stdout = "";
          let stderr = "";
          stream.on("data", (d: Buffer) => (stdout += d.toString()));
          stream.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
          stream.on("close", (code: number | null) => {
            clearTimeout(timer);
            end();
            resolve({ code, stdout, stderr });
          });
          stream.end(script);
        });
      });
    },
  };
}
