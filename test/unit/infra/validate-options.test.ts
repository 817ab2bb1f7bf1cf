import { Duration, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { describe, expect, it } from 'vitest';
import { Fanin } from '../../../infra/fanin.ts';
import { minimumReservedConcurrency, validateOptions } from '../../../infra/validate-options.ts';
import { describeTopology } from '../../../shared/topology/topology.ts';
import { construct, DEFINITIONS, ownTable, testApp } from './synth.ts';

/**
 * The construct options checked against the topology (docs/configuration.md, "Handlers" and
 * "Storage and encryption"): reserved concurrency of at least the event sources' maximum, an
 * oldest-message alarm of whole seconds and at least 60, no deletion protection on a table given,
 * and a table given with the topology's keys and index.
 */

const topology = (replyPartitions = 1) => describeTopology({ definitions: DEFINITIONS, replyPartitions });

describe('reserved concurrency', () => {
  it('GIVEN the default consumers WHEN the least reserved concurrency is asked THEN it is fan-out 5, reply 5 a partition, timer 2, control 2, the scheduled handlers 1', () => {
    expect(minimumReservedConcurrency(topology(3))).toEqual({
      fanOut: 5,
      reply: 15,
      timer: 2,
      control: 2,
      sweeper: 1,
      distributor: 1,
    });
  });

  it('GIVEN replyConcurrency per partition WHEN asked THEN the reply minimum is their sum', () => {
    const t = describeTopology({ definitions: DEFINITIONS, replyPartitions: 2, replyConcurrency: [40, 5] });
    expect(minimumReservedConcurrency(t).reply).toBe(45);
  });

  it('GIVEN a value under the minimum, a fraction or an unknown role WHEN validated THEN it throws naming the value; the minimum itself passes', () => {
    expect(() => validateOptions(topology(2), { reservedConcurrency: { reply: 9 } })).toThrow(
      /reservedConcurrency.reply must be an integer of at least 10, .*\(given 9\)/,
    );
    expect(() =>
      validateOptions(topology(2), { reservedConcurrency: { reply: 10, timer: 2 } }),
    ).not.toThrow();
    expect(() => validateOptions(topology(), { reservedConcurrency: { control: 1.5 } })).toThrow(
      /reservedConcurrency.control must be an integer of at least 2, .*\(given 1.5\)/,
    );
    expect(() =>
      validateOptions(topology(), { reservedConcurrency: { replies: 5 } as Record<string, number> }),
    ).toThrow(
      /reservedConcurrency keys must be handler roles \(fanOut, reply, timer, sweeper, control, distributor\) \(given "replies"\)/,
    );
  });
});

describe('the oldest-message alarm', () => {
  it.each([
    [
      Duration.seconds(59),
      /oldestMessageAgeAlarm must be a whole number of seconds, at least 60 \(given 59 seconds\)/,
    ],
    [Duration.millis(90_500), /oldestMessageAgeAlarm must be a whole number of seconds, at least 60 \(given/],
  ])('GIVEN %s WHEN validated THEN it throws naming the value', (age, message) => {
    expect(() => validateOptions(topology(), { oldestMessageAgeAlarm: age })).toThrow(message);
  });

  it('GIVEN 60 s or 15 minutes WHEN validated THEN it is accepted', () => {
    expect(() => validateOptions(topology(), { oldestMessageAgeAlarm: Duration.seconds(60) })).not.toThrow();
    expect(() => validateOptions(topology(), { oldestMessageAgeAlarm: Duration.minutes(15) })).not.toThrow();
  });
});

describe('a table of your own', () => {
  it('GIVEN table and deletionProtection WHEN the construct is created THEN it throws: the protection is set on the table given', () => {
    const stack = new Stack(testApp(), 'Test');
    const table = ownTable(stack, topology());
    expect(
      () => new Fanin(stack, 'Fanin', { definitions: DEFINITIONS, table, deletionProtection: true }),
    ).toThrow(/deletionProtection applies to the table fanin creates; .*\(given both\)/);
  });

  it("GIVEN a table with the topology's keys and index WHEN the construct is created THEN it is accepted", () => {
    const stack = new Stack(testApp(), 'Test');
    const table = ownTable(stack, topology());
    expect(() => new Fanin(stack, 'Fanin', { definitions: DEFINITIONS, table })).not.toThrow();
  });

  it('GIVEN a table with other keys, or without the index WHEN validated THEN it throws naming what it has', () => {
    const stack = new Stack(testApp(), 'Test');
    const wrongKeys = new dynamodb.Table(stack, 'WrongKeys', {
      partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING },
    });
    expect(() => validateOptions(topology(), { table: wrongKeys })).toThrow(
      /table: the table must have the keys partition \/ sort pk \(S\) \/ sk \(S\), .*\(given id \(S\) \/ none\)/,
    );
    const noIndex = new dynamodb.Table(stack, 'NoIndex', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
    });
    expect(() => validateOptions(topology(), { table: noIndex })).toThrow(
      /table: index due must have the keys .*\(given no such index\)/,
    );
  });

  it('GIVEN an imported table WHEN validated THEN its schema, unknown at synth, is not checked', () => {
    const stack = new Stack(testApp(), 'Test');
    const imported = dynamodb.Table.fromTableName(stack, 'Imported', 'someone-elses');
    expect(() => validateOptions(topology(), { table: imported })).not.toThrow();
    expect(construct({ table: imported })).not.toThrow();
  });
});
