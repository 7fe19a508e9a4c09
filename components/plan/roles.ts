/** What an engine does: a whole replica, or one side of prefill/decode disaggregation. */
export const ROLES = ["replica", "prefill", "decode"] as const;

export type Role = (typeof ROLES)[number];
