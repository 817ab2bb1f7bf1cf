/**
 * Applies an update expression's actions to an item as UpdateItem does: every SET value is
 * computed from the item as it was before the update, then the actions apply in order; a key
 * attribute cannot be updated; ADD works on numbers and sets, DELETE on sets.
 */
import { validation } from '../errors.ts';
import { evaluateOperand } from './evaluate.ts';
import type { Path, UpdateAction } from './expressions.ts';
import { type AV, addNumbers, clone, equalValues, type Item, makeSet, setMembers, typeOf } from './values.ts';

const KIND = 'UpdateExpression';

/** The item after `actions`, and the paths they touched (for ReturnValues UPDATED_*). */
export function applyUpdate(
  before: Item,
  actions: readonly UpdateAction[],
  keyNames: readonly string[],
): { item: Item; updated: Path[] } {
  for (const action of actions) {
    const first = action.path[0];
    if (first && 'name' in first && keyNames.includes(first.name)) {
      throw validation(
        `One or more parameter values were invalid: Cannot update attribute ${first.name}. This attribute is part of the key`,
      );
    }
  }
  const values = actions.map((action) =>
    action.value ? evaluateOperand(action.value, before, KIND) : undefined,
  );
  const item = clone(before);
  actions.forEach((action, i) => {
    const value = values[i];
    if (action.clause === 'SET') {
      if (value === undefined) {
        throw validation('The provided expression refers to an attribute that does not exist in the item');
      }
      setPath(item, action.path, clone(value));
    } else if (action.clause === 'REMOVE') removePath(item, action.path);
    else if (action.clause === 'ADD') add(item, action.path, value as AV);
    else remove(item, action.path, value as AV);
  });
  return { item, updated: actions.map((a) => a.path) };
}

function parentOf(item: Item, path: Path, create: boolean): AV | undefined {
  let current: AV = { M: item };
  for (const segment of path.slice(0, -1)) {
    const next: AV | undefined = 'name' in segment ? current.M?.[segment.name] : current.L?.[segment.index];
    if (next === undefined) {
      if (!create) return undefined;
      throw validation('The document path provided in the update expression is invalid for update');
    }
    current = next;
  }
  return current;
}

function setPath(item: Item, path: Path, value: AV): void {
  const parent = parentOf(item, path, true) as AV;
  const last = path[path.length - 1];
  if (last === undefined) return;
  if ('name' in last) {
    if (parent.M === undefined) {
      throw validation('The document path provided in the update expression is invalid for update');
    }
    parent.M[last.name] = value;
  } else {
    if (parent.L === undefined) {
      throw validation('The document path provided in the update expression is invalid for update');
    }
    if (last.index >= parent.L.length) parent.L.push(value);
    else parent.L[last.index] = value;
  }
}

function removePath(item: Item, path: Path): void {
  const parent = parentOf(item, path, false);
  const last = path[path.length - 1];
  if (parent === undefined || last === undefined) return;
  if ('name' in last) {
    if (parent.M) delete parent.M[last.name];
  } else if (parent.L && last.index < parent.L.length) parent.L.splice(last.index, 1);
}

function operandType(value: AV): string {
  return (
    { S: 'STRING', N: 'NUMBER', B: 'BINARY', BOOL: 'BOOLEAN', NULL: 'NULL', L: 'LIST', M: 'MAP' }[
      typeOf(value) as string
    ] ?? typeOf(value)
  );
}

function add(item: Item, path: Path, value: AV): void {
  const type = typeOf(value);
  if (!['N', 'SS', 'NS', 'BS'].includes(type)) {
    throw validation(
      `Invalid ${KIND}: Incorrect operand type for operator or function; operator: ADD, operand type: ${operandType(value)}, typeSet: ALLOWED_FOR_ADD_OPERAND`,
    );
  }
  const existing = resolve(item, path);
  if (existing === undefined) {
    setPath(item, path, clone(value));
    return;
  }
  if (typeOf(existing) !== type) {
    throw validation('An operand in the update expression has an incorrect data type');
  }
  if (type === 'N') setPath(item, path, { N: addNumbers(existing.N as string, value.N as string) });
  else setPath(item, path, makeSet(type as 'SS', [...setMembers(existing), ...setMembers(value)]));
}

function remove(item: Item, path: Path, value: AV): void {
  const type = typeOf(value);
  if (!['SS', 'NS', 'BS'].includes(type)) {
    throw validation(
      `Invalid ${KIND}: Incorrect operand type for operator or function; operator: DELETE, operand type: ${operandType(value)}, typeSet: ALLOWED_FOR_DELETE_OPERAND`,
    );
  }
  const existing = resolve(item, path);
  if (existing === undefined) return;
  if (typeOf(existing) !== type) {
    throw validation('An operand in the update expression has an incorrect data type');
  }
  const removed = setMembers(value);
  const left = setMembers(existing).filter((m) => !removed.some((r) => equalValues(r, m)));
  if (left.length === 0) removePath(item, path);
  else setPath(item, path, makeSet(type as 'SS', left));
}

function resolve(item: Item, path: Path): AV | undefined {
  const parent = parentOf(item, path, false);
  const last = path[path.length - 1];
  if (parent === undefined || last === undefined) return undefined;
  return 'name' in last ? parent.M?.[last.name] : parent.L?.[last.index];
}
