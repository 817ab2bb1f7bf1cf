/** What fanin logs of a reason or an error: never the values a message carried. */

/**
 * A reason fit for a log: values it quotes from the message (a definition name, an id, a
 * received value) are elided. The error output keeps the full reason with the message.
 */
export function redact(reason: string): string {
  return reason.replace(/"[^"]*"/g, '"…"').replace(/received [^;)]*/g, 'received …');
}

/** An error as one loggable line: its name and message, never the message body that caused it. */
export function describeError(error: unknown): string {
  return redact(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
}
