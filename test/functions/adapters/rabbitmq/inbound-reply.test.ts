import type { Message } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { toInboundReply } from '../../../../functions/adapters/rabbitmq/inbound-reply.js';

const correlationId = '0b8a3e0e-7c1d-4f6e-9a57-1f2d3c4b5a69:count';

function anAmqpReply(headers: Record<string, unknown>, type = 'error'): Message {
  return {
    content: Buffer.from('{"error":"bad input"}'),
    fields: { deliveryTag: 1, redelivered: false, exchange: '', routingKey: 'workflow-manager' },
    properties: { correlationId, type, headers },
  } as unknown as Message;
}

describe('Function: toInboundReply (RabbitMQ)', () => {
  it('reads x-retryable: false from a boolean header or the text false, in any case', () => {
    for (const value of [false, 'false', 'False', ' FALSE ']) {
      expect(toInboundReply(anAmqpReply({ 'x-retryable': value, 'x-attempt': 2 }))).toEqual({
        correlationId,
        body: '{"error":"bad input"}',
        type: 'error',
        attempt: 2,
        retryable: false,
      });
    }
  });

  it('reads x-retryable: true, and leaves out a header that is absent or neither true nor false', () => {
    expect(toInboundReply(anAmqpReply({ 'x-retryable': true })).retryable).toBe(true);
    expect(toInboundReply(anAmqpReply({ 'x-retryable': 'true' })).retryable).toBe(true);
    for (const value of [undefined, 0, 'no', '', null, Buffer.from('false')]) {
      expect('retryable' in toInboundReply(anAmqpReply({ 'x-retryable': value }))).toBe(false);
    }
  });

  it('names the worker by its x-worker header, else by the app_id property, else not at all', () => {
    const named = (headers: Record<string, unknown>, appId?: string) => {
      const message = anAmqpReply(headers, 'result');
      if (appId !== undefined) message.properties.appId = appId;
      return toInboundReply(message).worker;
    };
    expect(named({ 'x-worker': 'billing-7f9c:4242' }, 'billing-app')).toBe('billing-7f9c:4242');
    expect(named({ 'x-worker': Buffer.from('from-bytes:1') })).toBe('from-bytes:1');
    expect(named({}, 'billing-app')).toBe('billing-app');
    expect(named({})).toBeUndefined();
  });
});
