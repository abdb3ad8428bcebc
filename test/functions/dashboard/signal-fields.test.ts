import { describe, expect, it } from 'vitest';
import { signalBodyOf, signalFieldsOf } from '../../../functions/dashboard/src/signal-fields.js';

describe('signal forms drawn from a signal schema', () => {
  const schema = {
    type: 'object',
    required: ['decision'],
    properties: {
      decision: { enum: ['approve', 'reject'], title: 'Decision', description: 'What the reviewer decided' },
      comment: { type: 'string' },
      amount: { type: 'number', title: 'Amount' },
      urgent: { type: 'boolean' },
    },
  };

  it('has a field per property: its label, kind, choices and whether it is required', () => {
    expect(signalFieldsOf(schema)).toEqual([
      {
        name: 'decision',
        label: 'Decision',
        help: 'What the reviewer decided',
        required: true,
        kind: 'choice',
        choices: ['approve', 'reject'],
      },
      { name: 'comment', label: 'comment', required: false, kind: 'text' },
      { name: 'amount', label: 'Amount', required: false, kind: 'number' },
      { name: 'urgent', label: 'urgent', required: false, kind: 'boolean' },
    ]);
  });

  it('makes the body of the filled fields, each as its kind reads it', () => {
    const fields = signalFieldsOf(schema)!;
    expect(signalBodyOf(fields, { decision: '1', comment: '', amount: '12.5', urgent: true })).toEqual({
      decision: 'reject',
      amount: 12.5,
      urgent: true,
    });
  });

  it('has no fields for a schema a form cannot show (nested objects, lists, none): the JSON text area stays', () => {
    expect(signalFieldsOf(undefined)).toBeUndefined();
    expect(signalFieldsOf({ type: 'object' })).toBeUndefined();
    expect(signalFieldsOf({ properties: { items: { type: 'array' } } })).toBeUndefined();
  });
});
