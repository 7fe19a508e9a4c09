import type * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { NS, secretConfig } from "../pulumi-config";
import { parseLogin, type Login } from "./login";

/**
 * The remote.Command connection. Without a host key the provider accepts any host key; that is
 * allowed (first contact on a new cluster) but warned about, because it lets a spoofed login node
 * receive the job and the key.
 */
export function connectionArgs(
  login: Login,
  privateKey: pulumi.Input<string> | undefined,
  jumpKey: pulumi.Input<string> | undefined,
): command.types.input.remote.ConnectionArgs {
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
  if (!login.hostKey)
    pulumi.log.warn(
      `${NS}:login.hostKey is not set, so the login node's host key is not checked; set it from \`ssh-keyscan -t ed25519 ${login.host}\``,
    );
  if (key === undefined) pulumi.log.info(`${NS}:sshPrivateKey is not set; the ssh agent ($SSH_AUTH_SOCK) will be used`);
  return connectionArgs(login, key, jumpKey);
}
