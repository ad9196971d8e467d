import type { Decision, Limiter } from './index';

interface RlFastifyOptions<Request = any> {
  /** The limiter of every limited route (required unless each route names its own). */
  limiter?: Limiter;
  /** The key a request counts against (default: request.ip). */
  key?: (request: Request) => string | Uint8Array | Promise<string | Uint8Array>;
  /** The units a request costs (default 1). */
  cost?: (request: Request) => number | bigint | Promise<number | bigint>;
  /** Limit every route (default true); false: only routes whose config.rateLimit asks. */
  global?: boolean;
}

/** A route's own `config.rateLimit`: options over the plugin's, or false for none. */
type RlFastifyRouteConfig<Request = any> = Omit<RlFastifyOptions<Request>, 'global'> | boolean;

/**
 * The Fastify plugin: fastify.register(rlFastify, { limiter, key, cost }).
 * The decision is on request.rateLimit (a Decision).
 */
declare function rlFastify(instance: any, options: RlFastifyOptions, done: (err?: Error) => void): void;
declare namespace rlFastify {
  export { rlFastify };
  export { rlFastify as default };
}
declare namespace rlFastify {
  /** What the plugin leaves on each request. */
  export type RateLimitedRequest = { rateLimit: Decision | null };
  export type Options<Request = any> = RlFastifyOptions<Request>;
  export type RouteConfig<Request = any> = RlFastifyRouteConfig<Request>;
}
export = rlFastify;
