import * as pulumi from "@pulumi/pulumi";
import type * as command from "@pulumi/command";
import { z } from "zod";
import { NS, secretConfig } from "../pulumi-config";


const host = z.string().regex(/^[A-Za-z0-9._:-]+$/, "must be a host name or address");
const hop = z
  .object({
    host,
    user: z.string().regex(/^[A-Za-z0-9._-]+$/, "must be a login name"),
    port: z.number().int().min(1).max(65535).default(22),
    hostKey: z
      .string()
      .regex(/^(ssh-|ecdsa-)[A-Za-z0-9@.-]+ [A-Za-z0-9+/=]+( .*)?$/, 'must be one line of known_hosts key text, e.g. "ssh-ed25519 AAAA..." (ssh-keyscan -t ed25519 <host>)')
      .optional(),
  })
  .strict();

/** `vllm-fleet:login`: the SLURM login node, optionally reached through one jump host. */
export const loginSchema = hop.extend({ jump: hop.optional() }).strict();
export type Login = z.infer<typeof loginSchema>;

/** Parses the `login` config object; errors name the full config key. */
export function parseLogin(raw: unknown): Login {
  if (raw === undefined) {
    throw new Error(`SLURM stacks need the login node: pulumi config set --path ${NS}:login.host <host> and --path ${NS}:login.user <user>, and pulumi config set --secret ${NS}:sshPrivateKey < ~/.ssh/id_ed25519`);
  }
  const parsed = loginSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(parsed.error.issues.map((i) => `${NS}:login${i.path.map((p) => `.${String(p)}`).join("")}: ${i.message}`).join("\n"));
  }
  return parsed.data;
}

/**
 * The remote.Command connection. Without a host key the provider accepts any host key; that is
 * allowed (first contact on a new cluster) but warned about, because it lets a spoofed login node
 * receive the job and the key.
 */
export function connectionArgs(login: Login, privateKey: pulumi.Input<string> | undefined, jumpKey: pulumi.Input<string> | undefined): command.types.input.remote.ConnectionArgs {
  const { jump, ...self } = login;
  const proxyKey = jumpKey ?? privateKey;
  return {
    ...self,
    ...(privateKey !== undefined ? { privateKey } : {}),
    // Bounded dialing: 10 tries of 15 s at most, then a clear ssh error instead of a hang.
    dialErrorLimit: 10,
    perDialTimeout: 15,
    ...(jump ? { proxy: { ...jump, ...(proxyKey !== undefined ? { privateKey: proxyKey } : {}) } } : {}),
  };
}

/**
 * Reads the connection from Pulumi config. Private keys must be config secrets: a key stored in
 * plain text in Pulumi.<stack>.yaml is refused rather than used.
 */
export function loginConnection(config: pulumi.Config): command.types.input.remote.ConnectionArgs {
  const login = parseLogin(config.getObject<unknown>("login"));
  const key = secretConfig(config, "sshPrivateKey", "< <key file>");
  const jumpKey = secretConfig(config, "jumpPrivateKey", "< <key file>");
  if (!login.hostKey) pulumi.log.warn(`${NS}:login.hostKey is not set, so the login node's host key is not checked; set it from \`ssh-keyscan -t ed25519 ${login.host}\``);
  if (key === undefined) pulumi.log.info(`${NS}:sshPrivateKey is not set; the ssh agent ($SSH_AUTH_SOCK) will be used`);
  return connectionArgs(login, key, jumpKey);
}
