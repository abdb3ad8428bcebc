import { handleApiRequest } from '../../functions/api/api-handler.js';
import { ApiService } from '../../functions/api/api-service.js';
import type { ApiResponse } from '../../functions/api/http.js';
import type { ApiDeps } from '../../functions/api/router.js';
import type { SimulatedWorld } from './simulated-world.js';

export interface ApiCall {
  method: string;
  path: string;
  /** A list is a parameter given more than once (`?id=A&id=B`). */
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  body?: string;
}

/** The API on a simulated world: its manager, store and bus behind the routes, as a host wires them. */
export function worldApi(world: SimulatedWorld, options: Omit<ApiDeps, 'service' | 'logger'>): ApiDeps {
  return {
    service: new ApiService({ manager: world.manager, store: world.store, bus: world.bus }),
    logger: world.manager.telemetry.logger,
    ...options,
  };
}

/** Calls the API handler in this process, as the HTTP bridge and API Gateway do. */
export function callApi(deps: ApiDeps, call: ApiCall): Promise<ApiResponse> {
  return handleApiRequest(
    {
      method: call.method,
      path: call.path,
      query: Object.fromEntries(
        Object.entries(call.query ?? {}).map(([name, value]) => [name, [value].flat()]),
      ),
      headers: call.headers ?? {},
      body: call.body ?? '',
    },
    deps,
  );
}

/** The `{"error": {"code", "message"}}` of an error response, or why the body is not one. */
export function errorOf(response: ApiResponse): { code: string; message: string } {
  const parsed = JSON.parse(response.body) as { error?: { code?: unknown; message?: unknown } };
  if (typeof parsed.error?.code !== 'string' || typeof parsed.error.message !== 'string') {
    throw new Error(`not an API error body: ${response.body.slice(0, 300)}`);
  }
  return { code: parsed.error.code, message: parsed.error.message };
}

/** Own keys of Object.prototype and whether `({}).polluted` is set: to compare before and after. */
export function prototypeFingerprint(): string {
  const probe = {} as Record<string, unknown>;
  return JSON.stringify({
    keys: Object.getOwnPropertyNames(Object.prototype).sort(),
    polluted: probe.polluted,
    arrayKeys: Object.getOwnPropertyNames(Array.prototype).sort(),
  });
}
