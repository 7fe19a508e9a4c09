/*
 * Arithmetic on Kubernetes quantities for the resource requests the renderer sums (memory per
 * GPU + /dev/shm + the offload tier). Inputs are validated by the schema's quantity regex.
 */
const SUFFIX: Record<string, number> = {
  "": 1,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** A quantity (or a byte count) as a number of base units. */
export function quantityValue(q: string | number): number {
  if (typeof q === "number") return q;
  const m = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(.*)$/.exec(q);
  if (!m) throw new Error(`internal error: ${q} is not a Kubernetes quantity`);
  const [, num, suffix] = m;
  if (/^[eE]/.test(suffix)) return Number(num) * 10 ** Number(suffix.slice(1));
  const scale = SUFFIX[suffix];
  if (scale === undefined) throw new Error(`internal error: ${q} is not a Kubernetes quantity`);
  return Number(num) * scale;
}

/**
 * A byte count as a quantity, rounded up to whole MiB, in the canonical form the API server writes
 * back (apimachinery's resource.Quantity: the largest binary suffix that keeps the number whole), so
 * `163840Mi` is written `160Gi`. A LeaderWorkerSet's webhook returns the canonical form; any other
 * spelling showed as a change on the next `pulumi up` and bumped the object's generation.
 */
export function bytesQuantity(bytes: number): string {
  let n = Math.ceil(bytes / 2 ** 20);
  if (n === 0) return "0";
  const suffixes = ["Mi", "Gi", "Ti", "Pi", "Ei"];
  let k = 0;
  while (n % 1024 === 0 && k < suffixes.length - 1) {
    n /= 1024;
    k++;
  }
  return `${n}${suffixes[k]}`;
}

/** A CPU count as a quantity, in whole millicores. */
export const cpuQuantity = (cpus: number) =>
  Number.isInteger(cpus) ? String(cpus) : `${Math.ceil(Math.round(cpus * 1e6) / 1e3)}m`;

/** The sum of quantities (and byte counts) as bytes, rendered in MiB. */
export const sumBytes = (...qs: (string | number)[]) =>
  bytesQuantity(qs.reduce<number>((a, q) => a + quantityValue(q), 0));
