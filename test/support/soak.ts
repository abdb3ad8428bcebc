/**
 * `npm run soak` sets SWITCHYARD_SOAK=1: the same reliability checks run longer (more kills, more
 * jobs, more generated inputs). `npm test` runs the short versions. RELIABILITY.md lists both.
 */
export const SOAK = process.env.SWITCHYARD_SOAK === '1';

/** `short` in `npm test`, `soak` in `npm run soak`; an environment variable named `variable` overrides both. */
export function scaled(short: number, soak: number, variable?: string): number {
  const override = variable ? process.env[variable] : undefined;
  if (override !== undefined && override !== '') {
    const value = Number(override);
    if (!Number.isInteger(value) || value < 0)
      throw new Error(`${variable} must be a whole number, got "${override}"`);
    return value;
  }
  return SOAK ? soak : short;
}

/** Prints a figure for RELIABILITY.md in one recognisable line: `[reliability] name: {…}`. */
export function reportFigures(name: string, figures: object): void {
  console.log(`[reliability] ${name}: ${JSON.stringify(figures)}`);
}
