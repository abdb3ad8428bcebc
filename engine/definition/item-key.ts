/**
 * The original's singular rule for the key a child receives its element under: `itemListKey`
 * minus one trailing `s` when it is longer than one character (`sections` -> `section`, `k1` -> `k1`).
 */
export function defaultItemKey(itemListKey: string): string {
  return itemListKey.length > 1 && itemListKey.endsWith('s') ? itemListKey.slice(0, -1) : itemListKey;
}
