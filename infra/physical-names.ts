import { Annotations, Stack, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

/**
 * fanin names its queues, table, alarms, dashboard and output bus after its prefix (`<prefix>-*`):
 * the CLI (`fanin --stack <prefix>`), the example recipients and the IAM grants on other teams'
 * queues find them by name, and a deployed stack keeps them (a changed name replaces a queue or
 * the table: its messages or state are lost). Two instances of one prefix in one account and
 * region would fail at deploy, the second finding the first's names taken; within one app this
 * says so at synth. Account and region are compared when both stacks know them; an
 * environment-agnostic stack may be deployed anywhere, so there it is a warning.
 */

/** The instances of the app seen so far, by prefix: their paths and stacks. */
const seen = new WeakMap<Construct, Map<string, { path: string; stack: Stack }[]>>();

/** Who holds a prefix in the app of `scope` already, or a warning when it may; then records it. */
export function claimPrefix(scope: Construct, prefix: string): void {
  const root = scope.node.root;
  const byPrefix = seen.get(root) ?? new Map<string, { path: string; stack: Stack }[]>();
  seen.set(root, byPrefix);
  const stack = Stack.of(scope);
  const others = byPrefix.get(prefix) ?? [];
  for (const other of others) {
    const same = other.stack === stack ? true : sameEnvironment(stack, other.stack);
    const message = `fanin instance ${scope.node.path} has prefix "${prefix}", as ${other.path} has: its queues, table, alarms and dashboard would have the same names (${prefix}-*)`;
    if (same === true) {
      throw new Error(
        `${message} in the same account and region, and the second deployment would fail. Give each instance its own prefix (FaninStack: a stack name of its own, or the prefix prop; docs/configuration.md, "Names and outputs")`,
      );
    }
    if (same === undefined) {
      Annotations.of(scope).addWarningV2(
        'fanin:samePrefix',
        `${message}; deployed to one account and region, the second would fail. Give each instance its own prefix (docs/configuration.md, "Names and outputs")`,
      );
    }
  }
  byPrefix.set(prefix, [...others, { path: scope.node.path, stack }]);
}

/** True when both stacks name one account and region, false when they differ, undefined when unknown. */
function sameEnvironment(a: Stack, b: Stack): boolean | undefined {
  const known = (value: string) => !Token.isUnresolved(value);
  const parts = [
    [a.account, b.account],
    [a.region, b.region],
  ] as const;
  if (parts.some(([x, y]) => known(x) && known(y) && x !== y)) return false;
  if (parts.every(([x, y]) => known(x) && known(y))) return true;
  return undefined;
}
