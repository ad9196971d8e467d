import type { Store } from './index';

export interface RegisterStoreMetricsOptions {
  /** A prom-client Registry; default: prom-client's global one. */
  registry?: { registerMetric(metric: unknown): void };
  /** With several stores, the label naming each (default 'store'). */
  label?: string;
}

/**
 * Registers librl's metric families of one store, or of several named
 * stores (each sample labelled with its name), in a prom-client registry.
 * Returns the names registered.
 */
export function registerStoreMetrics(
  stores: Store | Record<string, Store>,
  options?: RegisterStoreMetricsOptions,
): string[];
