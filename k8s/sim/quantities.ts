// Kubernetes resource quantities as numbers (the simulated kubelets apply them).

/** A Kubernetes memory quantity in bytes (Ki/Mi/Gi/Ti binary, k/M/G/T decimal). */
export function memoryBytes(q: string): number {
  const m = /^([0-9.]+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q);
  if (!m) throw new Error(`not a memory quantity: ${q}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2] ?? ''] ?? 1;
  return Math.floor(Number(m[1]) * unit);
}

/** A Kubernetes CPU quantity in cores ("500m" is 0.5). */
export function cpuCores(q: string): number {
  const m = /^([0-9.]+)(m)?$/.exec(q);
  if (!m) throw new Error(`not a CPU quantity: ${q}`);
  return Number(m[1]) / (m[2] ? 1000 : 1);
}
