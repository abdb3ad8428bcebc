import { describe, expect, it } from 'vitest';
import {
  namespacedApiPath,
  namespacedHash,
  splitNamespace,
} from '../../../functions/dashboard/src/namespace-route.js';

describe('Module: namespace-route (the dashboard namespace in the fragment and the API paths)', () => {
  it('reads the namespace off the fragment, and leaves a fragment without one as it is', () => {
    expect(splitNamespace('#/ns/team-a/jobs?status=failed')).toEqual({
      namespace: 'team-a',
      hash: '#/jobs?status=failed',
    });
    expect(splitNamespace('#/ns/team-a')).toEqual({ namespace: 'team-a', hash: '#/' });
    expect(splitNamespace('#/job/abc')).toEqual({ hash: '#/job/abc' });
    expect(splitNamespace('#/ns/%E0%A4%A/jobs')).toEqual({ hash: '#/ns/%E0%A4%A/jobs' });
  });

  it('writes a fragment in a namespace, unprefixed in default', () => {
    expect(namespacedHash('team-a', '#/job/abc?step=x')).toBe('#/ns/team-a/job/abc?step=x');
    expect(namespacedHash('default', '#/jobs')).toBe('#/jobs');
    expect(namespacedHash('default', '')).toBe('#/');
    expect(splitNamespace(namespacedHash('team-b', '#/workflow/billing'))).toEqual({
      namespace: 'team-b',
      hash: '#/workflow/billing',
    });
  });

  it('puts the namespaced API paths beneath api/ns/{namespace}/, and no others', () => {
    expect(namespacedApiPath('team-a', 'api/jobs?detail=1')).toBe('api/ns/team-a/jobs?detail=1');
    expect(namespacedApiPath('team-a', 'api/job/abc/children?step=s')).toBe(
      'api/ns/team-a/job/abc/children?step=s',
    );
    expect(namespacedApiPath('team-a', 'api/workflows')).toBe('api/ns/team-a/workflows');
    expect(namespacedApiPath('team-a', 'api/queues?workflow=w')).toBe('api/ns/team-a/queues?workflow=w');
    expect(namespacedApiPath('team-a', 'api/schedules?ticks=3')).toBe('api/ns/team-a/schedules?ticks=3');
    expect(namespacedApiPath('team-a', 'api/namespaces')).toBe('api/namespaces');
    expect(namespacedApiPath('team-a', 'api/tokens')).toBe('api/tokens');
    expect(namespacedApiPath('default', 'api/jobs')).toBe('api/jobs');
  });
});
