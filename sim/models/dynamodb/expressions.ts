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
import type { AV, Item } from './values.ts';

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
      if (args[0]?.kind !== 'path' && token !== 'begins_with')
        this.fail(`Operator or function requires a document path; operator or function: ${token}`);
      return { kind: 'fn', fn: token, args };
    }
    // Function names are case-sensitive: ATTRIBUTE_EXISTS( is an unknown function, not a path.
    if (this.peek(1) === '(' && token !== 'size' && /^[A-Za-z_]\w*$/.test(token))
      this.fail(`Invalid function name; function: ${token}`);
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
      // DynamoDB takes up to 100 values in an IN list.
      if (list.length > 100)
        this.fail(`The IN operator is provided with too many operands; number of operands: ${list.length}`);
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
