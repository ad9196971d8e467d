package dev.rl.micrometer;

import dev.rl.Store;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A store's statistics as Micrometer meters: {@code new StoreMetrics(store).bindTo(registry)},
 * or a {@code @Bean} in Spring Boot, which binds every MeterBinder bean.
 *
 * <p>The meters are read from librl's own exposition ({@link Store#metrics()}): its counters
 * become {@link FunctionCounter}s ({@code rl_decisions_total} is {@code rl.decisions}), its
 * gauges {@link Gauge}s ({@code rl.breaker.state}), its round-trip summary a {@link
 * FunctionTimer} ({@code rl.store.round.trip}, count and total) with a {@link TimeGauge} per
 * quantile ({@code rl.store.round.trip.quantile}, tag {@code quantile}); labels become tags. A
 * Prometheus registry so prints the same names and labels as every rl binding. Each read takes
 * the store's statistics afresh. Extra tags (e.g. {@code store=main}) keep several stores apart.
 * Micrometer is not a dependency of rl: add {@code io.micrometer:micrometer-core}.
 */
public final class StoreMetrics implements MeterBinder {
  private final Store store;
  private final Tags tags;

  public StoreMetrics(Store store) {
    this(store, Tags.empty());
  }

  public StoreMetrics(Store store, Iterable<Tag> tags) {
    this.store = Objects.requireNonNull(store, "store");
    this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    for (Family family : Exposition.parse(store.metrics()).values()) {
      switch (family.type) {
        case "counter" -> bindSamples(registry, family, true);
        case "summary" -> bindSummary(registry, family);
        default -> bindSamples(registry, family, false);
      }
    }
  }

  // A counter family (rl_decisions_total is rl.decisions) or a gauge family: one meter per sample.
  private void bindSamples(MeterRegistry registry, Family family, boolean counter) {
    String name = meterName(counter ? family.name.replaceFirst("_total$", "") : family.name);
    for (Sample s : family.samples) {
      ToDoubleFunction<Store> value = st -> read(st, family.name, s.name, s.labels);
      if (counter) {
        FunctionCounter.builder(name, store, value).description(family.help).tags(tagsOf(s.labels))
            .register(registry);
      } else {
        Gauge.builder(name, store, value).description(family.help).tags(tagsOf(s.labels))
            .register(registry);
      }
    }
  }

  // rl_store_round_trip_seconds: _count and _sum as a timer, each quantile a time gauge.
  private void bindSummary(MeterRegistry registry, Family family) {
    String base = meterName(family.name.replaceFirst("_seconds$", ""));
    String count = family.name + "_count";
    String sum = family.name + "_sum";
    FunctionTimer.builder(
            base,
            store,
            st -> (long) read(st, family.name, count, Map.of()),
            st -> read(st, family.name, sum, Map.of()),
            TimeUnit.SECONDS)
        .description(family.help)
        .tags(tags)
        .register(registry);
    for (Sample s : family.samples) {
      if (!s.labels.containsKey("quantile")) continue;
      TimeGauge.builder(
              base + ".quantile",
              store,
              TimeUnit.SECONDS,
              st -> read(st, family.name, s.name, s.labels))
          .description(family.help)
          .tags(tagsOf(s.labels))
          .register(registry);
    }
  }

  private Tags tagsOf(Map<String, String> labels) {
    Tags out = tags;
    for (Map.Entry<String, String> l : labels.entrySet()) out = out.and(l.getKey(), l.getValue());
    return out;
  }

  private static String meterName(String exposition) {
    return exposition.replace('_', '.');
  }

  // One sample's value as the store has it now (NaN once it is gone).
  private static double read(
      Store store, String family, String sample, Map<String, String> labels) {
    Family f = Exposition.parse(store.metrics()).get(family);
    if (f == null) return Double.NaN;
    for (Sample s : f.samples) {
      if (s.name.equals(sample) && s.labels.equals(labels)) return s.value;
    }
    return Double.NaN;
  }

  record Sample(String name, Map<String, String> labels, double value) {}

  record Family(String name, String help, String type, List<Sample> samples) {}

  /** The Prometheus text format (0.0.4) as librl writes it: HELP, TYPE, then samples. */
  static final class Exposition {
    private static final Pattern HELP = Pattern.compile("^# HELP (\\S+) (.*)$");
    private static final Pattern TYPE = Pattern.compile("^# TYPE (\\S+) (\\S+)$");
    private static final Pattern SAMPLE =
        Pattern.compile("^([A-Za-z_:][A-Za-z0-9_:]*)(\\{.*\\})? (\\S+)$");
    private static final Pattern LABEL =
        Pattern.compile("([A-Za-z_][A-Za-z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    private Exposition() {}

    static Map<String, Family> parse(String text) {
      Map<String, Family> families = new LinkedHashMap<>();
      Map<String, String> help = new LinkedHashMap<>();
      String current = null;
      for (String line : text.split("\n")) {
        Matcher m;
        if ((m = HELP.matcher(line)).matches()) {
          help.put(m.group(1), unescape(m.group(2)));
        } else if ((m = TYPE.matcher(line)).matches()) {
          current = m.group(1);
          families.put(
              current,
              new Family(current, help.getOrDefault(current, ""), m.group(2), new ArrayList<>()));
        } else if ((m = SAMPLE.matcher(line)).matches()) {
          String name = m.group(1);
          // A sample belongs to the family last typed (a summary's _sum, _count).
          String owner = current != null && name.startsWith(current) ? current : name;
          families
              .computeIfAbsent(owner, n -> new Family(n, "", "untyped", new ArrayList<>()))
              .samples()
              .add(new Sample(name, labels(m.group(2)), Double.parseDouble(m.group(3))));
        }
      }
      return families;
    }

    private static Map<String, String> labels(String text) {
      Map<String, String> out = new LinkedHashMap<>();
      if (text == null) return out;
      Matcher m = LABEL.matcher(text);
      while (m.find()) out.put(m.group(1), unescape(m.group(2)));
      return out;
    }

    private static String unescape(String s) {
      StringBuilder out = new StringBuilder(s.length());
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        if (c == '\\' && i + 1 < s.length()) {
          char next = s.charAt(++i);
          out.append(next == 'n' ? '\n' : next);
        } else {
          out.append(c);
        }
      }
      return out.toString();
    }
  }
}
