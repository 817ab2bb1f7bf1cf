/**
 * Evaluation of parsed expressions (expressions.ts) over items in wire form, with DynamoDB's
 * semantics: a comparison with a missing attribute is false, values of different types are
 * unequal and unordered, only strings, numbers and binaries are ordered.
 */
import { validation } from '../errors.ts';
import type { Condition, Operand, Path } from './expressions.ts';
import { type AV, addNumbers, compareValues, equalValues, type Item, setMembers, typeOf } from './values.ts';

/** The value at `path` in `item`, or undefined. */
export function resolvePath(item: Item | undefined, path: Path): AV | undefined {
  let current: AV | undefined = item ? { M: item } : undefined;
  for (const segment of path) {
    if (current === undefined) return undefined;
    current = 'name' in segment ? current.M?.[segment.name] : current.L?.[segment.index];
  }
  return current;
}

/** The value of an operand against an item (the item before the update, for SET). */
export function evaluateOperand(operand: Operand, item: Item | undefined, kind: string): AV | undefined {
  switch (operand.kind) {
    case 'path':
      return resolvePath(item, operand.path);
    case 'value':
      return operand.value;
    case 'size': {
      const value = resolvePath(item, operand.path);
      if (value === undefined) return undefined;
      if (value.S !== undefined) return { N: String(value.S.length) };
      if (value.B !== undefined) return { N: String(value.B.length) };
      if (value.L !== undefined) return { N: String(value.L.length) };
      if (value.M !== undefined) return { N: String(Object.keys(value.M).length) };
      const members = setMembers(value);
      if (members.length > 0) return { N: String(members.length) };
      // A number, a boolean or null has no size: no value, so a comparison with it is false.
      return undefined;
    }
    case 'if_not_exists':
      return resolvePath(item, operand.path) ?? evaluateOperand(operand.fallback, item, kind);
    case 'list_append': {
      const a = evaluateOperand(operand.a, item, kind);
      const b = evaluateOperand(operand.b, item, kind);
      if (a?.L === undefined || b?.L === undefined) {
        throw validation('The provided expression refers to an attribute that does not exist in the item');
      }
      return { L: [...a.L, ...b.L] };
    }
    case 'arith':
      return arithmetic(operand, item, kind);
  }
}

function arithmetic(operand: Extract<Operand, { kind: 'arith' }>, item: Item | undefined, kind: string): AV {
  const a = evaluateOperand(operand.a, item, kind);
  const b = evaluateOperand(operand.b, item, kind);
  if (a === undefined || b === undefined) {
    throw validation('The provided expression refers to an attribute that does not exist in the item');
  }
  if (a.N === undefined || b.N === undefined) {
    throw validation(`An operand in the update expression has an incorrect data type`);
  }
  return { N: addNumbersOf(a.N, b.N, operand.op) };
}

function addNumbersOf(a: string, b: string, op: '+' | '-'): string {
  return addNumbers(a, b, op === '+' ? 1 : -1);
}

