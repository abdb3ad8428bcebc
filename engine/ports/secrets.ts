/**
 * Where a host reads the secrets `params` name (`{ secret: NAME }`): serve from a file or its
 * environment; deployed, a secrets service. Values are only ever put in requests being sent.
 */
export interface SecretResolver {
  /** The values of the names it has; a name it does not have is left out. */
  resolve(names: readonly string[]): Promise<Map<string, string>>;
}
