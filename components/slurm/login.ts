import { z } from "zod";
import { NS } from "../namespace";

const host = z.string().regex(/^[A-Za-z0-9._:-]+$/, "must be a host name or address");
const hop = z
  .object({
    host,
    user: z.string().regex(/^[A-Za-z0-9._-]+$/, "must be a login name"),
    port: z.number().int().min(1).max(65535).default(22),
    hostKey: z
      .string()
      .regex(
        /^(ssh-|ecdsa-)[A-Za-z0-9@.-]+ [A-Za-z0-9+/=]+( .*)?$/,
        'must be one line of known_hosts key text, e.g. "ssh-ed25519 AAAA..." (ssh-keyscan -t ed25519 <host>)',
      )
      .optional(),
  })
  .strict();

/** `vllm-fleet:login`: the SLURM login node, optionally reached through one jump host. */
export const loginSchema = hop.extend({ jump: hop.optional() }).strict();
export type Login = z.infer<typeof loginSchema>;

/** Parses the `login` config object; errors name the full config key. */
export function parseLogin(raw: unknown): Login {
  if (raw === undefined) {
    throw new Error(
      `SLURM stacks need the login node: pulumi config set --path ${NS}:login.host <host> and --path ${NS}:login.user <user>, and pulumi config set --secret ${NS}:sshPrivateKey < ~/.ssh/id_ed25519`,
    );
  }
  const parsed = loginSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(
      parsed.error.issues
        .map((i) => `${NS}:login${i.path.map((p) => `.${String(p)}`).join("")}: ${i.message}`)
        .join("\n"),
    );
  }
  return parsed.data;
}
