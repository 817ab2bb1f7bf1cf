/** The parameters an aggregate is opened with: the definition's, overridden by the runtime ones. */
export interface EffectiveParameters {
  readonly timeoutSeconds?: number;
  /** The definition's inactivity timeout, fixed at open like the others. */
  readonly inactivityTimeoutSeconds?: number;
  /** The definition's `deadlineSettleSeconds` when above 0, fixed at open (completion/deadline.ts, decisionDueAt). */
  readonly deadlineSettleSeconds?: number;
  readonly threshold?: number;
  readonly count?: number;
  /** Each recipient's reply deadline from the open (`responders.timeoutSeconds`, or the request's own). */
  readonly recipientTimeoutSeconds?: number;
  /** Recipients' own deadlines by reply id, where a recipient list gives them (`responders.timeouts`). */
  readonly recipientTimeouts?: readonly (number | null)[];
  /** How far a heartbeat extends its recipient's deadline (`responders.heartbeatSeconds`). */
  readonly heartbeatSeconds?: number;
  /** How the sub-requests are retried (`responders.retry`, engine/retries.ts). */
  readonly retry?: RetryParameters;
}

/** How a definition retries its sub-requests (`responders.retry`). */
export interface RetryParameters {
  /** Retries at most, after the first send (Step Functions' `MaxAttempts`). */
  readonly attempts: number;
  /** Seconds from the open to the first retry. */
  readonly intervalSeconds: number;
  /** What each next interval is multiplied by (1: evenly spaced). */
  readonly backoffRate: number;
  /** Whether a recipient that replied with a failure is asked again too (absent: only silent ones). */
  readonly failedReplies?: boolean;
}