/** Evaluates a condition against an item (undefined: no item). */
export function evaluateCondition(condition: Condition, item: Item | undefined, kind: string): boolean {
  switch (condition.kind) {
    case 'and':
      return evaluateCondition(condition.a, item, kind) && evaluateCondition(condition.b, item, kind);
    case 'or':
      return evaluateCondition(condition.a, item, kind) || evaluateCondition(condition.b, item, kind);
    case 'not':
      return !evaluateCondition(condition.a, item, kind);
    case 'cmp': {
      const a = evaluateOperand(condition.a, item, kind);
      const b = evaluateOperand(condition.b, item, kind);
      // A missing attribute equals nothing: `<>` holds when either side has no value.
      if (a === undefined || b === undefined) return condition.op === '<>';
      if (condition.op === '=') return equalValues(a, b);
      if (condition.op === '<>') return !equalValues(a, b);
      const order = compareValues(a, b);
      if (order === undefined) return false;
      return { '<': order < 0, '<=': order <= 0, '>': order > 0, '>=': order >= 0 }[condition.op] ?? false;
    }
    case 'between': {
      const a = evaluateOperand(condition.a, item, kind);
      const low = evaluateOperand(condition.low, item, kind);
      const high = evaluateOperand(condition.high, item, kind);
      if (a === undefined || low === undefined || high === undefined) return false;
      const x = compareValues(a, low);
      const y = compareValues(a, high);
      return x !== undefined && y !== undefined && x >= 0 && y <= 0;
    }
    case 'in': {
      const a = evaluateOperand(condition.a, item, kind);
      return (
        a !== undefined &&
        condition.list.some((o) => {
          const b = evaluateOperand(o, item, kind);
          return b !== undefined && equalValues(a, b);
        })
      );
    }
    case 'fn':
      return evaluateFunction(condition, item, kind);
  }
}

function evaluateFunction(
  condition: Extract<Condition, { kind: 'fn' }>,
  item: Item | undefined,
  kind: string,
): boolean {
  const [first, second] = condition.args;
  const target = first ? evaluateOperand(first, item, kind) : undefined;
  const argument = second ? evaluateOperand(second, item, kind) : undefined;
  switch (condition.fn) {
    case 'attribute_exists':
      return target !== undefined;
    case 'attribute_not_exists':
      return target === undefined;
    case 'attribute_type': {
      const type = argument?.S;
      if (type === undefined || !['S', 'N', 'B', 'BOOL', 'NULL', 'L', 'M', 'SS', 'NS', 'BS'].includes(type)) {
        throw validation(
          `Invalid ${kind}: Invalid attribute type name found in type parameter: ${type ?? ''}`,
        );
      }
      return target !== undefined && typeOf(target) === type;
    }
    case 'begins_with': {
      // A literal prefix of the wrong type is refused; an attribute's value of the wrong type is false.
      if (second?.kind !== 'value' && argument?.S === undefined && argument?.B === undefined) return false;
      if (argument?.S === undefined && argument?.B === undefined) {
        throw validation(
          `Invalid ${kind}: Incorrect operand type for operator or function; operator or function: begins_with, operand type: ${argument ? typeOf(argument) : 'NULL'}`,
        );
      }
      if (target?.S !== undefined && argument.S !== undefined) {
        return Buffer.from(target.S)
          .subarray(0, Buffer.byteLength(argument.S))
          .equals(Buffer.from(argument.S));
      }
      if (target?.B !== undefined && argument.B !== undefined) {
        return Buffer.from(target.B).subarray(0, argument.B.length).equals(Buffer.from(argument.B));
      }
      return false;
    }
    default: {
      if (target === undefined || argument === undefined) return false;
      if (target.S !== undefined) return argument.S !== undefined && target.S.includes(argument.S);
      if (target.L !== undefined) return target.L.some((v) => equalValues(v, argument));
      return setMembers(target).some((v) => equalValues(v, argument));
    }
  }
}

/** The parts of `item` that `paths` name, nested as in the item (list elements compacted). */
export function project(item: Item, paths: readonly Path[]): Item {
  const out: AV = { M: {} };
  for (const path of paths) {
    const value = resolvePath(item, path);
    if (value === undefined) continue;
    let target = out;
    let source: AV = { M: item };
    path.forEach((segment, i) => {
      const last = i === path.length - 1;
      const next = 'name' in segment ? source.M?.[segment.name] : source.L?.[segment.index];
      if (next === undefined) return;
      const child: AV = last ? next : next.M !== undefined ? { M: {} } : { L: [] };
      if ('name' in segment) {
        target.M ??= {};
        target = target.M[segment.name] ??= child;
      } else {
        target.L ??= [];
        target.L.push(child);
        target = child;
      }
      source = next;
    });
  }
  return out.M ?? {};
}
