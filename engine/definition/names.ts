/**
 * How a workflow, step, task or namespace is spelled: a letter, then letters, digits, `_` or `-`.
 * Never a `/`, so a qualified name (`<namespace>/<name>`) splits back without doubt; never a `.`, so
 * no name reads as a path segment (`.`, `..`).
 */
export const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]*$/;

/** NAME_PATTERN in words, for error messages and the API's description. */
export const NAME_RULE = 'a letter, then letters, digits, "_" or "-"';

/** The longest namespace name. */
export const MAX_NAMESPACE_LENGTH = 64;
