/** Headers as API Gateway hands them (names as the client sent them) by lower-cased name; absent values left out. */
export function lowerCasedHeaders(
  headers: Readonly<Record<string, string | undefined>> | null | undefined,
): Record<string, string> {
  const byName: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {}))
    if (value !== undefined) byName[name.toLowerCase()] = value;
  return byName;
}
