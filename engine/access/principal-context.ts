import { ANY_NAMESPACE, namespaceProblem } from '../definition/namespace.js';
import { isRole, type Principal } from './roles.js';

/**
 * Who a request acts as, in the shape a Lambda authorizer hands API Gateway (`context`: string
 * values only) and API Gateway hands the API function (`requestContext.authorizer`). The root has
 * no `tokenId`.
 */
export interface PrincipalContext {
  namespace: string;
  role: string;
  tokenId?: string;
  tokenDescription?: string;
  [key: string]: string | undefined;
}

export function contextOfPrincipal(principal: Principal): PrincipalContext {
  const context: PrincipalContext = { namespace: principal.namespace, role: principal.role };
  if (principal.tokenId !== undefined) context.tokenId = principal.tokenId;
  if (principal.tokenDescription !== undefined) context.tokenDescription = principal.tokenDescription;
  return context;
}

/**
 * The principal an authorizer's context names, or undefined when it names none (absent, or not a
 * role and namespace): the caller then refuses the request rather than guess.
 */
export function principalOfContext(context: unknown): Principal | undefined {
  if (!context || typeof context !== 'object') return undefined;
  const { namespace, role, tokenId, tokenDescription } = context as Record<string, unknown>;
  if (!isRole(role)) return undefined;
  if (namespace !== ANY_NAMESPACE && namespaceProblem(namespace) !== undefined) return undefined;
  const principal: Principal = { namespace: namespace as string, role };
  if (typeof tokenId === 'string' && tokenId !== '') principal.tokenId = tokenId;
  if (principal.tokenId && typeof tokenDescription === 'string' && tokenDescription !== '')
    principal.tokenDescription = tokenDescription;
  return principal;
}
