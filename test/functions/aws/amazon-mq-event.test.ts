import { describe, expect, it } from 'vitest';
import { type AmazonMqBasicProperties, amazonMqReply } from '../../../functions/aws/amazon-mq-event.js';
import { amazonMqBytes, anAmazonMqMessage } from '../../support/aws-events.js';

const correlationId = '0b8a3e0e-7c1d-4f6e-9a57-1f2d3c4b5a69:count';
const errorReply = (headers: AmazonMqBasicProperties['headers']) =>
  amazonMqReply(anAmazonMqMessage('{"error":"bad input"}', { correlationId, type: 'error', headers }));

describe('Function: amazonMqReply (Amazon MQ event source)', () => {
  it('reads x-retryable: false from a boolean header or a long string false', () => {
    for (const value of [false, amazonMqBytes('false'), amazonMqBytes('False'), 'false']) {
      expect(errorReply({ 'x-retryable': value, 'x-attempt': 3 })).toEqual({
        correlationId,
        body: '{"error":"bad input"}',
        type: 'error',
        attempt: 3,
        retryable: false,
      });
    }
  });

  it('reads x-retryable: true, and leaves out a header that is absent or neither true nor false', () => {
    expect(errorReply({ 'x-retryable': true }).retryable).toBe(true);
    expect(errorReply({ 'x-retryable': amazonMqBytes('true') }).retryable).toBe(true);
    const others: AmazonMqBasicProperties['headers'][] = [
      {},
      { 'x-retryable': 0 },
      { 'x-retryable': amazonMqBytes('nope') },
      null,
    ];
    for (const headers of others) {
      expect('retryable' in errorReply(headers)).toBe(false);
    }
  });

  it('names the worker by its x-worker header (a long string), else by the app_id property', () => {
    const reply = (headers: AmazonMqBasicProperties['headers'], appId?: string) =>
      amazonMqReply(anAmazonMqMessage('{}', { correlationId, headers, ...(appId ? { appId } : {}) }));
    expect(reply({ 'x-worker': amazonMqBytes('billing-7f9c:4242') }, 'billing-app').worker).toBe(
      'billing-7f9c:4242',
    );
    expect(reply({}, 'billing-app').worker).toBe('billing-app');
    expect(reply({}).worker).toBeUndefined();
  });
});
