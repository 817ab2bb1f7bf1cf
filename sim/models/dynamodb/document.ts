/**
 * The document client's translation, done as lib-dynamodb does it: the same fields of each
 * command (the command class's own `inputKeyNodes` / `outputKeyNodes`) marshalled with fanin's
 * `DOCUMENT_TRANSLATE_CONFIG` (undefined values dropped, class instances refused) and unmarshalled
 * with its defaults. So an input the real document client would refuse (a class instance, a
 * `NaN`) is refused here with the same error, before the model sees it; and, as with the real
 * client, the `Item` of a ConditionalCheckFailedException and of a cancellation reason stays in
 * wire form.
 */

import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import * as lib from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { DOCUMENT_TRANSLATE_CONFIG } from '../../../shared/aws/clients.ts';

type KeyNodes = Record<string, unknown> | null | undefined;

const NEXT_LEVEL = '*';

function processObject(value: unknown, process: (v: unknown) => unknown, nodes: KeyNodes): unknown {
  if (value === undefined) return undefined;
  if (nodes == null) return process(value);
  const keys = Object.keys(nodes);
  if (keys.length === 1 && keys[0] === NEXT_LEVEL) {
    const out: Record<string, unknown> | unknown[] = Array.isArray(value) ? [] : {};
    for (const [k, v] of Object.entries(value as object)) {
      (out as Record<string, unknown>)[k] = processObject(v, process, nodes[NEXT_LEVEL] as KeyNodes);
    }
    return out;
  }
  if (keys.length === 0) {
    if (Array.isArray(value)) return value.map((v) => processObject(v, process, null));
    return Object.fromEntries(
      Object.entries(value as object).map(([k, v]) => [k, processObject(v, process, null)]),
    );
  }
  return processKeys(value as Record<string, unknown>, process, nodes);
}

function processKeys(
  value: Record<string, unknown>,
  process: (v: unknown) => unknown,
  nodes: Record<string, unknown>,
): unknown {
  const out: Record<string, unknown> | unknown[] = Array.isArray(value) ? [...value] : { ...value };
  for (const [key, child] of Object.entries(nodes)) {
    const processed = processObject(value[key], process, child as KeyNodes);
    if (processed !== undefined) (out as Record<string, unknown>)[key] = processed;
  }
  return out;
}

// biome-ignore lint/suspicious/noExplicitAny: the document commands' key nodes are not in their types
type DocumentCommand = new (input: any) => { inputKeyNodes: KeyNodes; outputKeyNodes: KeyNodes };

/** The low-level operation behind each document command. */
export const DOCUMENT_COMMANDS: Readonly<Record<string, string>> = {
  PutCommand: 'PutItem',
  GetCommand: 'GetItem',
  UpdateCommand: 'UpdateItem',
  DeleteCommand: 'DeleteItem',
  QueryCommand: 'Query',
  ScanCommand: 'Scan',
  BatchGetCommand: 'BatchGetItem',
  BatchWriteCommand: 'BatchWriteItem',
  TransactWriteCommand: 'TransactWriteItems',
  TransactGetCommand: 'TransactGetItems',
};

const NODES = new Map<string, { input: KeyNodes; output: KeyNodes }>();

function nodesOf(commandName: string): { input: KeyNodes; output: KeyNodes } {
  let nodes = NODES.get(commandName);
  if (!nodes) {
    const Command = (lib as unknown as Record<string, DocumentCommand>)[commandName];
    if (!Command) throw new Error(`no document command ${commandName}`);
    // A command instance is costly (its middleware stack): its key nodes are read once.
    const command = new Command({});
    nodes = { input: command.inputKeyNodes, output: command.outputKeyNodes };
    NODES.set(commandName, nodes);
  }
  return nodes;
}

/** A document command's input in wire form, as the document client sends it. */
export function marshallInput(commandName: string, input: Record<string, unknown>): Record<string, unknown> {
  const options = { ...DOCUMENT_TRANSLATE_CONFIG.marshallOptions, convertTopLevelContainer: true };
  return processKeys(
    input,
    (v) => marshall(v as Record<string, unknown>, options),
    nodesOf(commandName).input as Record<string, unknown>,
  ) as Record<string, unknown>;
}

/** A low-level output in the document client's native form. */
export function unmarshallOutput(
  commandName: string,
  output: Record<string, unknown>,
): Record<string, unknown> {
  const options = { ...DOCUMENT_TRANSLATE_CONFIG.unmarshallOptions, convertWithoutMapWrapper: true };
  return processKeys(
    output,
    (v) => unmarshall(v as Record<string, AttributeValue>, options),
    nodesOf(commandName).output as Record<string, unknown>,
  ) as Record<string, unknown>;
}

/** Items in wire form to the document client's native form. */
export function toNative(item: Record<string, unknown>): Record<string, unknown> {
  return unmarshall(item as Record<string, AttributeValue>, DOCUMENT_TRANSLATE_CONFIG.unmarshallOptions);
}
