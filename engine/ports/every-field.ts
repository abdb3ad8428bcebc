/**
 * `T` with every field present: an optional one may be `undefined`, but not left out. A hand-written
 * codec (a store's item or row, a bus's message) writes each value it reads back as a literal that
 * `satisfies EveryField<T>`: a field added to `T` then fails `tsc` at every codec until it is read
 * back there, or written `undefined` with the reason it is not kept.
 */
export type EveryField<T> = { [K in keyof Required<T>]: T[K] };
