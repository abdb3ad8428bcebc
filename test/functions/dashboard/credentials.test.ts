import { describe, expect, it } from 'vitest';
import {
  credentialHeaders,
  credentialKindFor,
  errorMessage,
  parseCredential,
} from '../../../functions/dashboard/src/credentials.js';

describe('Function: credentialKindFor', () => {
  it("asks for serve's token when Switchyard itself refuses", () => {
    expect(credentialKindFor({ error: { code: 'unauthorized', message: 'x' } })).toBe('token');
    expect(credentialKindFor({ error: { code: 'forbidden', message: 'x' } })).toBe('token');
  });

  it("asks for an API key when a REST API's key check refuses (the stack gives its refusals the error shape)", () => {
    expect(credentialKindFor({ error: { code: 'INVALID_API_KEY', message: 'Forbidden' } })).toBe('api-key');
    expect(credentialKindFor({ error: { code: 'ACCESS_DENIED', message: 'Forbidden' } })).toBe('api-key');
    expect(credentialKindFor(undefined)).toBe('api-key');
    expect(credentialKindFor({ message: 'Internal server error' })).toBe('api-key');
  });

  it("asks for a token when an HTTP API (-c api=http: no API keys) refuses in API Gateway's own shape", () => {
    // No Authorization header: 401; the token authorizer's Deny (or IAM's refusal): 403.
    expect(credentialKindFor({ message: 'Unauthorized' })).toBe('token');
    expect(credentialKindFor({ message: 'Forbidden' })).toBe('token');
  });
});

describe('Function: credentialHeaders', () => {
  it('sends a token as a bearer token and a key as x-api-key', () => {
    expect(credentialHeaders({ kind: 'token', value: 's3cret' })).toEqual({ authorization: 'Bearer s3cret' });
    expect(credentialHeaders({ kind: 'api-key', value: 'k' })).toEqual({ 'x-api-key': 'k' });
    expect(credentialHeaders(undefined)).toEqual({});
  });
});

describe('Function: parseCredential', () => {
  it('reads back what was stored and ignores anything else', () => {
    expect(parseCredential('{"kind":"token","value":"t"}')).toEqual({ kind: 'token', value: 't' });
    expect(parseCredential('{"kind":"password","value":"t"}')).toBeUndefined();
    expect(parseCredential('{"kind":"token","value":""}')).toBeUndefined();
    expect(parseCredential('not json')).toBeUndefined();
    expect(parseCredential(null)).toBeUndefined();
  });
});

describe('Function: errorMessage', () => {
  it("reads Switchyard's error shape and API Gateway's bare message", () => {
    expect(errorMessage({ error: { code: 'conflict', message: 'job is finished' } })).toBe('job is finished');
    expect(errorMessage({ message: 'Forbidden' })).toBe('Forbidden');
    expect(errorMessage('text')).toBeUndefined();
  });
});
