// The transport: the one HTTP layer every check uses, and its parts (retries, the circuit
// breaker, the memory budget of response bodies, what it counts), and finding what a run created
// by its name. http.ts loads undici on its first request, not on import.
export { HttpClient, HttpResponse, maskAuthorization, responseOf, transient, type Auth, type HttpClientOptions, type RequestSpec } from './http.js';
export { DEFAULT_RETRY, retryAfterMs, type RetryPolicy } from './retry.js';
export { Breaker, BREAKER_AFTER, BREAKER_GAP_MS, BREAKER_SILENT_MS } from './breaker.js';
export { BODY_BUDGET_BYTES, BodyBudget } from './body-budget.js';
export { noTransport, sumTransport, type TransportStats } from './transport-stats.js';
export { findByName, findNames } from './find.js';
export { latencyClass, Limiter, START_LIMIT, type BackoffCause } from './limiter.js';
export { LoadRecorder, type LatencyFigures, type LoadBucket, type LoadReport, type Way } from './load.js';
export { RateCap, RateLearner, UNDER } from './rate.js';
export { lifetimeMs, Login, LoginError, renewalTime, type LoginFailure, type LoginSettings } from './login.js';
