import { describe, expect, it } from 'vitest';
import { loadWorkflows, secretRefsOf, withSecretValues } from '../../../engine/index.js';

describe('Rules: secrets named in params', () => {
  it('finds each { secret: NAME } of params, nested ones too, and only objects with that one key', () => {
    expect(
      secretRefsOf({
        apiKey: { secret: 'payments/api-key' },
        auth: { token: { secret: 'auth.token' }, user: 'bot' },
        notOne: { secret: 'x', other: 1 },
        plain: 'secret',
      }),
    ).toEqual([
      { path: ['apiKey'], name: 'payments/api-key' },
      { path: ['auth', 'token'], name: 'auth.token' },
    ]);
  });

  it('puts the values in a copy of the body, only where the body still holds the declared reference', () => {
    const refs = secretRefsOf({ a: { secret: 'one' }, b: { c: { secret: 'two' } } });
    const body = { a: { secret: 'one' }, b: { c: { secret: 'one' } }, d: 1 };
    const values = new Map([
      ['one', 'v1'],
      ['two', 'v2'],
    ]);
    expect(withSecretValues(body, refs, values)).toEqual({
      ok: true,
      body: { a: 'v1', b: { c: { secret: 'one' } }, d: 1 },
    });
    expect(body.a).toEqual({ secret: 'one' });
    expect(withSecretValues(body, refs, new Map([['one', 'v1']]))).toEqual({ ok: false, missing: ['two'] });
  });

  it('refuses a secret name that breaks the rule, naming it', () => {
    const { errors } = loadWorkflows(
      'workflows:\n  - name: w\n    steps:\n      - name: a\n        params: { key: { secret: "has space" } }\n',
    );
    expect(errors.map((error) => error.message).join()).toMatch(
      /secret name "has space" must start with a letter/,
    );
  });
});
