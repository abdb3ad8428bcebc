import { describe, expect, it } from 'vitest';
import { contextOfPrincipal, principalOfContext } from '../../../engine/access/principal-context.js';
import { ROOT } from '../../../engine/access/roles.js';

describe('Rule: principal in an authorizer context', () => {
  it('round-trips the root and a scoped token', () => {
    const scoped = { namespace: 'team-a', role: 'run' as const, tokenId: '0123456789abcdef' };
    expect(contextOfPrincipal(ROOT)).toEqual({ namespace: '*', role: 'admin' });
    expect(principalOfContext(contextOfPrincipal(ROOT))).toEqual(ROOT);
    expect(principalOfContext(contextOfPrincipal(scoped))).toEqual(scoped);
  });

  it('ignores what API Gateway adds, and names no one for a context without a role and namespace', () => {
    expect(
      principalOfContext({ namespace: 'team-a', role: 'read', principalId: 'x', integrationLatency: 12 }),
    ).toEqual({ namespace: 'team-a', role: 'read' });
    for (const context of [
      null,
      undefined,
      'admin',
      {},
      { namespace: 'team-a' },
      { namespace: 'team-a', role: 'owner' },
      { namespace: '', role: 'admin' },
      { namespace: 'no spaces allowed', role: 'admin' },
      { role: 'admin' },
    ])
      expect(principalOfContext(context), JSON.stringify(context)).toBeUndefined();
  });
});
