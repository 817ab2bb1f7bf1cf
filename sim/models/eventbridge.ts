/**
 * An in-memory, synchronous, deterministic model of EventBridge's PutEvents and CreateEventBus:
 * at most 10 entries of at most 256 KB in all (sized as EventBridge documents: Time 14 bytes,
 * Source, DetailType, Detail and each resource in UTF-8 bytes), each entry accepted or failed on
 * its own (missing fields, malformed detail, unknown bus), and every accepted event kept per bus.
 * Rules are not modelled: the simulation routes events itself.
 */
import { ResourceAlreadyExistsException } from '@aws-sdk/client-eventbridge';
import { sdkError, unmodelled } from './errors.ts';
import { uuid } from './sqs/messages.ts';

/** Options of {@link EventBridgeModel}. */
export interface EventBridgeModelOptions {
  readonly clock: () => number;
  readonly random: () => number;
  /** @default '000000000000' */
  readonly accountId?: string;
  /** @default 'us-east-1' */
  readonly region?: string;
}

/** An event a bus took. */
export interface DeliveredEvent {
  readonly id: string;
  readonly bus: string;
  readonly source: string;
  readonly detailType: string;
  readonly detail: string;
  readonly resources: readonly string[];
  readonly time: number;
}

/** EventBridge's largest PutEvents request, entries together. */
export const MAX_PUT_EVENTS_BYTES = 256 * 1024;

/** True when the EventBridge command changes state. */
export function isEventBridgeWrite(commandName: string): boolean {
  return ['PutEventsCommand', 'CreateEventBusCommand'].includes(commandName);
}

/** The size of an entry as EventBridge computes it. */
export function entrySize(entry: Record<string, unknown>): number {
  let size = entry.Time !== undefined ? 14 : 0;
  for (const field of ['Source', 'DetailType', 'Detail']) {
    if (typeof entry[field] === 'string') size += Buffer.byteLength(entry[field] as string);
  }
  for (const resource of (entry.Resources ?? []) as string[]) size += Buffer.byteLength(resource);
  return size;
}

/** The EventBridge model. */
export class EventBridgeModel {
  private readonly buses = new Map<string, DeliveredEvent[]>([['default', []]]);
  private readonly clock: () => number;
  private readonly random: () => number;
  private readonly accountId: string;
  private readonly region: string;

  public constructor(options: EventBridgeModelOptions) {
    this.clock = options.clock;
    this.random = options.random;
    this.accountId = options.accountId ?? '000000000000';
    this.region = options.region ?? 'us-east-1';
  }

  /** Runs one command with its SDK input. */
  // biome-ignore lint/suspicious/noExplicitAny: commands of every shape pass through here
  public handle(commandName: string, input: any): any {
    const request = (input ?? {}) as Record<string, unknown>;
    const name = commandName.replace(/Command$/, '');
    if (name === 'CreateEventBus') {
      const bus = String(request.Name ?? '');
      if (this.buses.has(bus)) {
        throw sdkError(ResourceAlreadyExistsException, `Event bus ${bus} already exists.`);
      }
      this.buses.set(bus, []);
      return { EventBusArn: this.arnOf(bus) };
    }
    if (name === 'PutEvents') return this.putEvents((request.Entries ?? []) as Record<string, unknown>[]);
    throw unmodelled(
      'eventbridge',
      'UnsupportedOperation',
      `the EventBridge model does not implement ${name}`,
    );
  }

  /** Every event a bus took, in order (copies). */
  public events(bus = 'default'): DeliveredEvent[] {
    return (this.buses.get(bus) ?? []).map((e) => ({ ...e, resources: [...e.resources] }));
  }

  private arnOf(bus: string): string {
    return `arn:aws:events:${this.region}:${this.accountId}:event-bus/${bus}`;
  }

  private putEvents(entries: Record<string, unknown>[]): Record<string, unknown> {
    if (entries.length === 0 || entries.length > 10) {
      throw unmodelled(
        'eventbridge',
        'ValidationException',
        `1 validation error detected: Value '[PutEventsRequestEntry]' at 'entries' failed to satisfy constraint: Member must have length ${entries.length === 0 ? 'greater than or equal to 1' : 'less than or equal to 10'}`,
      );
    }
    const total = entries.reduce((n, e) => n + entrySize(e), 0);
    if (total > MAX_PUT_EVENTS_BYTES) {
      throw unmodelled(
        'eventbridge',
        'ValidationException',
        'Total size of the entries in the request is over the limit.',
      );
    }
    let failed = 0;
    const results = entries.map((entry) => {
      const error = this.refusal(entry);
      if (error) {
        failed += 1;
        return { ErrorCode: error[0], ErrorMessage: error[1] };
      }
      const bus = this.busName(entry.EventBusName);
      const event: DeliveredEvent = {
        id: uuid(this.random),
        bus,
        source: String(entry.Source),
        detailType: String(entry.DetailType),
        detail: String(entry.Detail),
        resources: [...((entry.Resources ?? []) as string[])],
        time: entry.Time instanceof Date ? entry.Time.getTime() : this.clock(),
      };
      this.buses.get(bus)?.push(event);
      return { EventId: event.id };
    });
    return { FailedEntryCount: failed, Entries: results };
  }

  private busName(name: unknown): string {
    const text = typeof name === 'string' && name.length > 0 ? name : 'default';
    return text.startsWith('arn:') ? text.slice(text.lastIndexOf('/') + 1) : text;
  }

  private refusal(entry: Record<string, unknown>): [string, string] | undefined {
    for (const field of ['Source', 'DetailType', 'Detail']) {
      if (typeof entry[field] !== 'string' || (entry[field] as string).length === 0) {
        return [
          'InvalidArgument',
          `Parameter ${field} is not valid. Reason: ${field} is a required argument.`,
        ];
      }
    }
    try {
      const detail: unknown = JSON.parse(entry.Detail as string);
      if (detail === null || typeof detail !== 'object' || Array.isArray(detail))
        throw new Error('not an object');
    } catch {
      return ['MalformedDetail', 'Detail is malformed.'];
    }
    const bus = this.busName(entry.EventBusName);
    if (!this.buses.has(bus)) return ['NotAuthorized', `Event bus ${bus} does not exist.`];
    return undefined;
  }
}
