/**
 * Bounded label values: each label keeps the first `max` distinct values it is given, and counts
 * every later one as `other`. Prometheus keeps a series per combination of label values, so a
 * workflow registered per customer (or a step per item) would otherwise grow `/metrics` without
 * bound; the first values are the ones running since the process started, which are the ones worth
 * watching. The cap is per label, so a metric has at most the product of its labels' caps.
 */
export const OVERFLOW_VALUE = 'other';

export class LabelCap {
  private readonly seen = new Map<string, Set<string>>();

  constructor(private readonly max: number) {}

  /** `labels` with each value past its label's cap replaced by `other`. */
  apply(labels: Record<string, string>): Record<string, string> {
    const capped: Record<string, string> = {};
    for (const [name, value] of Object.entries(labels)) capped[name] = this.valueOf(name, value);
    return capped;
  }

  private valueOf(name: string, value: string): string {
    let values = this.seen.get(name);
    if (!values) {
      values = new Set();
      this.seen.set(name, values);
    }
    if (values.has(value)) return value;
    if (values.size >= this.max) return OVERFLOW_VALUE;
    values.add(value);
    return value;
  }
}
