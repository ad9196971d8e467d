package dev.rl.spring;

import dev.rl.RateLimitException;
import dev.rl.RateLimiter;
import dev.rl.Store;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The limiters of rl.limiters, made when the application starts (a bad setting stops it, naming
 * rl.limiters.&lt;name&gt;.&lt;setting&gt; or the limiter), closed with the context.
 */
public final class RateLimiters implements AutoCloseable {
  private final Map<String, NamedLimiter> byName = new LinkedHashMap<>();

  RateLimiters(Store store, Map<String, Map<String, String>> config) {
    try {
      for (Map.Entry<String, Map<String, String>> e : config.entrySet()) {
        byName.put(e.getKey(), make(store, e.getKey(), e.getValue()));
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  private static NamedLimiter make(Store store, String name, Map<String, String> entries) {
    String where = "rl.limiters." + name;
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("name", name);
    String key = "ip";
    long cost = 1;
    List<String> paths = new ArrayList<>();
    for (Map.Entry<String, String> e : entries.entrySet()) {
      String setting = e.getKey().replace('-', '_');
      String value = e.getValue();
      switch (setting) {
        case "key" -> key = value;
        case "paths" ->
            Arrays.stream(value.split(","))
                .map(String::trim)
                .filter(p -> !p.isEmpty())
                .forEach(paths::add);
        case "cost" -> {
          try {
            cost = Long.parseLong(value.trim());
          } catch (NumberFormatException x) {
            throw new IllegalArgumentException(where + ".cost: '" + value + "' is not a whole number");
          }
        }
        default -> settings.put(setting, value);
      }
    }
    KeySource keySource = KeySource.parse(key, where); // before the limiter: nothing to close
    RateLimiter limiter;
    try {
      limiter = store.limiter(settings);
    } catch (RateLimitException x) {
      throw new IllegalArgumentException(where + ": " + x.getMessage(), x);
    }
    return new NamedLimiter(name, limiter, keySource, cost, paths);
  }

  /** The limiter rl.limiters.name, or an IllegalArgumentException naming it. */
  public NamedLimiter get(String name) {
    NamedLimiter l = byName.get(name);
    if (l == null) {
      throw new IllegalArgumentException("rl.limiters." + name + ": is not configured");
    }
    return l;
  }

  public Collection<NamedLimiter> all() {
    return byName.values();
  }

  @Override
  public void close() {
    for (NamedLimiter l : byName.values()) l.limiter().close();
  }
}
