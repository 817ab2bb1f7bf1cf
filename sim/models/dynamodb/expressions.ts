/**
 * DynamoDB's expression language, parsed and evaluated over items in wire form: condition and
 * filter expressions, update expressions (SET with `+`, `-`, `if_not_exists`, `list_append`;
 * REMOVE; ADD; DELETE), key conditions and projections, with ExpressionAttributeNames and
 * ExpressionAttributeValues resolved as DynamoDB does (a placeholder that is not defined is a
 * ValidationException; which ones were used is recorded, so the caller can refuse unused ones).
 * DynamoDB's reserved words (reserved.ts) are refused as bare attribute names.
 */
import { validation } from '../errors.ts';
import { RESERVED_WORDS } from './reserved.ts';
import { type AV, addNumbers, compareValues, equalValues, type Item, setMembers, typeOf } from './values.ts';

/** One step of a document path: an attribute name or a list index. */
export type Segment = { readonly name: string } | { readonly index: number };
/** A document path, its placeholders resolved. */
export type Path = readonly Segment[];

/** An operand of a condition or of a SET action. */
export type Operand =
  | { readonly kind: 'path'; readonly path: Path }
  | { readonly kind: 'value'; readonly value: AV }
  | { readonly kind: 'size'; readonly path: Path }
  | { readonly kind: 'if_not_exists'; readonly path: Path; readonly fallback: Operand }
  | { readonly kind: 'list_append'; readonly a: Operand; readonly b: Operand }
  | { readonly kind: 'arith'; readonly op: '+' | '-'; readonly a: Operand; readonly b: Operand };

/** A condition (condition, filter or key condition expression). */
export type Condition =
  | { readonly kind: 'cmp'; readonly op: string; readonly a: Operand; readonly b: Operand }
  | { readonly kind: 'between'; readonly a: Operand; readonly low: Operand; readonly high: Operand }
  | { readonly kind: 'in'; readonly a: Operand; readonly list: readonly Operand[] }
  | { readonly kind: 'fn'; readonly fn: string; readonly args: readonly Operand[] }
  | { readonly kind: 'and' | 'or'; readonly a: Condition; readonly b: Condition }
  | { readonly kind: 'not'; readonly a: Condition };

/** An action of an update expression. */
export interface UpdateAction {
  readonly clause: 'SET' | 'REMOVE' | 'ADD' | 'DELETE';
  readonly path: Path;
  readonly value?: Operand;
}

/** The placeholders of one request and which of them its expressions used. */
export class Placeholders {
  public readonly usedNames = new Set<string>();
  public readonly usedValues = new Set<string>();

  public constructor(
    public readonly names: Readonly<Record<string, string>> | undefined,
    public readonly values: Readonly<Item> | undefined,
  ) {
    if (names && Object.keys(names).length === 0)
      throw validation('ExpressionAttributeNames must not be empty');
    if (values && Object.keys(values).length === 0)
      throw validation('ExpressionAttributeValues must not be empty');
  }

  /** Refuses placeholders no expression used, as DynamoDB does. */
  public checkAllUsed(): void {
    const unusedNames = Object.keys(this.names ?? {}).filter((n) => !this.usedNames.has(n));
    if (unusedNames.length > 0) {
      throw validation(
        `Value provided in ExpressionAttributeNames unused in expressions: keys: {${unusedNames.join(', ')}}`,
      );
    }
    const unusedValues = Object.keys(this.values ?? {}).filter((n) => !this.usedValues.has(n));
    if (unusedValues.length > 0) {
      throw validation(
        `Value provided in ExpressionAttributeValues unused in expressions: keys: {${unusedValues.join(', ')}}`,
      );
    }
  }
}

