import { createHash } from 'node:crypto';

/** The namespace of every id Switchyard derives (a fixed, random UUID). */
export const SWITCHYARD_NAMESPACE = '6f1d8a52-93c4-4d1e-9b7a-2c5e0f8d4a31';
const NAMESPACE_BYTES = Buffer.from(SWITCHYARD_NAMESPACE.replaceAll('-', ''), 'hex');

/** RFC 9562 UUIDv5: the same name always gives the same id (hashing, not randomness). */
export function uuidV5(name: string): string {
  const hash = createHash('sha1').update(NAMESPACE_BYTES).update(name).digest();
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50;
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80;
  const hex = hash.toString('hex', 0, 16);
  // join makes one flat string; a template literal would keep a tree of five pieces per id (~370 bytes
  // instead of ~60), which a fan-out holds 100,000 times.
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20, 32)].join(
    '-',
  );
}

/**
 * The id of child `index` of a fan-out step when its element brings no usable id of its own; with
 * `seed`, the id derived again for a child whose first derived id another job holds.
 */
export function derivedChildId(parentId: string, step: string, index: number, seed?: string): string {
  return uuidV5(seed === undefined ? `${parentId}/${step}/${index}` : `${parentId}/${step}/${index}/${seed}`);
}
