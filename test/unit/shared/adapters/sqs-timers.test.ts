import { describe, expect, it } from 'vitest';
import { delaySeconds, leftToTheSweep, SqsTimerScheduler } from '../../../../shared/adapters/sqs-timers.ts';
import type { TimerMessage } from '../../../../shared/ports.ts';
import { T0, type WorldOptions, world } from './support.ts';

/**
 * Timers as SQS delay messages: a timer never fires before its due time (its delay rounded up),
 * one beyond SQS's 15-minute delay is left to the sweep (not sent), batches of ten, and the timers
 * SQS refused named by their position. The module's own fast test over the SQS model.
 */

const MINUTE = 60_000;
const deadline = (aggregateId: string, dueAt: number): TimerMessage => ({
  kind: 'deadline',
  aggregateId,
  dueAt,
});

function setup(intercept?: WorldOptions['intercept']) {
  const w = world(intercept ? { intercept } : {});
  const url = w.storage.queueUrls.timer;
  const scheduler = new SqsTimerScheduler({ sqs: w.clients.sqs, queueUrl: url });
  return { w, url, scheduler };
}

describe('delaySeconds and leftToTheSweep', () => {
  it('rounds a delay up to the second and within SQS’s 0 to 900 seconds', () => {
    // Act / Assess
    expect(delaySeconds(T0 + 1_001, T0)).toBe(2);
    expect(delaySeconds(T0 + 1_000, T0)).toBe(1);
    expect(delaySeconds(T0 - 5_000, T0)).toBe(0);
    expect(delaySeconds(T0 + 20 * MINUTE, T0)).toBe(900);
  });

  it('leaves to the sweep only a timer due more than 15 minutes ahead', () => {
    // Act / Assess
    expect(leftToTheSweep(deadline('a', T0 + 15 * MINUTE), T0)).toBe(false);
    expect(leftToTheSweep(deadline('a', T0 + 15 * MINUTE + 1), T0)).toBe(true);
  });
});

describe('SqsTimerScheduler', () => {
  it('arms a timer as a message delayed until its due time, and sends none beyond the horizon', async () => {
    // Prepare
    const { w, url, scheduler } = setup();

    // Act
    await scheduler.arm(deadline('a-1', T0 + 90_500), T0);
    await scheduler.arm(deadline('a-2', T0 + 16 * MINUTE), T0);

    // Assess
    const messages = w.models.sqs.messages(url);
    expect(messages.map((m) => JSON.parse(m.body))).toEqual([deadline('a-1', T0 + 90_500)]);
    expect(messages[0]?.state).toBe('delayed');
    w.now = T0 + 90_000;
    expect(w.models.sqs.messages(url)[0]?.state).toBe('delayed');
    w.now = T0 + 91_000;
    expect(w.models.sqs.messages(url)[0]?.state).toBe('visible');
  });

  it('arms many in batches of ten, skipping those beyond the horizon', async () => {
    // Prepare
    const { w, url, scheduler } = setup();
    const timers = Array.from({ length: 25 }, (_, i) =>
      deadline(`a-${i}`, T0 + (i % 5 === 0 ? 20 * MINUTE : MINUTE)),
    );

    // Act
    const failed = await scheduler.armAll(timers, T0);

    // Assess
    expect(failed).toEqual([]);
    const batches = w.calls.filter((c) => c.command === 'SendMessageBatchCommand');
    expect(batches.map((c) => c.input.Entries.length)).toEqual([10, 10]);
    expect(w.models.sqs.messages(url)).toHaveLength(20);
  });

  it('names the timers SQS refused by their place in the list given', async () => {
    // Prepare: SQS refuses the second entry of every batch
    const { scheduler } = setup((_s, command, input, call) => {
      if (command !== 'SendMessageBatchCommand') return call();
      return {
        Successful: [],
        Failed: [{ Id: input.Entries[1].Id, Code: 'InternalError', Message: 'x', SenderFault: false }],
      };
    });
    const timers = [
      deadline('far', T0 + 60 * MINUTE),
      ...Array.from({ length: 12 }, (_, i) => deadline(`a-${i}`, T0 + MINUTE)),
    ];

    // Act
    const failed = await scheduler.armAll(timers, T0);

    // Assess: the far timer is not sent, so the batches hold places 1…10 and 11…12
    expect(failed).toEqual([2, 12]);
  });

  it('says its horizon is SQS’s longest delay', () => {
    // Act / Assess
    expect(setup().scheduler.horizonMs).toBe(15 * MINUTE);
  });
});
