import type { Actor } from '../job/history.js';
import type { Principal } from './roles.js';

/** The actor a request's principal is in a job's history: its token (id and description), or the root. */
export function actorOf(principal: Principal): Actor {
  if (principal.tokenId === undefined) return { kind: 'root' };
  const actor: Actor = { kind: 'token', id: principal.tokenId };
  if (principal.tokenDescription) actor.description = principal.tokenDescription;
  return actor;
}
