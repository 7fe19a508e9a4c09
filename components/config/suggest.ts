import { distance } from "fastest-levenshtein";

/** The closest known name to a mistyped one, if it is close enough to be a plausible typo. */
export function closest(name: string, known: readonly string[]): string | undefined {
  const normalised = name.toLowerCase().replace(/-/g, "_");
  let best: string | undefined;
  let bestScore = Infinity;
  for (const candidate of known) {
    const score = distance(normalised, candidate.toLowerCase().replace(/-/g, "_"));
    if (score < bestScore) {
      bestScore = score;
      best = candidate;
    }
  }
  const budget = Math.max(2, Math.floor(name.length / 3));
  return best !== undefined && bestScore <= budget ? best : undefined;
}

export function didYouMean(name: string, known: readonly string[]): string {
  const hit = closest(name, known);
  return hit ? ` (did you mean "${hit}"?)` : "";
}