const TOKEN = /\s*(#[A-Za-z0-9_]+|:[A-Za-z0-9_]+|[A-Za-z_][A-Za-z0-9_]*|\d+|<=|>=|<>|[=<>(),.[\]+-])/y;

/** A recursive-descent parser over one expression. */
class Parser {
  private readonly tokens: string[] = [];
  private position = 0;

  public constructor(
    text: string,
    private readonly kind: string,
    private readonly placeholders: Placeholders,
  ) {
    TOKEN.lastIndex = 0;
    let end = 0;
    for (;;) {
      const match = TOKEN.exec(text);
      if (!match) break;
      this.tokens.push(match[1] as string);
      end = TOKEN.lastIndex;
    }
    const rest = text.slice(end).trim();
    if (rest.length > 0) this.fail(`Syntax error; token: "${rest[0]}", near: "${rest.slice(0, 10)}"`);
    if (this.tokens.length === 0) this.fail('The expression can not be empty;');
  }

  public fail(detail: string): never {
    throw validation(`Invalid ${this.kind}: ${detail}`);
  }

  public peek(offset = 0): string | undefined {
    return this.tokens[this.position + offset];
  }

  public keyword(word: string): boolean {
    if (this.peek()?.toUpperCase() !== word) return false;
    this.position += 1;
    return true;
  }

  public expect(token: string): void {
    const next = this.peek();
    if (next?.toUpperCase() !== token) this.syntax();
    this.position += 1;
  }

  public syntax(): never {
    const token = this.peek();
    if (token === undefined) this.fail('Syntax error; token: "<EOF>", near: ""');
    this.fail(
      `Syntax error; token: "${token}", near: "${this.tokens.slice(this.position, this.position + 3).join(' ')}"`,
    );
  }

  public done(): boolean {
    return this.position >= this.tokens.length;
  }

  public path(): Path {
    const segments: Segment[] = [this.name()];
    for (;;) {
      if (this.peek() === '.') {
        this.position += 1;
        segments.push(this.name());
      } else if (this.peek() === '[') {
        this.position += 1;
        const index = this.peek() ?? '';
        if (!/^\d+$/.test(index)) this.syntax();
        this.position += 1;
        this.expect(']');
        segments.push({ index: Number(index) });
      } else return segments;
    }
  }

  private name(): Segment {
    const token = this.peek();
    if (token === undefined) this.syntax();
    if (token.startsWith('#')) {
      const name = this.placeholders.names?.[token];
      if (name === undefined) {
        this.fail(
          `An expression attribute name used in the document path is not defined; attribute name: ${token}`,
        );
      }
      this.placeholders.usedNames.add(token);
      this.position += 1;
      return { name };
    }
    if (!/^[A-Za-z_]/.test(token)) this.syntax();
    if (RESERVED_WORDS.has(token.toLowerCase())) {
      this.fail(`Attribute name is a reserved keyword; reserved keyword: ${token}`);
    }
    this.position += 1;
    return { name: token };
  }

  public value(): Operand {
    const token = this.peek() as string;
    const value = this.placeholders.values?.[token];
    if (value === undefined) {
      this.fail(`An expression attribute value used in expression is not defined; attribute value: ${token}`);
    }
    this.placeholders.usedValues.add(token);
    this.position += 1;
    return { kind: 'value', value };
  }

  /** An operand of a condition: a path, a value or `size(path)`. */
  public operand(): Operand {
    const token = this.peek();
    if (token === undefined) this.syntax();
    if (token.startsWith(':')) return this.value();
    if (token === 'size' && this.peek(1) === '(') {
      this.position += 2;
      const path = this.path();
      this.expect(')');
      return { kind: 'size', path };
    }
    return { kind: 'path', path: this.path() };
  }

  public condition(): Condition {
    let left = this.conjunction();
    while (this.keyword('OR')) left = { kind: 'or', a: left, b: this.conjunction() };
    return left;
  }

  private conjunction(): Condition {
    let left = this.negation();
    while (this.keyword('AND')) left = { kind: 'and', a: left, b: this.negation() };
    return left;
  }

  private negation(): Condition {
    if (this.keyword('NOT')) return { kind: 'not', a: this.negation() };
    return this.primary();
  }

  private primary(): Condition {
    if (this.peek() === '(') {
      this.position += 1;
      const inner = this.condition();
      this.expect(')');
      return inner;
    }
    const token = this.peek() ?? '';
    if (FUNCTIONS.has(token) && this.peek(1) === '(') {
      this.position += 2;
      const args: Operand[] = [this.operand()];
      while (this.peek() === ',') {
        this.position += 1;
        args.push(this.operand());
      }
      this.expect(')');
      const arity = FUNCTIONS.get(token);
      if (args.length !== arity)
        this.fail(
          `Incorrect number of operands for operator or function; operator or function: ${token}, number of operands: ${args.length}`,
        );
      if (args[0]?.kind !== 'path')
        this.fail(`Operator or function requires a document path; operator or function: ${token}`);
      return { kind: 'fn', fn: token, args };
    }
    const a = this.operand();
    const op = this.peek();
    if (op !== undefined && ['=', '<>', '<', '<=', '>', '>='].includes(op)) {
      this.position += 1;
      return { kind: 'cmp', op, a, b: this.operand() };
    }
    if (this.keyword('BETWEEN')) {
      const low = this.operand();
      this.expect('AND');
      return { kind: 'between', a, low, high: this.operand() };
    }
    if (this.keyword('IN')) {
      this.expect('(');
      const list: Operand[] = [this.operand()];
      while (this.peek() === ',') {
        this.position += 1;
        list.push(this.operand());
      }
      this.expect(')');
      return { kind: 'in', a, list };
    }
    return this.syntax();
  }

  /** The right-hand side of a SET action. */
  public updateValue(): Operand {
    const a = this.updateOperand();
    const op = this.peek();
    if (op === '+' || op === '-') {
      this.position += 1;
      return { kind: 'arith', op, a, b: this.updateOperand() };
    }
    return a;
  }

  private updateOperand(): Operand {
    const token = this.peek();
    if (token === undefined) this.syntax();
    if (token.startsWith(':')) return this.value();
    if ((token === 'if_not_exists' || token === 'list_append') && this.peek(1) === '(') {
      this.position += 2;
      if (token === 'if_not_exists') {
        const path = this.path();
        this.expect(',');
        const fallback = this.updateValue();
        this.expect(')');
        return { kind: 'if_not_exists', path, fallback };
      }
      const a = this.updateValue();
      this.expect(',');
      const b = this.updateValue();
      this.expect(')');
      return { kind: 'list_append', a, b };
    }
    return { kind: 'path', path: this.path() };
  }
}

const FUNCTIONS = new Map<string, number>([
  ['attribute_exists', 1],
  ['attribute_not_exists', 1],
  ['attribute_type', 2],
  ['begins_with', 2],
  ['contains', 2],
]);

/** Parses a condition or filter expression. */
export function parseCondition(text: string, kind: string, placeholders: Placeholders): Condition {
  const parser = new Parser(text, kind, placeholders);
  const condition = parser.condition();
  if (!parser.done()) parser.syntax();
  return condition;
}

/** Parses an update expression into its actions, refusing overlapping paths as DynamoDB does. */
export function parseUpdate(text: string, placeholders: Placeholders): UpdateAction[] {
  const kind = 'UpdateExpression';
  const parser: Parser = new Parser(text, kind, placeholders);
  const actions: UpdateAction[] = [];
  const seen = new Set<string>();
  while (!parser.done()) {
    const clause = (['SET', 'REMOVE', 'ADD', 'DELETE'] as const).find((c) => parser.keyword(c));
    if (!clause) parser.syntax();
    if (seen.has(clause))
      parser.fail(`The "${clause}" section can only be used once in an update expression;`);
    seen.add(clause);
    do {
      const path = parser.path();
      if (clause === 'SET') {
        parser.expect('=');
        actions.push({ clause, path, value: parser.updateValue() });
      } else if (clause === 'REMOVE') actions.push({ clause, path });
      else {
        if (!parser.peek()?.startsWith(':')) parser.syntax();
        actions.push({ clause, path, value: parser.value() });
      }
    } while (parser.peek() === ',' && parser.keyword(','));
  }
  for (let i = 0; i < actions.length; i += 1) {
    for (let j = i + 1; j < actions.length; j += 1) {
      const a = (actions[i] as UpdateAction).path;
      const b = (actions[j] as UpdateAction).path;
      const n = Math.min(a.length, b.length);
      if (a.slice(0, n).every((s, k) => sameSegment(s, b[k] as Segment))) {
        parser.fail(
          `Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [${pathText(a)}], path two: [${pathText(b)}]`,
        );
      }
    }
  }
  return actions;
}

/** Parses a projection expression into its paths. */
export function parseProjection(text: string, placeholders: Placeholders): Path[] {
  const parser = new Parser(text, 'ProjectionExpression', placeholders);
  const paths = [parser.path()];
  while (parser.peek() === ',') {
    parser.keyword(',');
    paths.push(parser.path());
  }
  if (!parser.done()) parser.syntax();
  return paths;
}

function sameSegment(a: Segment, b: Segment): boolean {
  return 'name' in a ? 'name' in b && a.name === b.name : 'index' in b && a.index === b.index;
}

/** A path as DynamoDB prints it in its messages (`a, b, [0]`). */
export function pathText(path: Path): string {
  return path.map((s) => ('name' in s ? s.name : `[${s.index}]`)).join(', ');
}

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
      throw validation(
        `Invalid ${kind}: Incorrect operand type for operator or function; operator or function: size, operand type: ${typeOf(value)}`,
      );
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
      if (a === undefined || b === undefined) return false;
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
