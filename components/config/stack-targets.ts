import type { ConfigIssue } from "./issues";
import { isTable } from "./layout-markers";
import { UserPaths } from "./paths";
import { SERVICE_PORT_STRIDE, type ServiceDocument } from "./services";
import { otherTargets, TARGET_PARTS, targetPart, TARGETS, type TargetKind } from "./target-registry";
import type { TomlTable } from "./toml";
import type { FleetConfig } from "./types";

/*
 * A stack file and its target: the target named outside the file (--target, vllm-fleet:target), the
 * one the file names, and what a target does to the services of one stack (their ports, their jobs).
 */

/** The file with the named target's table added when it has neither; naming the other one's backend is an issue. */
export function withTarget(
  doc: TomlTable,
  target: TargetKind | undefined,
): { value: TomlTable; issues: ConfigIssue[] } {
  if (!target) return { value: doc, issues: [] };
  const has = (k: TargetKind) => doc[k] !== undefined || (isTable(doc.inference) && doc.inference[k] !== undefined);
  const other = otherTargets(target).find(has);
  if (other)
    return {
      value: doc,
      issues: [
        {
          path: other,
          message: `the file targets ${other}, but the target ${target} was named outside it (--target / vllm-fleet:target): drop one of them`,
        },
      ],
    };
  return { value: has(target) ? doc : { ...doc, [target]: {} }, issues: [] };
}

/**
 * Service k's ports, where it leaves them unset, are the defaults + k x SERVICE_PORT_STRIDE; two
 * services the user gave one port are refused naming both keys (Kubernetes aside: every pod has
 * its own address).
 */
export function servicePorts(configs: FleetConfig[], services: ServiceDocument[]): ConfigIssue[] {
  configs.forEach((cfg, k) => {
    const shift = services[k].index * SERVICE_PORT_STRIDE;
    if (!cfg.explicit.has("server.port")) cfg.server.port += shift;
    if (!cfg.explicit.has("backend_port")) cfg.backend_port += shift;
  });
  const issues: ConfigIssue[] = [];
  const seen = new Map<number, string>();
  for (const cfg of configs) {
    if (!targetPart(cfg.target.kind).capabilities.sharedHostNetwork) continue;
    const paths = new UserPaths(cfg.layout, cfg.prime_rl === true);
    const ports: [number, string][] = [[cfg.server.port, paths.user("server.port")]];
    if (cfg.backend_port !== cfg.server.port) ports.push([cfg.backend_port, paths.user("backend_port")]);
    for (const [port, key] of ports) {
      const here = `services.${cfg.service}.${key}`;
      const first = seen.get(port);
      if (first === undefined) seen.set(port, here);
      else
        issues.push({
          path: here,
          message: `gives port ${port}, as ${first} does: two services on one host would meet there; give each service its own ports (or leave them unset: service k's default to the usual ones + ${SERVICE_PORT_STRIDE} x k)`,
        });
    }
  }
  return issues;
}

/** A service's target settings in a stack of `services` (target-part.ts forServices: SLURM's co_schedule default). */
export function forServices(cfg: FleetConfig, services: number): FleetConfig {
  const part = targetPart(cfg.target.kind);
  return part.forServices ? { ...cfg, target: part.forServices(cfg.target, services) } : cfg;
}

/**
 * Whether the file itself names a backend: [slurm], [kubernetes] ... (or under [inference]), or a
 * target's table in prime-rl's [vllm_fleet] ([vllm_fleet.slurm]).
 */
export function namesTarget(doc: TomlTable): boolean {
  const inference = isTable(doc.inference) ? doc.inference : {};
  const fleet = isTable(doc.vllm_fleet) ? doc.vllm_fleet : {};
  return (
    TARGETS.some((k) => k in doc || k in inference) ||
    TARGET_PARTS.some((part) => part.primeFleetTable && part.kind in fleet)
  );
}
