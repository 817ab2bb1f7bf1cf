import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { DefinitionInput } from '../shared/engine/definition.ts';
import { Fanin, type FaninProps } from './fanin.ts';
import { FaninQueue } from './fanin-queue.ts';

/** The example banks of the loan broker: queues a responder reads quote requests from. */
export const BANKS = ['bank-1', 'bank-2', 'bank-3', 'bank-4', 'bank-5'] as const;

/**
 * The example definitions. `loan-broker` is the Scatter-Gather of the EIP book: a recipient list to
 * five banks, the lowest rate wins, and a rate at or under 3.5% completes at once (time-out with
 * override); otherwise the best rate so far is taken after 30 seconds. `order-approval` completes
 * only on an external event (an `OrderApproved` event on the default bus).
 */
export function exampleDefinitions(prefix: string): DefinitionInput[] {
  return [
    {
      name: 'loan-broker',
      description: 'Best loan rate from five banks; a rate of 3.5% or less completes at once',
      fanOut: { type: 'recipient-list', recipients: BANKS.map((bank) => `${prefix}-${bank}`) },
      completion: {
        strategy: 'override',
        score: { source: 'path', path: '$.rate' },
        threshold: 3.5,
        direction: 'below',
      },
      aggregation: { algorithm: 'best', criteria: [{ path: '$.rate', order: 'min' }] },
      timeoutSeconds: 30,
    },
    {
      name: 'order-approval',
      description: 'Collects replies until an approval event arrives',
      completion: { strategy: 'external' },
      timeoutSeconds: 24 * 3600,
      externalEventPattern: { source: ['example.orders'], 'detail-type': ['OrderApproved'] },
    },
  ];
}

/** A prefix fanin accepts: a lower-case letter, then up to 30 lower-case letters, digits or dashes. */
const PREFIX = /^[a-z][a-z0-9-]{0,30}$/;

/**
 * The prefix of a stack without one: its name in lower case (`Fanin` gives `fanin`, the prefix the
 * example stack always had, so a deployed one keeps its names; `FaninDev` gives `fanindev`).
 * CloudFormation keeps stack names unique in an account and region, so their prefixes are too.
 * @throws Error when the name gives no prefix (longer than 31 characters): pass `prefix`
 */
export function prefixOfStackName(stackName: string): string {
  const prefix = stackName.toLowerCase();
  if (PREFIX.test(prefix)) return prefix;
  throw new Error(
    `stack name "${stackName}" gives no fanin prefix (in lower case, a letter then up to 30 letters, digits or dashes): pass the prefix prop (-c fanin:prefix=<prefix>)`,
  );
}

/** Properties of {@link FaninStack}. */
export interface FaninStackProps extends StackProps {
  /**
   * Prefix of every resource name (`<prefix>-ingress`, `<prefix>-state`, ...) and what
   * `fanin --stack` takes. Never change it on a deployed stack: every queue and the table would be
   * replaced, their messages and state lost (docs/configuration.md, "Names and outputs").
   * @default - the stack's name in lower case (`fanin` for the stack `Fanin`)
   */
  readonly prefix?: string;
  /** Empty and delete the table, bucket and logs on `cdk destroy` (a demo, not production). @default false */
  readonly destroyOnRemoval?: boolean;
  /** Overrides of the construct's props. @default - the example definitions and the construct's defaults */
  readonly fanin?: Partial<FaninProps>;
}

/**
 * An example deployment of fanin: the construct with the loan-broker definitions, and the five bank
 * queues the broker fans out to (in a real deployment those are other teams' queues).
 */
export class FaninStack extends Stack {
  /** The fanin instance. */
  public readonly fanin: Fanin;
  /** The example bank queues. */
  public readonly banks: readonly FaninQueue[];

  public constructor(scope: Construct, id: string, props: FaninStackProps = {}) {
    super(scope, id, props);
    const prefix = props.prefix ?? prefixOfStackName(this.stackName);
    this.banks = BANKS.map(
      (bank) =>
        new FaninQueue(this, `Bank-${bank}`, {
          spec: {
            name: `${prefix}-${bank}`,
            dlqName: `${prefix}-${bank}-dlq`,
            fifo: false,
            visibilityTimeoutSeconds: 30,
            maxReceiveCount: 5,
          },
          // Example responders' queues: their owners alarm on them, not fanin.
          dlqAlarm: false,
        }),
    );
    const destroy = props.destroyOnRemoval ?? false;
    this.fanin = new Fanin(this, 'Fanin', {
      prefix,
      definitions: exampleDefinitions(prefix),
      ...(destroy ? { removalPolicy: RemovalPolicy.DESTROY, autoDeleteObjects: true } : {}),
      ...props.fanin,
    });
    // CloudFormation names the bucket; the CLI needs it for large payloads (`--bucket`). (The
    // construct's own outputs name it too, as `FaninPayloadBucketName`; this key is kept as it was.)
    new CfnOutput(this, 'PayloadBucket', {
      description: `The claim-check bucket: npx fanin --stack ${prefix} --bucket <this> ...`,
      value: this.fanin.bucket.bucketName,
    });
  }
}
