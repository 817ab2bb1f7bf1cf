import { access, readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { DefinitionInput } from '../shared/engine/definition.ts';
import { FaninError } from '../shared/errors.ts';
import {
  INDEPENDENT_CHOICES,
  type PartitioningOptions,
  TOPOLOGY_DEFAULTS,
  TOPOLOGY_OPTION_SHAPE,
  type TopologyOptions,
  topologyOptionsOf,
} from '../shared/topology/options.ts';

/**
 * The local runtime's configuration file (`fanin.config.ts`, `.js` or `.json` at the top of the
 * project): the topology options the CDK construct takes too (shared/topology/options.ts, the
 * handlers' timeout in seconds), so `describeTopology` builds both from one description, plus
 * what only a local run needs (responder queues of the demos, the dashboard).
 * `npm start -- --prefix` overrides `prefix`.
 */
export interface LocalConfig extends Omit<TopologyOptions, 'definitions'> {
  /**
   * The aggregation definitions, or a function of the prefix returning them (fan-out targets are
   * queue names, which carry the prefix). In a `.json` file, `{prefix}` inside any string of a
   * definition is replaced by the prefix.
   */
  readonly definitions: readonly DefinitionInput[] | ((prefix: string) => readonly DefinitionInput[]);
  /**
   * Queues of responders (e.g. the demo's banks), created as `<prefix>-<name>` with a DLQ, because
   * in AWS they belong to someone else but locally nobody else creates them. @default []
   */
  readonly responderQueues?: readonly string[];
  /** Provision the claim-check bucket (payloads above the threshold go through S3). @default true */
  readonly claimCheck?: boolean;
  /** Payload size above which the claim check is used, bytes. @default 262,144 (SQS's limit) */
  readonly claimCheckThresholdBytes?: number;
  /** Port of the dashboard on 127.0.0.1; 0 picks a free one. @default 4780 */
  readonly dashboardPort?: number;
  /**
   * How often the sweeper runs locally, seconds (EventBridge runs it every minute in AWS; timers
   * do the precise work, the sweeper is the safety net). @default the topology's (60)
   */
  readonly sweepIntervalSeconds?: number;
}

/**
 * A configuration with the definitions resolved for the prefix and every default applied that
 * depends on no other option; the per-partition options stay as given (one value, or one per
 * partition), or absent, for describeTopology to validate and default.
 */
export interface ResolvedLocalConfig
  extends Omit<TopologyOptions, 'definitions' | 'partitioning' | IndependentChoice>,
    Required<Pick<TopologyOptions, IndependentChoice>> {
  readonly file: string;
  readonly partitioning: PartitioningOptions;
  readonly definitions: readonly DefinitionInput[];
  readonly responderQueues: readonly string[];
  readonly claimCheck: boolean;
  readonly claimCheckThresholdBytes?: number;
  readonly dashboardPort: number;
  readonly sweepIntervalSeconds?: number;
}

type IndependentChoice = (typeof INDEPENDENT_CHOICES)[number];

/** The default dashboard port (0 would move it on every start, which is awkward to bookmark). */
export const DEFAULT_DASHBOARD_PORT = 4780;

/** Files looked for, in order, when no `--config` is given. */
export const CONFIG_FILES = ['fanin.config.ts', 'fanin.config.js', 'fanin.config.mjs', 'fanin.config.json'];

/**
 * Identity function that gives a configuration file its type.
 *
 * @example
 * export default defineConfig({ replyPartitions: 2, definitions: (prefix) => [loanBroker(prefix)] });
 */
export function defineConfig(config: LocalConfig): LocalConfig {
  return config;
}

const positiveInt = z.int().min(1);
/** The topology options (options.ts), each optional, and what only a local run takes. */
const ConfigSchema = z.strictObject({
  ...z.object(TOPOLOGY_OPTION_SHAPE).partial().shape,
  definitions: z.union([z.array(z.unknown()), z.function()]),
  responderQueues: z.array(z.string().regex(/^[A-Za-z0-9_-]{1,60}$/)).optional(),
  claimCheck: z.boolean().optional(),
  claimCheckThresholdBytes: positiveInt.optional(),
  dashboardPort: z.int().min(0).max(65_535).optional(),
  sweepIntervalSeconds: positiveInt.optional(),
});

/** A configuration file that cannot be used; the message names the file and the field. */
export class ConfigFileError extends FaninError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, { ...options, retryable: false });
    this.name = 'ConfigFileError';
  }
}

