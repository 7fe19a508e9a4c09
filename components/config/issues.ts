/** A problem with a stack file, always tied to the TOML key path the user wrote. */
export interface ConfigIssue {
  /** Dotted TOML path as the user wrote it, e.g. `inference.deployment.num_nodes`; "" for the whole file. */
  path: string;
  /** What is wrong and what to do about it. */
  message: string;
  /** Optional 1-based position, known for TOML syntax errors. */
  line?: number;
  column?: number;
}

/** Thrown when a stack file cannot be deployed; carries every issue found, not just the first. */
export class ConfigError extends Error {
  constructor(
    public readonly issues: ConfigIssue[],
    public readonly source = "stack file",
  ) {
    super(formatIssues(issues, source));
    this.name = "ConfigError";
  }
}

export function formatIssue(issue: ConfigIssue): string {
  const where = issue.line !== undefined ? ` (line ${issue.line}, column ${issue.column ?? 1})` : "";
  return `${issue.path || "<file>"}${where}: ${issue.message}`;
}

export function formatIssues(issues: ConfigIssue[], source: string): string {
  const n = issues.length;
  return [`${source}: ${n} problem${n === 1 ? "" : "s"}`, ...issues.map((i) => `  - ${formatIssue(i)}`)].join("\n");
}

export function joinPath(...parts: (string | number | undefined)[]): string {
  return parts.filter((p) => p !== undefined && p !== "").join(".");
}
