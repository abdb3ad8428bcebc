import { describe, expect, it } from 'vitest';
import { formatDefinitionError, loadWorkflows } from '../../../engine/index.js';

const errorsOf = (yaml: string, allowBare = false) =>
  loadWorkflows(yaml, { file: 'flows.yaml', allowBare }).errors.map(formatDefinitionError);

const ORIGINAL_EXAMPLE = `workflows:
  - name: book-word-counts
    steps:
      - name: book-split
      - name: section-counts
        task: word-counts
        depends: [ book-split ]
      - name: sum-splits
        depends: [ section-counts ]
      - name: store-title
    tasks:
      - name: word-counts
        itemListKey: sections
        steps:
          - name: segment-word-counts
`;

describe('Function: loadWorkflows', () => {
  describe('configs of the original', () => {
    it("loads the original's example unchanged", () => {
      const { workflows, errors } = loadWorkflows(ORIGINAL_EXAMPLE);
      expect(errors).toEqual([]);
      expect(workflows).toEqual([
        {
          name: 'book-word-counts',
          steps: [
            { name: 'book-split' },
            { name: 'section-counts', task: 'word-counts', depends: ['book-split'] },
            { name: 'sum-splits', depends: ['section-counts'] },
            { name: 'store-title' },
          ],
          tasks: [{ name: 'word-counts', itemListKey: 'sections', steps: [{ name: 'segment-word-counts' }] }],
        },
      ]);
    });

    it('accepts vhosts, queues, nested tasks and depends: [__start__]', () => {
      const { workflows, errors } = loadWorkflows(`workflows:
  - name: nested
    vhosts: [ "/", tenant-a ]
    steps:
      - name: first
        queue: first-queue
        depends: [ __start__ ]
      - name: outer
        task: outer-task
        depends: [ first ]
    tasks:
      - name: outer-task
        itemListKey: groups
        steps:
          - name: inner
            task: inner-task
      - name: inner-task
        itemListKey: items
        steps:
          - name: leaf
`);
      expect(errors).toEqual([]);
      expect(workflows[0]?.vhosts).toEqual(['/', 'tenant-a']);
      expect(workflows[0]?.steps[0]).toEqual({ name: 'first', queue: 'first-queue' });
    });

    it('loads the same definition from JSON', () => {
      const json = JSON.stringify({
        workflows: [{ name: 'j', steps: [{ name: 'a' }, { name: 'b', depends: ['a'] }] }],
      });
      expect(loadWorkflows(json)).toEqual({
        workflows: [{ name: 'j', steps: [{ name: 'a' }, { name: 'b', depends: ['a'] }] }],
        errors: [],
      });
    });

    it('normalises so that equivalent files compare equal', () => {
      const a = loadWorkflows(
        'workflows:\n  - name: w\n    steps:\n      - name: s\n        queue: s\n        depends: []\n        retries: 0\n        type: worker\n',
      );
      const b = loadWorkflows('workflows:\n  - name: w\n    steps:\n      - name: s\n');
      expect(a).toEqual(b);
    });

    it('accepts a bare workflow where allowed (the API)', () => {
      const { workflows, errors } = loadWorkflows('name: bare\nsteps:\n  - name: a\n', { allowBare: true });
      expect(errors).toEqual([]);
      expect(workflows[0]?.name).toBe('bare');
      expect(errorsOf('name: bare\nsteps:\n  - name: a\n')).toEqual([
        'flows.yaml:1: expected a "workflows:" list; this looks like a single workflow: put it under "workflows:" as "- name: …"',
      ]);
    });

    it('ignores a byte order mark and CRLF line endings', () => {
      const { errors } = loadWorkflows(`\uFEFF${ORIGINAL_EXAMPLE.replaceAll('\n', '\r\n')}`);
      expect(errors).toEqual([]);
    });
  });

  describe('extensions', () => {
    it('reads timeouts, retries, retry delays, signal steps, itemKey, concurrency and descriptions', () => {
      const { workflows, errors } = loadWorkflows(`workflows:
  - name: extended
    description: shown in the dashboard
    timeout: 1h
    steps:
      - name: fetch
        timeout: 30s
        retries: 3
        retryDelay: 1s
      - name: approve
        type: signal
        timeout: 2d
        depends: [ fetch ]
      - name: fan
        task: per-item
        depends: [ approve ]
    tasks:
      - name: per-item
        itemListKey: entries
        itemKey: entry
        concurrency: 4
        steps:
          - name: work
`);
      expect(errors).toEqual([]);
      expect(workflows[0]).toMatchObject({
        description: 'shown in the dashboard',
        timeout: '1h',
        steps: [
          { name: 'fetch', timeout: '30s', retries: 3, retryDelay: '1s' },
          { name: 'approve', type: 'signal', timeout: '2d', depends: ['fetch'] },
          { name: 'fan', task: 'per-item', depends: ['approve'] },
        ],
        tasks: [{ name: 'per-item', itemListKey: 'entries', itemKey: 'entry', concurrency: 4 }],
      });
    });
  });

  describe('validation', () => {
    it.each([
      [
        'a name that breaks the pattern',
        'workflows:\n  - name: 9lives\n    steps:\n      - name: a\n',
        'flows.yaml:2: workflow name "9lives" is not valid: use a letter, then letters, digits, "_" or "-"',
      ],
      [
        'a step name that breaks the pattern',
        'workflows:\n  - name: w\n    steps:\n      - name: "a b"\n',
        'flows.yaml:4: workflow "w": step name "a b" is not valid: use a letter, then letters, digits, "_" or "-"',
      ],
      [
        'a reserved step name',
        'workflows:\n  - name: w\n    steps:\n      - name: __end__\n',
        'flows.yaml:4: workflow "w": step name "__end__" is not valid: use a letter, then letters, digits, "_" or "-"',
      ],
      [
        'a step without a name',
        'workflows:\n  - name: w\n    steps:\n      - queue: q\n',
        'flows.yaml:4: workflow "w": a step needs a "name"',
      ],
      [
        'duplicate step names',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n      - name: a\n',
        'flows.yaml:5: workflow "w", step "a": a step with this name is already defined in this workflow',
      ],
      [
        'duplicate task names',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        task: t\n    tasks:\n      - name: t\n        itemListKey: xs\n        steps: [ { name: b } ]\n      - name: t\n        itemListKey: ys\n        steps: [ { name: c } ]\n',
        'flows.yaml:10: workflow "w", task "t": a task with this name is already defined in this workflow',
      ],
      [
        'duplicate workflow names',
        'workflows:\n  - name: w\n    steps: [ { name: a } ]\n  - name: w\n    steps: [ { name: a } ]\n',
        'flows.yaml:4: workflow "w": a workflow with this name is already defined in this file',
      ],
      [
        'an unknown dependency, with a suggestion',
        'workflows:\n  - name: w\n    steps:\n      - name: split\n      - name: sum\n        depends: [ splt ]\n',
        'flows.yaml:6: workflow "w", step "sum": depends on "splt", which is not a step of this workflow (did you mean "split"?)',
      ],
      [
        'a dependency on a step of another scope',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        task: t\n    tasks:\n      - name: t\n        itemListKey: xs\n        steps:\n          - name: b\n            depends: [ a ]\n',
        'flows.yaml:11: workflow "w", task "t", step "b": depends on "a", which is not a step of this task',
      ],
      [
        'a self-dependency',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        depends: [ a ]\n',
        'flows.yaml:5: workflow "w", step "a": dependency cycle: a -> a',
      ],
      [
        'an unknown task, with a suggestion',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        task: word-count\n    tasks:\n      - name: word-counts\n        itemListKey: xs\n        steps: [ { name: b } ]\n',
        'flows.yaml:5: workflow "w", step "a": uses task "word-count", which is not defined in this workflow (did you mean "word-counts"?)',
      ],
      [
        'a task without itemListKey',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        task: t\n    tasks:\n      - name: t\n        steps: [ { name: b } ]\n',
        'flows.yaml:7: workflow "w", task "t": a task needs "itemListKey": the input key holding the list to fan out over',
      ],
      [
        'a task without steps',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        task: t\n    tasks:\n      - name: t\n        itemListKey: xs\n',
        'flows.yaml:7: workflow "w", task "t": a task needs at least one step ("steps:" list)',
      ],
      [
        'a task that uses itself',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        task: t\n    tasks:\n      - name: t\n        itemListKey: xs\n        steps:\n          - name: again\n            task: t\n',
        'flows.yaml:7: workflow "w", task "t": the task uses itself',
      ],
      [
        'a workflow without steps',
        'workflows:\n  - name: w\n    steps: []\n',
        'flows.yaml:3: workflow "w": a workflow needs at least one step ("steps:" list)',
      ],
      [
        'an unknown key, with the closest known key',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        dependss: [ b ]\n',
        'flows.yaml:5: workflow "w", step "a": unknown step key "dependss": did you mean "depends"?',
      ],
      [
        'an unknown task key',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        task: t\n    tasks:\n      - name: t\n        itemListkey: xs\n        steps: [ { name: b } ]\n',
        'flows.yaml:8: workflow "w", task "t": unknown task key "itemListkey": did you mean "itemListKey"?',
      ],
      [
        'a bad duration',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        timeout: 30\n',
        'flows.yaml:5: workflow "w", step "a": "timeout" must be a duration such as "30s", "5m" or "1h30m", got 30',
      ],
      [
        'negative retries',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        retries: -1\n',
        'flows.yaml:5: workflow "w", step "a": "retries" must be a whole number from 0 to 100, got -1',
      ],
      [
        'retries on a signal step',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        type: signal\n        retries: 2\n',
        'flows.yaml:6: workflow "w", step "a": "retries" does not apply to a signal step: it is completed through the API, not by a worker',
      ],
      [
        'a queue on a signal step',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        type: signal\n        queue: q\n',
        'flows.yaml:6: workflow "w", step "a": "queue" does not apply to a signal step: it is completed through the API, not by a worker',
      ],
      [
        'retries on a fan-out step',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        task: t\n        retries: 1\n    tasks:\n      - name: t\n        itemListKey: xs\n        steps: [ { name: b } ]\n',
        'flows.yaml:6: workflow "w", step "a": "retries" does not apply to a fan-out step (task "t"): set it on the task\'s steps instead',
      ],
      [
        'an unknown step type',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        type: human\n',
        'flows.yaml:5: workflow "w", step "a": "type" must be "signal" (or "worker", the default), got "human"',
      ],
      [
        'a concurrency of zero',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        task: t\n    tasks:\n      - name: t\n        itemListKey: xs\n        concurrency: 0\n        steps: [ { name: b } ]\n',
        'flows.yaml:9: workflow "w", task "t": "concurrency" must be a whole number of at least 1, got 0',
      ],
      [
        'depends that is not a list',
        'workflows:\n  - name: w\n    steps:\n      - name: a\n      - name: b\n        depends: a\n',
        'flows.yaml:6: workflow "w", step "b": "depends" must be a list of step names, e.g. [ a, b ]; got string',
      ],
      ['invalid YAML', 'workflows:\n  - name: w\n   steps: [\n', 'flows.yaml:3: not valid YAML or JSON: '],
      [
        'a document that is not a mapping',
        '- just\n- a list\n',
        'flows.yaml:1: expected a document with a "workflows:" list, got list',
      ],
    ])('reports %s', (_, yaml, expected) => {
      const errors = errorsOf(yaml);
      expect(errors.some((error) => error.startsWith(expected))).toBe(true);
    });

    it('spells cycles out in the order they run', () => {
      expect(
        errorsOf(
          'workflows:\n  - name: w\n    steps:\n      - name: a\n        depends: [ c ]\n      - name: b\n        depends: [ a ]\n      - name: c\n        depends: [ b ]\n',
        ),
      ).toEqual(['flows.yaml:5: workflow "w", step "a": dependency cycle: a -> b -> c -> a']);
    });

    it('spells out tasks that use each other', () => {
      const errors = errorsOf(`workflows:
  - name: w
    steps:
      - name: a
        task: t1
    tasks:
      - name: t1
        itemListKey: xs
        steps: [ { name: b, task: t2 } ]
      - name: t2
        itemListKey: ys
        steps: [ { name: c, task: t1 } ]
`);
      expect(errors).toEqual([
        'flows.yaml:7: workflow "w", task "t1": tasks use each other in a cycle: t1 -> t2 -> t1',
      ]);
    });

    it('reports every error of a file, and loads nothing when there is one', () => {
      const result = loadWorkflows(
        'workflows:\n  - name: w\n    steps:\n      - name: a\n        depends: [ x ]\n      - name: b\n        retries: many\n',
      );
      expect(result.workflows).toEqual([]);
      expect(result.errors).toHaveLength(2);
    });

    it('refuses a definition larger than the limit', () => {
      expect(
        loadWorkflows(`# ${'x'.repeat(2000)}\n${ORIGINAL_EXAMPLE}`, { maxBytes: 1000 }).errors[0]?.message,
      ).toBe('the definition is larger than 1000 bytes');
    });

    it('never pollutes prototypes through keys such as __proto__', () => {
      const { errors } = loadWorkflows(
        'workflows:\n  - name: w\n    __proto__: { polluted: true }\n    steps: [ { name: a } ]\n',
      );
      expect(errors.map((error) => error.message)).toEqual([
        'unknown workflow key "__proto__" (known keys: name, description, vhosts, timeout, params, onFailure, maxRunning, steps, tasks, schedules, searchAttributes, notify)',
      ]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });
});
