import { describe, expect, it } from 'vitest';
import { billedReadUnits } from '../../bench/aws-meter.js';

describe('the cost model’s read units', () => {
  it('bills a Query or Scan that finds nothing as AWS does, where DynamoDB Local reports 0', () => {
    expect(billedReadUnits('Query', true, 0)).toBe(1);
    expect(billedReadUnits('Query', false, 0)).toBe(0.5);
    expect(billedReadUnits('Scan', false, 0)).toBe(0.5);
  });

  it('keeps what DynamoDB Local reports for a read that found something, and for other reads', () => {
    expect(billedReadUnits('Query', true, 3)).toBe(3);
    expect(billedReadUnits('GetItem', true, 0)).toBe(0);
    expect(billedReadUnits('BatchGetItem', false, 2.5)).toBe(2.5);
  });
});
