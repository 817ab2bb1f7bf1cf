/**
 * DynamoDB attribute values in their wire form (`{ S }`, `{ N }`, `{ M }`, ...), the form the
 * model works on internally, as DynamoDB does: numbers are decimal strings with 38 digits of
 * precision, compared and added exactly (never through a JavaScript float).
 */
import { validation } from '../errors.ts';

/** One attribute value in DynamoDB's wire form. Exactly one member is set. */
export interface AV {
  S?: string;
  N?: string;
  B?: Uint8Array;
  BOOL?: boolean;
  NULL?: boolean;
  L?: AV[];
  M?: Record<string, AV>;
  SS?: string[];
  NS?: string[];
  BS?: Uint8Array[];
}

/** An item: attribute name to value. */
export type Item = Record<string, AV>;

/** The type tag of a value (`S`, `N`, `M`, ...). */
export function typeOf(value: AV): keyof AV {
  const key = Object.keys(value)[0];
  if (key === undefined)
    throw validation('Supplied AttributeValue is empty, must contain exactly one of the supported datatypes');
  return key as keyof AV;
}

/** A deep copy (items leave and enter the model only as copies). */
export function clone<T>(value: T): T {
  if (value instanceof Uint8Array) return new Uint8Array(value) as T;
  if (Array.isArray(value)) return value.map(clone) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = clone(v);
    return out as T;
  }
  return value;
}

/** A decimal number: `mantissa × 10^exponent`, the mantissa without trailing zeros. */
interface Decimal {
  readonly mantissa: bigint;
  readonly exponent: number;
}

const NUMBER = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** Parses a DynamoDB number, or throws DynamoDB's ValidationException. */
export function parseNumber(text: string): Decimal {
  const match = NUMBER.exec(text.trim());
  const [, sign = '', whole = '', fraction = '', exp = '0'] = match ?? [];
  if (!match || whole.length + fraction.length === 0) {
    throw validation(`The parameter cannot be converted to a numeric value: ${text}`);
  }
  let mantissa = BigInt(`${whole}${fraction}` || '0');
  let exponent = Number(exp) - fraction.length;
  if (mantissa === 0n) return { mantissa: 0n, exponent: 0 };
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent += 1;
  }
  return { mantissa: sign === '-' ? -mantissa : mantissa, exponent };
}

/** Significant digits of a number, as DynamoDB counts them (leading and trailing zeros trimmed). */
export function significantDigits(text: string): number {
  const { mantissa } = parseNumber(text);
  return mantissa === 0n ? 1 : (mantissa < 0n ? -mantissa : mantissa).toString().length;
}

/**
 * Checks a number against DynamoDB's range and precision: at most 38 significant digits,
 * magnitude between 1E-130 and 9.9999999999999999999999999999999999999E+125.
 */
export function checkNumber(text: string): void {
  const { mantissa, exponent } = parseNumber(text);
  if (mantissa === 0n) return;
  const digits = (mantissa < 0n ? -mantissa : mantissa).toString().length;
  if (digits > 38) throw validation('Attempting to store more than 38 significant digits in a Number');
  if (exponent + digits - 1 > 125) {
    throw validation(
      'Number overflow. Attempting to store a number with magnitude larger than supported range',
    );
  }
  if (exponent < -130) {
    throw validation(
      'Number underflow. Attempting to store a number with magnitude smaller than supported range',
    );
  }
}

/** The canonical text of a number, as DynamoDB returns it (no exponent, no superfluous zeros). */
export function formatNumber(value: Decimal): string {
  const { mantissa, exponent } = value;
  if (mantissa === 0n) return '0';
  const negative = mantissa < 0n;
  const digits = (negative ? -mantissa : mantissa).toString();
  let text: string;
  if (exponent >= 0) text = digits + '0'.repeat(exponent);
  else if (-exponent >= digits.length) text = `0.${'0'.repeat(-exponent - digits.length)}${digits}`;
  else text = `${digits.slice(0, exponent)}.${digits.slice(exponent)}`;
  return negative ? `-${text}` : text;
}

