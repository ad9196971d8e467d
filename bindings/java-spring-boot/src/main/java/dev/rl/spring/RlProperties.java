package dev.rl.spring;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code rl.*} in application.yml:
 *
 * <pre>
 * rl:
 *   url: redis://127.0.0.1:6379?timeout_ms=50     # the store: any rl store URL and settings
 *   limiters:
 *     api:
 *       limit: 100/1m                            # any rl limiter setting (algorithm, burst,
 *       algorithm: gcra                          #   on-failure, deny-cache-keys, ...)
 *       key: header:X-Api-Key                    # ip (default), header:Name or principal
 *       paths: /api/**, /v2/**                   # the servlet filter limits these paths
 *       cost: 1                                  # units per request (default 1)
 * </pre>
 *
 * A limiter's entries other than key, paths and cost are rl's limiter settings, kebab-case or
 * snake_case; rl validates them when the application starts.
 */
@ConfigurationProperties("rl")
public class RlProperties {
  /** The store's URL (memory://, redis://, rediss://, redis+sentinel://, redis+cluster://). */
  private String url = "memory://";

  /** Named limiters: rl's limiter settings plus key, paths and cost. */
  private Map<String, Map<String, String>> limiters = new LinkedHashMap<>();

  public String getUrl() {
    return url;
  }

  public void setUrl(String url) {
    this.url = url;
  }

  public Map<String, Map<String, String>> getLimiters() {
    return limiters;
  }

  public void setLimiters(Map<String, Map<String, String>> limiters) {
    this.limiters = limiters;
  }
}
