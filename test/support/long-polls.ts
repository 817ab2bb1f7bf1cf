import { ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';

/**
 * `sqs`, except that a long poll (`WaitTimeSeconds` above 0) is sent as a short poll: it comes
 * back at once with what is visible instead of waiting out its seconds when nothing is.
 *
 * A long poll of the emulator returns as soon as a message is visible, and a short poll of it
 * returns every visible message (it has no servers to sample, as SQS has), so the two answer
 * alike unless a message becomes visible during the wait. Give it only to code whose test
 * sends nothing while that code runs and leaves nothing in flight that could come back during
 * it, such as a healthy distributor's cycles or a reply drain between the test's steps: every
 * move that empties the backlog ends with `emptyReceives` long polls that find nothing (two
 * seconds of waiting per cycle at the distributor's defaults, the least it accepts), and those
 * come back at once. A scenario in which a message may come back during a wait (a move whose
 * delete failed, with a visibility timeout of a second) keeps its long polls. The call count is
 * unchanged: each receive is still one call, recorded and open to failpoints.
 */
export function idleLongPollsAtOnce(sqs: SQSClient): SQSClient {
  return new Proxy(sqs, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'send' || typeof value !== 'function') return value;
      return (command: unknown, ...rest: unknown[]) => {
        const shortened =
          command instanceof ReceiveMessageCommand && (command.input.WaitTimeSeconds ?? 0) > 0
            ? new ReceiveMessageCommand({ ...command.input, WaitTimeSeconds: 0 })
            : command;
        return (value as (...a: unknown[]) => unknown).apply(target, [shortened, ...rest]);
      };
    },
  });
}
