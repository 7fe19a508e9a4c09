/**
 * Seconds in a SLURM time, in the formats sbatch's --time takes (`slurm.time`: minutes, MM:SS,
 * HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS) and scontrol's RunTime prints ([D-]HH:MM:SS, MM:SS);
 * undefined for UNLIMITED / infinite and for anything else.
 */
export function slurmSeconds(text: string): number | undefined {
  const t = text.trim();
  const days = /^(\d+)-(\d+)(?::(\d+)(?::(\d+))?)?$/.exec(t);
  if (days) return Number(days[1]) * 86400 + Number(days[2]) * 3600 + Number(days[3] ?? 0) * 60 + Number(days[4] ?? 0);
  const m = /^(\d+)(?::(\d+)(?::(\d+))?)?$/.exec(t);
  if (!m) return undefined;
  // One number is minutes; two are minutes and seconds; three hours, minutes and seconds.
  if (m[3] !== undefined) return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
  return Number(m[1]) * 60 + Number(m[2] ?? 0);
}
