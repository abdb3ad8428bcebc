import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { handleApiGatewayEvent } from '../api/api-handler.js';
import { ApiError, errorResponse } from '../api/http.js';
import type { ApiDeps } from '../api/router.js';

/**
 * Serves the API handler on node:http: each request becomes the API Gateway (REST, v1 proxy) event
 * the deployed API function receives, so both runtimes run the same code.
 */
export function createHttpBridge(deps: ApiDeps): Server {
  return createServer((request, response) => {
    void serve(request, response, deps);
  });
}

async function serve(request: IncomingMessage, response: ServerResponse, deps: ApiDeps): Promise<void> {
  try {
    const body = await readBody(request, deps.maxBodyBytes);
    const result = await handleApiGatewayEvent(toEvent(request, body), deps);
    response.writeHead(result.statusCode, result.headers as Record<string, string>);
    response.end(result.body);
  } catch (error) {
    const failure = errorResponse(error);
    if (!response.headersSent)
      response.writeHead(failure.status, { ...failure.headers, connection: 'close' });
    response.end(failure.body);
  }
}

/** Reads at most `limit` bytes; a larger body is refused without buffering it. */
function readBody(request: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    request.resume();
    return Promise.reject(
      new ApiError('payload_too_large', `the body is ${declared} bytes; the limit is ${limit}`),
    );
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.removeAllListeners('data');
        request.resume();
        reject(
          new ApiError('payload_too_large', `the body is more than ${limit} bytes; the limit is ${limit}`),
        );
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function toEvent(request: IncomingMessage, body: string): APIGatewayProxyEvent {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    headers[name] = values.join(', ');
    multiValueHeaders[name] = values;
  }
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) {
    query[name] = value;
    multiQuery[name] = [...(multiQuery[name] ?? []), value];
  }
  const method = request.method ?? 'GET';
  return {
    httpMethod: method,
    path: url.pathname,
    resource: '/{proxy+}',
    headers,
    multiValueHeaders,
    queryStringParameters: url.searchParams.size ? query : null,
    multiValueQueryStringParameters: url.searchParams.size ? multiQuery : null,
    pathParameters: { proxy: url.pathname.slice(1) },
    stageVariables: null,
    body: body === '' ? null : body,
    isBase64Encoded: false,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${request.httpVersion}`,
      httpMethod: method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: request.socket.remoteAddress ?? '',
        user: null,
        userAgent: request.headers['user-agent'] ?? null,
        userArn: null,
      },
      path: url.pathname,
      stage: 'local',
      requestId: `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`,
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: '/{proxy+}',
    },
  };
}
