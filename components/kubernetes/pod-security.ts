import type { DeploymentPlan } from "../plan/deployment-plan";
import type { K8sObject } from "./objects";
import { podTemplates } from "./rollout";
import { kubernetesSettings } from "./settings";

/*
 * The Pod Security Standards level a fleet's pods need (issue 31): `baseline` unless a pod template
 * does something baseline forbids, then `privileged`. Read off the rendered objects, so whatever
 * the renderers add is counted; the checks are baseline's, as the Pod Security Standards page
 * (kubernetes.io/docs/concepts/security/pod-security-standards) lists them. `restricted` is never
 * claimed: the engines run as root with the image's defaults, which it refuses.
 */

export type PodSecurityLevel = "baseline" | "privileged";

/** Capabilities baseline allows a container to add (the Pod Security Standards' list). */
export const BASELINE_CAPABILITIES = [
  "AUDIT_WRITE",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "MKNOD",
  "NET_BIND_SERVICE",
  "SETFCAP",
  "SETGID",
  "SETPCAP",
  "SETUID",
  "SYS_CHROOT",
];
/** Sysctls baseline allows (the "safe" set). */
const SAFE_SYSCTLS = [
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
];
const SELINUX_TYPES = ["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"];

/** One thing the fleet's pods do that baseline refuses, where, and why. */
export interface BaselineViolation {
  /** What it is, as a reader of the pod spec would say it: `capability IPC_LOCK`, `hostPath volume model-cache`. */
  what: string;
  /** `<Kind>/<name>` of every workload whose pods do it. */
  workloads: string[];
  /** The stack-file keys that make the fleet render it; empty when nothing in the file does. */
  keys: string[];
}

export interface PodSecurity {
  level: PodSecurityLevel;
  /** Empty at baseline. */
  violations: BaselineViolation[];
}

/** Which stack-file keys put a capability or a hostPath volume into the pods (the target's settings and the plan know). */
export interface PodSecurityCauses {
  capability(name: string): string[];
  hostPath(path: string): string[];
}

/* The fields read, loosely typed: the rendered objects are plain values. */
interface SecurityContext {
  privileged?: boolean;
  capabilities?: { add?: string[] };
  procMount?: string;
  seccompProfile?: { type?: string };
  appArmorProfile?: { type?: string };
  seLinuxOptions?: { type?: string; user?: string; role?: string };
  windowsOptions?: { hostProcess?: boolean };
  sysctls?: { name: string }[];
}
interface PlainContainer {
  name: string;
  securityContext?: SecurityContext;
  ports?: { hostPort?: number }[];
}
interface PlainPodTemplate {
  metadata?: { annotations?: Record<string, string> };
  spec: {
    hostNetwork?: boolean;
    hostPID?: boolean;
    hostIPC?: boolean;
    securityContext?: SecurityContext;
    volumes?: { name: string; hostPath?: { path: string } }[];
    containers: PlainContainer[];
    initContainers?: PlainContainer[];
    ephemeralContainers?: PlainContainer[];
  };
}

/** What baseline refuses in one pod template, each with the keys behind it. */
function templateViolations(t: PlainPodTemplate, causes: PodSecurityCauses): { what: string; keys: string[] }[] {
  const out: { what: string; keys: string[] }[] = [];
  const s = t.spec;
  for (const ns of ["hostNetwork", "hostPID", "hostIPC"] as const) if (s[ns]) out.push({ what: ns, keys: [] });
  for (const v of s.volumes ?? [])
    if (v.hostPath) out.push({ what: `hostPath volume ${v.name}`, keys: causes.hostPath(v.hostPath.path) });
  const contexts: [string, SecurityContext | undefined][] = [["pod", s.securityContext]];
  for (const c of [...s.containers, ...(s.initContainers ?? []), ...(s.ephemeralContainers ?? [])]) {
    contexts.push([`container ${c.name}`, c.securityContext]);
    for (const cap of c.securityContext?.capabilities?.add ?? [])
      if (!BASELINE_CAPABILITIES.includes(cap)) out.push({ what: `capability ${cap}`, keys: causes.capability(cap) });
    if ((c.ports ?? []).some((p) => p.hostPort)) out.push({ what: `hostPort in container ${c.name}`, keys: [] });
  }
  for (const [where, sc] of contexts) {
    if (!sc) continue;
    const bad = (what: string) => out.push({ what: `${what} (${where})`, keys: [] });
    if (sc.privileged) bad("privileged");
    if (sc.windowsOptions?.hostProcess) bad("Windows hostProcess");
    if (sc.procMount !== undefined && sc.procMount !== "Default") bad(`procMount ${sc.procMount}`);
    if (sc.seccompProfile?.type === "Unconfined") bad("seccomp Unconfined");
    if (sc.appArmorProfile?.type === "Unconfined") bad("AppArmor Unconfined");
    const se = sc.seLinuxOptions;
    if (se && (!SELINUX_TYPES.includes(se.type ?? "") || se.user || se.role)) bad("SELinux options");
    for (const sysctl of sc.sysctls ?? []) if (!SAFE_SYSCTLS.includes(sysctl.name)) bad(`sysctl ${sysctl.name}`);
  }
  for (const [k, v] of Object.entries(t.metadata?.annotations ?? {}))
    if (k.startsWith("container.apparmor.security.beta.kubernetes.io/") && v === "unconfined")
      out.push({ what: `AppArmor unconfined (${k})`, keys: [] });
  return out;
}

/**
 * The level the pods of `objects` need: `privileged` with every violation of baseline (grouped by
 * what it is, with the workloads doing it and the keys behind it), or `baseline` with none.
 */
export function podSecurityLevel(objects: K8sObject[], causes: PodSecurityCauses): PodSecurity {
  const found = new Map<string, BaselineViolation>();
  for (const o of objects)
    for (const t of podTemplates(o))
      for (const v of templateViolations(t as PlainPodTemplate, causes)) {
        const seen = found.get(v.what) ?? { what: v.what, workloads: [], keys: [] };
        const workload = `${o.kind}/${o.metadata.name}`;
        if (!seen.workloads.includes(workload)) seen.workloads.push(workload);
        for (const k of v.keys) if (!seen.keys.includes(k)) seen.keys.push(k);
        found.set(v.what, seen);
      }
  const violations = [...found.values()];
  return { level: violations.length ? "privileged" : "baseline", violations };
}

/**
 * The keys behind what the Kubernetes renderers put into pods, read off the plans: IPC_LOCK where
 * an engine pins memory (the plan names why), `kubernetes.capabilities`, a hostPath model cache.
 */
export function podSecurityCauses(plans: DeploymentPlan[]): PodSecurityCauses {
  const settings = plans.map(kubernetesSettings);
  const pins = [
    ...new Set(plans.flatMap((p) => p.islands.flatMap((i) => i.engines.flatMap((e) => e.needs.pinsMemory)))),
  ];
  return {
    capability: (name) => [
      ...(name === "IPC_LOCK" ? pins : []),
      ...(settings.some((t) => t.capabilities.includes(name)) ? ["kubernetes.capabilities"] : []),
    ],
    hostPath: (path) =>
      settings.some((t) => t.model_cache?.host_path === path) ? ["kubernetes.model_cache.host_path"] : [],
  };
}
