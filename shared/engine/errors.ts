/** Base of every error the engine raises. */
export class FaninError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'FaninError';
  }
}

/** A definition failed validation; `issues` lists each field path with what was wrong. */
export class InvalidDefinitionError extends FaninError {
  public readonly issues: readonly string[];
  public constructor(issues: readonly string[], options?: ErrorOptions) {
    super(`invalid aggregation definition: ${issues.join('; ')}`, options);
    this.name = 'InvalidDefinitionError';
    this.issues = issues;
  }
}

/** A JSONata expression failed to compile, threw, or exceeded its time or depth budget. */
export class ExpressionError extends FaninError {
  public readonly expression: string;
  public constructor(expression: string, message: string, options?: ErrorOptions) {
    super(`expression ${JSON.stringify(expression)} failed: ${message}`, options);
    this.name = 'ExpressionError';
    this.expression = expression;
  }
}

/** A message carried no usable correlation value (or reply id). */
export class CorrelationError extends FaninError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CorrelationError';
  }
}

/** An engine call was made in a state where it is not allowed (a programming error in an adapter). */
export class IllegalTransitionError extends FaninError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'IllegalTransitionError';
  }
}