function align(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const exponent = Math.min(a.exponent, b.exponent);
  return [
    a.mantissa * 10n ** BigInt(a.exponent - exponent),
    b.mantissa * 10n ** BigInt(b.exponent - exponent),
    exponent,
  ];
}

/** `a + b` (or `a - b` with `sign` -1), exactly, then checked against DynamoDB's range. */
export function addNumbers(a: string, b: string, sign: 1 | -1 = 1): string {
  const [x, y, exponent] = align(parseNumber(a), parseNumber(b));
  const text = formatNumber(parseNumber(formatNumber({ mantissa: x + BigInt(sign) * y, exponent })));
  checkNumber(text);
  return text;
}

/** Compares two numbers exactly: negative, zero or positive. */
export function compareNumbers(a: string, b: string): number {
  const [x, y] = align(parseNumber(a), parseNumber(b));
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Compares binaries bytewise, unsigned, as DynamoDB orders them. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/** Compares strings by their UTF-8 bytes, as DynamoDB orders sort keys. */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Below the surrogates, UTF-16 order is UTF-8 byte order; above, compare the bytes.
    if (x < 0xd800 && y < 0xd800) return x - y;
    return compareBytes(Buffer.from(a.slice(i), 'utf8'), Buffer.from(b.slice(i), 'utf8'));
  }
  return a.length - b.length;
}

/**
 * Orders two scalars of the same ordered type (S, N, B); `undefined` when they cannot be ordered
 * (different types, or a type DynamoDB does not order).
 */
export function compareValues(a: AV, b: AV): number | undefined {
  if (a.S !== undefined && b.S !== undefined) return compareStrings(a.S, b.S);
  if (a.N !== undefined && b.N !== undefined) return compareNumbers(a.N, b.N);
  if (a.B !== undefined && b.B !== undefined) return compareBytes(a.B, b.B);
  return undefined;
}

/** Deep equality as DynamoDB's `=` decides it (sets equal whatever their order, numbers by value). */
export function equalValues(a: AV, b: AV): boolean {
  const type = typeOf(a);
  if (type !== typeOf(b)) return false;
  switch (type) {
    case 'S':
    case 'N':
    case 'B':
      return compareValues(a, b) === 0;
    case 'BOOL':
      return a.BOOL === b.BOOL;
    case 'NULL':
      return true;
    case 'L': {
      const x = a.L ?? [];
      const y = b.L ?? [];
      return x.length === y.length && x.every((v, i) => equalValues(v, y[i] as AV));
    }
    case 'M': {
      const x = a.M ?? {};
      const y = b.M ?? {};
      const keys = Object.keys(x);
      return (
        keys.length === Object.keys(y).length &&
        keys.every((k) => y[k] !== undefined && equalValues(x[k] as AV, y[k] as AV))
      );
    }
    default: {
      const x = setMembers(a);
      const y = setMembers(b);
      return x.length === y.length && x.every((v) => y.some((w) => equalValues(v, w)));
    }
  }
}

/** The members of a set value as scalar values. */
export function setMembers(value: AV): AV[] {
  if (value.SS) return value.SS.map((S) => ({ S }));
  if (value.NS) return value.NS.map((N) => ({ N }));
  if (value.BS) return value.BS.map((B) => ({ B }));
  return [];
}

/** A set value of `type` from scalar members (duplicates dropped). */
export function makeSet(type: 'SS' | 'NS' | 'BS', members: readonly AV[]): AV {
  const unique: AV[] = [];
  for (const m of members) if (!unique.some((u) => equalValues(u, m))) unique.push(m);
  if (type === 'SS') return { SS: unique.map((m) => m.S as string) };
  if (type === 'NS') return { NS: unique.map((m) => m.N as string) };
  return { BS: unique.map((m) => m.B as Uint8Array) };
}

/** A string form of a key value, to index items by key. */
export function keyText(value: AV | undefined): string {
  if (value === undefined) return '';
  if (value.S !== undefined) return `S:${value.S}`;
  if (value.N !== undefined) return `N:${formatNumber(parseNumber(value.N))}`;
  if (value.B !== undefined) return `B:${Buffer.from(value.B).toString('base64')}`;
  return JSON.stringify(value);
}
