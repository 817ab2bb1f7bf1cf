import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The longest prefix {@link uniquePrefix} returns. S3 bucket names (3–63 characters) are the
 * tightest limit of the three services, so this leaves room for a readable suffix.
 */
export const MAX_PREFIX_LENGTH = 32;

/**
 * A prefix for the resources of one test file that no other file, worker or run shares, so
 * files can run in parallel against the same emulators or LocalStack. It is lower case letters,
 * digits and hyphens only, which every SQS queue, DynamoDB table and S3 bucket name accepts.
 *
 * @param source `import.meta.url` of the test file, or any label
 * @example
 * const prefix = uniquePrefix(import.meta.url); // e.g. 'it-harness-m3x9q2-4f1a9c'
 */
export function uniquePrefix(source: string): string {
  const label = source.startsWith('file:') ? basename(fileURLToPath(source)) : source;
  const slug = label
    .replace(/\.(test|spec)\.[cm]?[jt]s$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 14)
    .replace(/-+$/, '');
  // The time part lets a janitor on a long-lived LocalStack spot leftovers of old runs.
  const unique = `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  return `it-${slug || 'x'}-${unique}`.slice(0, MAX_PREFIX_LENGTH);
}

/** The kinds of resource whose names {@link resourceName} checks. */
export type ResourceKind = 'queue' | 'fifo-queue' | 'table' | 'bucket';

const NAME_RULES: Record<ResourceKind, { pattern: RegExp; rule: string }> = {
  queue: { pattern: /^[A-Za-z0-9_-]{1,80}$/, rule: '1-80 letters, digits, - or _' },
  'fifo-queue': { pattern: /^[A-Za-z0-9_-]{1,75}\.fifo$/, rule: '1-75 letters, digits, - or _ then .fifo' },
  table: { pattern: /^[A-Za-z0-9_.-]{3,255}$/, rule: '3-255 letters, digits, _ . or -' },
  bucket: { pattern: /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/, rule: '3-63 lower case letters, digits or -' },
};

/**
 * `<prefix>-<suffix>` (plus `.fifo` for a FIFO queue), checked against the naming rules of the
 * resource kind so a test fails with a clear message rather than an emulator-specific error.
 *
 * @throws Error when the name breaks the rules of `kind`
 */
export function resourceName(prefix: string, suffix: string, kind: ResourceKind): string {
  const name = `${prefix}-${suffix}${kind === 'fifo-queue' ? '.fifo' : ''}`;
  const { pattern, rule } = NAME_RULES[kind];
  if (!pattern.test(name)) throw new Error(`${kind} name must be ${rule} (given ${name})`);
  return name;
}