/**
 * Finds the configuration file: `explicit` when given, else the first of {@link CONFIG_FILES} in `cwd`.
 * @throws ConfigFileError when there is none
 */
export async function findConfigFile(cwd: string, explicit?: string): Promise<string> {
  const candidates = explicit ? [resolve(cwd, explicit)] : CONFIG_FILES.map((name) => resolve(cwd, name));
  for (const candidate of candidates) {
    try {
      await access(candidate);
      return candidate;
    } catch {
      // not this one
    }
  }
  throw new ConfigFileError(
    explicit
      ? `configuration file ${explicit} not found`
      : `no configuration file in ${cwd} (looked for ${CONFIG_FILES.join(', ')}); pass --config <file>`,
  );
}

/**
 * Loads and checks a configuration file. A `.ts`/`.js` file's default export (or its `config`
 * export) is the configuration; a `.json` file is one object.
 *
 * @param prefixOverride the `--prefix` of the command line, which wins over the file's own
 */
export async function loadLocalConfig(file: string, prefixOverride?: string): Promise<ResolvedLocalConfig> {
  let raw: unknown;
  const json = extname(file) === '.json';
  try {
    if (json) {
      raw = JSON.parse(await readFile(file, 'utf8'));
    } else {
      const module = (await import(pathToFileURL(file).href)) as { default?: unknown; config?: unknown };
      raw = module.default ?? module.config;
    }
  } catch (error) {
    throw new ConfigFileError(`cannot load ${file}: ${(error as Error).message}`, { cause: error });
  }
  return resolveLocalConfig(raw, file, prefixOverride, json);
}

/**
 * Checks a configuration already loaded (a file's default export, or an object) and resolves it
 * as {@link loadLocalConfig} does; `file` only names it in messages and the result.
 * @param json whether it came from a `.json` file (`{prefix}` is then substituted)
 */
export function resolveLocalConfig(
  raw: unknown,
  file: string,
  prefixOverride?: string,
  json = false,
): ResolvedLocalConfig {
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigFileError(`${file}: ${issue?.path.join('.') || '(config)'}: ${issue?.message}`);
  }
  const config = parsed.data;
  const topology = topologyOptionsOf(config);
  const prefix = prefixOverride ?? topology.prefix ?? TOPOLOGY_DEFAULTS.prefix;
  const source = config.definitions as LocalConfig['definitions'];
  let definitions = typeof source === 'function' ? source(prefix) : source;
  if (json) definitions = substitutePrefix(definitions, prefix) as DefinitionInput[];
  const independent = Object.fromEntries(
    INDEPENDENT_CHOICES.map((key) => [key, topology[key] ?? TOPOLOGY_DEFAULTS[key]]),
  ) as Required<Pick<TopologyOptions, IndependentChoice>>;
  return {
    file,
    ...topology,
    ...independent,
    prefix,
    partitioning: topology.partitioning ?? {},
    definitions,
    responderQueues: config.responderQueues ?? [],
    claimCheck: config.claimCheck ?? true,
    ...(config.claimCheckThresholdBytes !== undefined
      ? { claimCheckThresholdBytes: config.claimCheckThresholdBytes }
      : {}),
    dashboardPort: config.dashboardPort ?? DEFAULT_DASHBOARD_PORT,
    ...(config.sweepIntervalSeconds !== undefined
      ? { sweepIntervalSeconds: config.sweepIntervalSeconds }
      : {}),
  };
}

/** Replaces `{prefix}` in every string of a JSON value. */
function substitutePrefix(value: unknown, prefix: string): unknown {
  if (typeof value === 'string') return value.replaceAll('{prefix}', prefix);
  if (Array.isArray(value)) return value.map((item) => substitutePrefix(item, prefix));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitutePrefix(v, prefix)]));
  }
  return value;
}
