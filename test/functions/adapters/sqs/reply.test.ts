import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { parseSqsReply } from '../../../../functions/adapters/sqs/reply.js';

const correlationId = '0b8a3e0e-7c1d-4f6e-9a57-1f2d3c4b5a69:count';

function lambdaRecord(overrides: Partial<SQSRecord> = {}): SQSRecord {
  return {
    messageId: 'm-1',
    receiptHandle: 'rh-1',
    body: '{"count":3}',
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: '1700000000000',
      SenderId: 'AIDA',
      ApproximateFirstReceiveTimestamp: '1700000000001',
    },
    messageAttributes: {
      correlation_id: { dataType: 'String', stringValue: correlationId },
    },
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:switchyard-replies',
    awsRegion: 'us-east-1',
    ...overrides,
  };
}

describe('Function: parseSqsReply', () => {
  it('reads a reply delivered to Lambda', () => {
    // Act
    const reply = parseSqsReply(lambdaRecord());

    // Assess
    expect(reply).toEqual({ correlationId, body: '{"count":3}' });
  });

  it('reads the type and attempt of an error reply delivered to Lambda', () => {
    // Prepare
    const record = lambdaRecord({
      body: '{"error":"boom"}',
      messageAttributes: {
        correlation_id: { dataType: 'String', stringValue: correlationId },
        type: { dataType: 'String', stringValue: 'error' },
        attempt: { dataType: 'Number', stringValue: '2' },
      },
    });

    // Act
    const reply = parseSqsReply(record);

    // Assess
    expect(reply).toEqual({ correlationId, body: '{"error":"boom"}', type: 'error', attempt: 2 });
  });

  it('reads a reply returned by ReceiveMessage', () => {
    // Act
    const reply = parseSqsReply({
      MessageId: 'm-2',
      Body: 'null',
      MessageAttributes: {
        correlation_id: { DataType: 'String', StringValue: correlationId },
        type: { DataType: 'String', StringValue: 'heartbeat' },
        attempt: { DataType: 'String', StringValue: '4' },
      },
    });

    // Assess
    expect(reply).toEqual({ correlationId, body: 'null', type: 'heartbeat', attempt: 4 });
  });

  it('reads the x-retryable attribute: the text false, in any case, from Lambda or ReceiveMessage', () => {
    // Prepare
    const attributes = (value: string) => ({
      correlation_id: { dataType: 'String', stringValue: correlationId },
      type: { dataType: 'String', stringValue: 'error' },
      'x-retryable': { dataType: 'String', stringValue: value },
    });

    // Act
    const fromLambda = ['false', 'False', ' FALSE '].map((value) =>
      parseSqsReply(lambdaRecord({ body: '{"error":"bad input"}', messageAttributes: attributes(value) })),
    );
    const fromSdk = parseSqsReply({
      Body: '{"error":"bad input"}',
      MessageAttributes: {
        correlation_id: { DataType: 'String', StringValue: correlationId },
        type: { DataType: 'String', StringValue: 'error' },
        'x-retryable': { DataType: 'String', StringValue: 'false' },
      },
    });
    const retryable = parseSqsReply(lambdaRecord({ messageAttributes: attributes('true') }));
    const neither = ['no', '0', ''].map((value) =>
      parseSqsReply(lambdaRecord({ messageAttributes: attributes(value) })),
    );

    // Assess
    const expected = { correlationId, body: '{"error":"bad input"}', type: 'error', retryable: false };
    expect(fromLambda).toEqual([expected, expected, expected]);
    expect(fromSdk).toEqual(expected);
    expect(retryable.retryable).toBe(true);
    for (const reply of neither) expect('retryable' in reply).toBe(false);
  });

  it('leaves out what the message does not carry, or carries malformed', () => {
    // Act
    const fromSdk = parseSqsReply({ MessageId: 'm-3' });
    const fromLambda = parseSqsReply(
      lambdaRecord({ messageAttributes: { attempt: { dataType: 'Number', stringValue: 'two' } } }),
    );

    // Assess
    expect(fromSdk).toEqual({ body: '' });
    expect(fromLambda).toEqual({ body: '{"count":3}' });
  });

  it('reads the x-worker attribute from Lambda or ReceiveMessage', () => {
    const fromLambda = parseSqsReply(
      lambdaRecord({
        messageAttributes: {
          correlation_id: { dataType: 'String', stringValue: correlationId },
          'x-worker': { dataType: 'String', stringValue: 'ip-10-0-1-7:311' },
        },
      }),
    );
    const fromSdk = parseSqsReply({
      Body: '{}',
      MessageAttributes: { 'x-worker': { DataType: 'String', StringValue: 'lambda-charge:9' } },
    });
    expect(fromLambda.worker).toBe('ip-10-0-1-7:311');
    expect(fromSdk.worker).toBe('lambda-charge:9');
  });
});
