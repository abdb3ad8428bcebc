import { describe, expect, it } from 'vitest';
import { gsi } from '../../../../functions/adapters/dynamodb/items.js';
import { streamHeadOf } from '../../../../functions/adapters/dynamodb/stream-heads.js';
import { jobEventsOf } from '../../../../functions/aws/job-events.js';

/** A head whose JSON is in chunk items (`ck`/`cn`): what the stream's record carries of it. */
function chunkedHead(
  status: string,
  listed: string | undefined,
  extra: Record<string, { S?: string; N?: string }> = {},
) {
  return {
    pk: { S: 'JOB#job-1' },
    sk: { S: 'J' },
    rev: { N: '7' },
    st: { S: status },
    wf: { S: 'team-a/big' },
    ck: { S: 'token' },
    cn: { N: '2' },
    ...(listed ? { gsi1pk: { S: gsi.listing('team-a/big', listed, 3) } } : {}),
    ...extra,
  };
}

describe('streamHeadOf: a head without its JSON (chunked)', () => {
  it("reads a top-level job's listed status from its listing key, a child's from its stored status", () => {
    expect(streamHeadOf(chunkedHead('running', 'waiting'))).toMatchObject({
      jobId: 'job-1',
      namespace: 'team-a',
      workflow: 'big',
      status: 'running',
      listedStatus: 'waiting',
      rev: 7,
    });
    expect(streamHeadOf(chunkedHead('running', undefined, { par: { S: 'parent-1' } }))).toMatchObject({
      listedStatus: 'running',
      parentId: 'parent-1',
    });
    expect(streamHeadOf(chunkedHead('waiting', undefined))?.listedStatus).toBe('pending');
  });

  it('a status change of a chunked job is still reported, with what its attributes tell', () => {
    const events = jobEventsOf(
      {
        eventName: 'MODIFY',
        dynamodb: {
          OldImage: chunkedHead('running', 'running'),
          NewImage: chunkedHead('running', 'waiting'),
        },
      },
      'Switchyard',
    );
    expect(events.map((event) => [event.detailType, event.detail])).toEqual([
      [
        'Switchyard Job Status Change',
        expect.objectContaining({ previousStatus: 'running', status: 'waiting', rootId: null, error: null }),
      ],
    ]);
  });
});
