import { describe, expect, it } from 'vitest';
import { formatDefinitionError, loadWorkflows } from '../../../engine/index.js';

const withSchedules = (schedules: string) => `workflows:
  - name: report
    steps:
      - name: build
    schedules:
${schedules}`;

const load = (schedules: string) => loadWorkflows(withSchedules(schedules), { file: 'flows.yaml' });
const errorsOf = (schedules: string) => load(schedules).errors.map(formatDefinitionError);

describe('Definition key: schedules', () => {
  it('reads a schedule, leaving out the defaults and naming the time zone canonically', () => {
    const { workflows, errors } = load(`      - cron: "0 6 * * 1-5"
        timezone: europe/paris
        input: { kind: daily }
      - cron: " 30  2 * * * "
        timezone: UTC
        catchUp: all
        input: {}
      - cron: "*/15 * * * *"
        catchUp: latest
`);
    expect(errors).toEqual([]);
    expect(workflows[0]?.schedules).toEqual([
      { cron: '0 6 * * 1-5', timezone: 'Europe/Paris', input: { kind: 'daily' } },
      { cron: '30 2 * * *' },
      { cron: '*/15 * * * *', catchUp: 'latest' },
    ]);
  });

  it('refuses a 6-field cron, naming where it is', () => {
    expect(errorsOf('      - cron: "0 0 6 * * 1-5"\n')).toEqual([
      'flows.yaml:6: workflow "report": "cron" must have 5 fields (minute hour day-of-month month day-of-week), got 6 in "0 0 6 * * 1-5"',
    ]);
  });

  it.each([
    ['61 6 * * *', 'minute: 61'],
    ['0 24 * * *', 'hour: 24'],
    ['0 6 32 * *', 'day'],
    ['0 6 * 13 *', 'month'],
    ['0 6 * * 8', 'dayofweek: 8'],
  ])('refuses the out-of-range cron %s', (cron, what) => {
    const [error, ...more] = errorsOf(`      - cron: "${cron}"\n`);
    expect(more).toEqual([]);
    expect(error).toContain(`flows.yaml:6: workflow "report": "cron" "${cron}" is not valid:`);
    expect(error?.toLowerCase()).toContain(what);
  });

  it('refuses an unknown time zone', () => {
    expect(errorsOf('      - cron: "0 6 * * *"\n        timezone: Mars/Olympus\n')).toEqual([
      'flows.yaml:7: workflow "report": unknown time zone "Mars/Olympus": use an IANA name such as "Europe/Paris" or "UTC"',
    ]);
  });

  it('refuses unknown keys, a bad catchUp or input, a missing cron and a duplicate schedule', () => {
    expect(
      errorsOf(`      - cron: "0 6 * * *"
        timezon: UTC
      - cron: "0 6 * * *"
        catchUp: sometimes
      - cron: "0 6 * * *"
        input: [ 1 ]
      - timezone: UTC
      - cron: "0 7 * * *"
      - cron: "0  7 * * *"
`),
    ).toEqual([
      'flows.yaml:7: workflow "report": unknown schedule key "timezon": did you mean "timezone"?',
      'flows.yaml:9: workflow "report": "catchUp" must be "all" (the default) or "latest", got "sometimes"',
      'flows.yaml:11: workflow "report": "input" must be a mapping (each tick\'s job input), got list',
      'flows.yaml:12: workflow "report": a schedule needs a "cron", e.g. "0 6 * * 1-5" (minute hour day-of-month month day-of-week)',
      'flows.yaml:14: workflow "report": the same schedule (cron, time zone and input) is listed twice',
    ]);
  });

  it('refuses schedules that are not a list', () => {
    expect(errorsOf('      cron: "0 6 * * *"\n')).toEqual([
      'flows.yaml:6: workflow "report": "schedules" must be a list, e.g. [ { cron: "0 6 * * 1-5" } ]; got object',
    ]);
  });
});
