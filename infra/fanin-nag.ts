import { Annotations, Stack, Token, Validations } from 'aws-cdk-lib';
import type { Definition } from '../shared/engine/definition.ts';
import { TIMEOUT_WITHIN_DRAIN_INTERVAL, timeoutsWithinDrains } from '../shared/topology/drain-warnings.ts';
import { type FaninResources, HANDLER_ACCESS, PayloadPrefix } from './fanin-access.ts';
import type { FaninFunction } from './fanin-function.ts';
import type { FaninFunctions } from './fanin-props.ts';

/**
 * The cdk-nag findings a fanin instance's grants raise by design, acknowledged on each role with
 * the reason (`AwsSolutions-IAM5`: wildcards of an object prefix, of a user's target queue
 * pattern, of X-Ray), and the synth warning of a recipient list nothing lets the fan-out send to.
 * The key's own (`kms:GenerateDataKey*`, `kms:ReEncrypt*`) sit with its grant in
 * infra/fanin-access.ts. cdk-nag runs on the app (infra/app.ts); test/unit/infra/fanin-nag.test.ts
 * checks no finding is left.
 */

/**
 * The wildcards that cdk-nag reports and that are intended: an object grant covers the objects
 * under a prefix of the bucket (`<bucket>/state/*`), and an extra target ARN with `*` or `?` is the
 * user's own choice.
 */
export function acknowledgeGrantWildcards(
  fanin: FaninResources,
  extraTargetQueueArns: readonly string[],
): void {
  const stack = Stack.of(fanin);
  // The resource as cdk-nag writes it: `<Payloads….Arn>/state/*` for the bucket fanin creates,
  // the user's bucket's ARN otherwise.
  const objects = (prefix: string): string =>
    nagResource(stack.resolve(fanin.bucket.arnForObjects(`${prefix}*`)));
  for (const [name, fn] of Object.entries(fanin.functions) as [keyof FaninFunctions, FaninFunction][]) {
    const access = HANDLER_ACCESS[name];
    const prefixes = [
      ...(access.payloads ? [PayloadPrefix.INCOMING, PayloadPrefix.STATE, PayloadPrefix.OUTPUTS] : []),
      ...(access.sendsRequests ? [PayloadPrefix.REQUESTS] : []),
    ];
    for (const prefix of prefixes) {
      Validations.of(fn.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${objects(prefix)}]`,
        reason:
          prefix === PayloadPrefix.INCOMING
            ? 'Producers name the claim-check objects they write under incoming/; s3:GetObject only, on that prefix of the payload bucket.'
            : `Object keys under ${prefix} are generated per message; s3:GetObject and/or s3:PutObject only, on that prefix of the payload bucket.`,
      });
    }
  }
  for (const arn of extraTargetQueueArns) {
    if (Token.isUnresolved(arn) || !/[*?]/.test(arn)) continue;
    Validations.of(fanin.functions.fanOut.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${arn}]`,
      reason:
        'A wildcard target queue given in extraTargetQueueArns: the recipients of a recipient list come from the request, and this pattern is what the deployment allows them to be.',
    });
  }
}

/**
 * Warns when a recipient list takes its recipients from the request but no `extraTargetQueueArns`
 * let the fan-out send to them.
 */
export function warnOfUngrantedRecipients(
  fanin: FaninResources,
  definitions: readonly Definition[],
  extraTargetQueueArns: readonly string[],
): void {
  const openLists = definitions
    .filter((d) => d.fanOut?.type === 'recipient-list' && !d.fanOut.recipients)
    .map((d) => d.name);
  if (openLists.length > 0 && extraTargetQueueArns.length === 0) {
    Annotations.of(fanin).addWarningV2(
      'fanin:recipientsUnknownAtSynth',
      `definitions ${JSON.stringify(openLists)} take their recipients from the request, but no extraTargetQueueArns allow the fan-out to send to them`,
    );
  }
}

/**
 * A definition whose deadline (or inactivity timeout, or the shortest deadline a request may ask
 * for) is shorter than twice the longest reply drain interval: warned at synth, from the check the
 * local runtime also warns from at start ({@link timeoutsWithinDrains}).
 */
export function warnOfTimeoutsWithinDrains(
  fanin: FaninResources,
  definitions: readonly Definition[],
  drainIntervals: readonly number[],
): void {
  const found = timeoutsWithinDrains(definitions, drainIntervals);
  if (found) Annotations.of(fanin).addWarningV2(TIMEOUT_WITHIN_DRAIN_INTERVAL, found.message);
}

/**
 * Lambda active tracing adds `xray:PutTraceSegments` and `xray:PutTelemetryRecords` on `*` to
 * each role: X-Ray has no resource-level permissions for them, so the wildcard is the only form.
 */
export function acknowledgeTracing(functions: readonly FaninFunction[]): void {
  for (const fn of functions) {
    Validations.of(fn.role!).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Lambda active tracing (the tracing prop): xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions, so their resource is *.',
    });
  }
}

/** A resolved CloudFormation value as cdk-nag names it in a finding: `<Id>`, `<Id.Attr>`, joins concatenated. */
function nagResource(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (v && 'Ref' in v) return `<${String(v.Ref)}>`;
  if (v && 'Fn::GetAtt' in v) return `<${(v['Fn::GetAtt'] as string[]).join('.')}>`;
  if (v && 'Fn::Join' in v) {
    const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map(nagResource).join(separator);
  }
  return JSON.stringify(value);
}
