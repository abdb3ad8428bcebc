import { randomUUID } from 'node:crypto';
import type { Message } from '@aws-sdk/client-sqs';
import type { Message as AmqpMessage } from 'amqplib';
import type {
  APIGatewayProxyEvent,
  CloudFormationCustomResourceEvent,
  Context,
  ScheduledEvent,
  SQSEvent,
  SQSMessageAttributes,
  SQSRecord,
} from 'aws-lambda';
import type {
  AmazonMqBasicProperties,
  AmazonMqHeaderValue,
  AmazonMqRabbitEvent,
  AmazonMqRabbitMessage,
} from '../../functions/aws/amazon-mq-event.js';
import type { RegisterWorkflowsProperties } from '../../functions/handlers/register-workflows.js';

/** Event factories for the Lambda handlers, shaped as the AWS services send them. */

export const REGION = 'us-east-1';
export const ACCOUNT = '123456789012';

export function queueArn(name: string): string {
  return `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;
}

/** A Lambda context whose deadline is `remainingMs` from now. */
export function aLambdaContext(remainingMs = 60_000, functionName = 'switchyard-test'): Context {
  const deadline = Date.now() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: '2026/01/01/[$LATEST]0123456789abcdef',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

export interface SqsRecordOptions {
  body?: string;
  /** String attributes by name (`correlation_id`, `type`); numbers for Number attributes (`attempt`). */
  attributes?: Record<string, string | number>;
  messageId?: string;
  receiveCount?: number;
  queue?: string;
  /** The `DeadLetterQueueSourceArn` system attribute of a message in a dead-letter queue. */
  deadLetterSourceQueue?: string;
}

/** One SQS record as the Lambda event source delivers it. */
export function anSqsRecord(options: SqsRecordOptions = {}): SQSRecord {
  const messageAttributes: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(options.attributes ?? {})) {
    messageAttributes[name] =
      typeof value === 'number'
        ? { dataType: 'Number', stringValue: String(value) }
        : { dataType: 'String', stringValue: value };
  }
  const now = String(Date.now());
  return {
    messageId: options.messageId ?? randomUUID(),
    receiptHandle: `rh-${randomUUID()}`,
    body: options.body ?? '{}',
    attributes: {
      ApproximateReceiveCount: String(options.receiveCount ?? 1),
      SentTimestamp: now,
      SenderId: 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: now,
      ...(options.deadLetterSourceQueue
        ? { DeadLetterQueueSourceArn: queueArn(options.deadLetterSourceQueue) }
        : {}),
    },
    messageAttributes,
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn(options.queue ?? 'Switchyard-workflow-manager'),
    awsRegion: REGION,
  };
}

/** A reply as a worker sends it to the SQS reply queue (protocol.md, SQS). */
export function anSqsReplyRecord(
  correlationId: string | undefined,
  body: string,
  options: { type?: string; attempt?: number; messageId?: string; receiveCount?: number } = {},
): SQSRecord {
  const attributes: Record<string, string | number> = {};
  if (correlationId !== undefined) attributes.correlation_id = correlationId;
  if (options.type) attributes.type = options.type;
  if (options.attempt !== undefined) attributes.attempt = options.attempt;
  return anSqsRecord({ body, attributes, messageId: options.messageId, receiveCount: options.receiveCount });
}

export function anSqsEvent(records: SQSRecord[]): SQSEvent {
  return { Records: records };
}

/** A message received with the SDK (ReceiveMessage), as the Lambda event source would hand it over. */
export function sqsRecordFromMessage(message: Message, queueArnValue: string): SQSRecord {
  const messageAttributes: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = {
      dataType: value.DataType ?? 'String',
      stringValue: value.StringValue,
      binaryValue: value.BinaryValue ? Buffer.from(value.BinaryValue).toString('base64') : undefined,
    };
  }
  const system = message.Attributes ?? {};
  const now = String(Date.now());
  return {
    messageId: message.MessageId ?? randomUUID(),
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: system.ApproximateReceiveCount ?? '1',
      SentTimestamp: system.SentTimestamp ?? now,
      SenderId: system.SenderId ?? 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: system.ApproximateFirstReceiveTimestamp ?? now,
      ...(system.DeadLetterQueueSourceArn
        ? { DeadLetterQueueSourceArn: system.DeadLetterQueueSourceArn }
        : {}),
    },
    messageAttributes,
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArnValue,
    awsRegion: REGION,
  };
}

export interface ApiEventOptions {
  /** A list is a parameter given more than once (`?id=A&id=B`). */
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  body?: string | object;
  base64?: boolean;
}

/** An API Gateway REST API (v1) proxy event for the catch-all resource, as the stack's API sends it. */
export function anApiEvent(
  method: string,
  path: string,
  options: ApiEventOptions = {},
): APIGatewayProxyEvent {
  const text =
    options.body === undefined
      ? null
      : typeof options.body === 'string'
        ? options.body
        : JSON.stringify(options.body);
  const body = text !== null && options.base64 ? Buffer.from(text).toString('base64') : text;
  const headers = { 'content-type': 'application/json', 'x-api-key': 'test-key', ...options.headers };
  return {
    resource: '/{proxy+}',
    path,
    httpMethod: method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    // API Gateway keeps the last value of a repeated parameter in the single-valued map.
    queryStringParameters: options.query
      ? Object.fromEntries(
          Object.entries(options.query).map(([name, value]) => [name, [value].flat().at(-1)]),
        )
      : null,
    multiValueQueryStringParameters: options.query
      ? Object.fromEntries(Object.entries(options.query).map(([name, value]) => [name, [value].flat()]))
      : null,
    pathParameters: { proxy: path.replace(/^\//, '') },
    stageVariables: null,
    body,
    isBase64Encoded: Boolean(options.base64),
    requestContext: {
      accountId: ACCOUNT,
      apiId: 'abc123',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: 'test-key',
        apiKeyId: 'key-id',
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: '127.0.0.1',
        user: null,
        userAgent: 'vitest',
        userArn: null,
      },
      path: `/prod${path}`,
      stage: 'prod',
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'res123',
      resourcePath: '/{proxy+}',
    },
  };
}

/** The EventBridge rule's event every minute (`rate(1 minute)`). */
export function aScheduledEvent(time = new Date()): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: ACCOUNT,
    time: time.toISOString(),
    region: REGION,
    resources: [`arn:aws:events:${REGION}:${ACCOUNT}:rule/Switchyard-TimerSweep`],
    detail: {},
  };
}

/** A message as the Amazon MQ event source mapping lists it: base64 data, Lambda's basicProperties. */
export function anAmazonMqMessage(
  body: string,
  properties: AmazonMqBasicProperties = {},
  redelivered = false,
): AmazonMqRabbitMessage {
  const data = Buffer.from(body);
  return {
    basicProperties: {
      contentType: 'application/json',
      contentEncoding: null,
      headers: {},
      deliveryMode: 2,
      priority: null,
      correlationId: null,
      replyTo: null,
      expiration: null,
      messageId: null,
      timestamp: null,
      type: null,
      userId: null,
      appId: null,
      clusterId: null,
      bodySize: data.length,
      ...properties,
    },
    redelivered,
    data: data.toString('base64'),
  };
}

/** A long-string header as the event source mapping writes it: its UTF-8 bytes. */
export function amazonMqBytes(text: string): { bytes: number[] } {
  return { bytes: [...Buffer.from(text)] };
}

/**
 * A message consumed from RabbitMQ (amqplib), as the Amazon MQ event source mapping would list it:
 * the body base64, the properties under Lambda's names, long-string headers as their bytes.
 */
export function amazonMqMessageFromAmqp(message: AmqpMessage): AmazonMqRabbitMessage {
  const { properties } = message;
  const headers: Record<string, AmazonMqHeaderValue> = {};
  for (const [name, value] of Object.entries(properties.headers ?? {})) headers[name] = amazonMqHeader(value);
  const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
  const integer = (value: unknown): number | null => (typeof value === 'number' ? value : null);
  return {
    basicProperties: {
      contentType: text(properties.contentType),
      contentEncoding: text(properties.contentEncoding),
      headers,
      deliveryMode: integer(properties.deliveryMode),
      priority: integer(properties.priority),
      correlationId: text(properties.correlationId),
      replyTo: text(properties.replyTo),
      expiration: text(properties.expiration),
      messageId: text(properties.messageId),
      timestamp:
        typeof properties.timestamp === 'number' ? new Date(properties.timestamp * 1000).toUTCString() : null,
      type: text(properties.type),
      userId: text(properties.userId),
      appId: text(properties.appId),
      clusterId: text(properties.clusterId),
      bodySize: message.content.length,
    },
    redelivered: message.fields.redelivered,
    data: message.content.toString('base64'),
  };
}

function amazonMqHeader(value: unknown): AmazonMqHeaderValue {
  if (typeof value === 'string') return amazonMqBytes(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (Buffer.isBuffer(value)) return { bytes: [...value] };
  if (Array.isArray(value)) return value.map(amazonMqHeader);
  if (typeof value === 'object' && value !== undefined) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, amazonMqHeader(inner)]));
  }
  return null;
}

export function anAmazonMqEvent(
  messagesByQueue: Record<string, AmazonMqRabbitMessage[]>,
  vhost = '/',
): AmazonMqRabbitEvent {
  return {
    eventSource: 'aws:rmq',
    eventSourceArn: `arn:aws:mq:${REGION}:${ACCOUNT}:broker:switchyard-rabbitmq:b-${randomUUID()}`,
    rmqMessagesByQueue: Object.fromEntries(
      Object.entries(messagesByQueue).map(([queue, messages]) => [`${queue}::${vhost}`, messages]),
    ),
  };
}

/** A CloudFormation custom resource event, as the CDK provider framework passes it to onEvent. */
export function aCustomResourceEvent(
  requestType: 'Create' | 'Update' | 'Delete',
  definitions: unknown,
  physicalResourceId = 'switchyard-workflows',
): CloudFormationCustomResourceEvent<RegisterWorkflowsProperties> {
  const ResourceProperties: RegisterWorkflowsProperties = {
    ServiceToken: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:provider`,
    Definitions: typeof definitions === 'string' ? definitions : JSON.stringify(definitions),
  };
  const common = {
    ServiceToken: ResourceProperties.ServiceToken,
    ResponseURL: 'https://cloudformation-custom-resource-response.example/response',
    StackId: `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/Switchyard/${randomUUID()}`,
    RequestId: randomUUID(),
    LogicalResourceId: 'WorkflowRegistrationWorkflows',
    ResourceType: 'Custom::SwitchyardWorkflows',
    ResourceProperties,
  };
  if (requestType === 'Create') return { ...common, RequestType: 'Create' };
  if (requestType === 'Update') {
    return {
      ...common,
      RequestType: 'Update',
      PhysicalResourceId: physicalResourceId,
      OldResourceProperties: ResourceProperties,
    };
  }
  return { ...common, RequestType: 'Delete', PhysicalResourceId: physicalResourceId };
}
