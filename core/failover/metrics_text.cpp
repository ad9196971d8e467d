#include "metrics_text.h"

#include <cstdio>

namespace rl {
namespace {

void line(std::string& out, const char* format, auto... values) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, format, values...);
  out += buffer;
}

// A label's value as the exposition format escapes it.
std::string label_value(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string metrics_text(const StatsView& view) {
  const StoreStats::Snapshot s = view.stats->snapshot();
  std::string out;
  out += "# HELP rl_decisions_total Decisions, by verdict and by the path that decided.\n";
  out += "# TYPE rl_decisions_total counter\n";
  for (size_t i = 0; i < kSources; ++i) {
    line(out, "rl_decisions_total{verdict=\"allowed\",source=\"%s\"} %llu\n",
         source_name(static_cast<int>(i)), static_cast<unsigned long long>(s.allowed[i]));
    line(out, "rl_decisions_total{verdict=\"denied\",source=\"%s\"} %llu\n",
         source_name(static_cast<int>(i)), static_cast<unsigned long long>(s.denied[i]));
  }
  out += "# HELP rl_failures_total Calls that ended in an error, by status.\n";
  out += "# TYPE rl_failures_total counter\n";
  for (int i = 1; i < kCodeCount; ++i) {
    line(out, "rl_failures_total{status=\"%s\"} %llu\n", code_name(i),
         static_cast<unsigned long long>(s.failures[i]));
  }
  out +=
      "# HELP rl_breaker_state The store's circuit breaker, the worst of its nodes': 0 closed, "
      "1 open, 2 half-open.\n";
  out += "# TYPE rl_breaker_state gauge\n";
  line(out, "rl_breaker_state %d\n", static_cast<int>(view.breaker));
  out += "# HELP rl_breaker_opened_total Times the circuit breaker opened.\n";
  out += "# TYPE rl_breaker_opened_total counter\n";
  line(out, "rl_breaker_opened_total %lld\n", static_cast<long long>(view.breaker_opened));
  if (!view.nodes.empty()) {
    out +=
        "# HELP rl_node_breaker_state One node's circuit breaker: 0 closed, 1 open, 2 half-open.\n";
    out += "# TYPE rl_node_breaker_state gauge\n";
    for (const NodeBreakerView& n : view.nodes) {
      out += "rl_node_breaker_state{node=\"" + label_value(n.node) + "\"} " +
             std::to_string(static_cast<int>(n.state)) + "\n";
    }
    out += "# HELP rl_node_breaker_opened_total Times one node's circuit breaker opened.\n";
    out += "# TYPE rl_node_breaker_opened_total counter\n";
    for (const NodeBreakerView& n : view.nodes) {
      out += "rl_node_breaker_opened_total{node=\"" + label_value(n.node) + "\"} " +
             std::to_string(n.opened) + "\n";
    }
  }
  if (!view.decides_with.empty()) {
    out +=
        "# HELP rl_store_decides_with What decides in Redis (script_mode): rl's module, "
        "functions, scripts, or auto and how many nodes have the module.\n";
    out += "# TYPE rl_store_decides_with gauge\n";
    out += "rl_store_decides_with{with=\"" + label_value(view.decides_with) + "\"} 1\n";
  }
  const LeaseCounts leases = view.stats->leases.snapshot();
  const auto counter = [&out](const char* name, const char* help, uint64_t value) {
    out += std::string("# HELP ") + name + " " + help + "\n";
    out += std::string("# TYPE ") + name + " counter\n";
    line(out, "%s %llu\n", name, static_cast<unsigned long long>(value));
  };
  counter("rl_lease_taken_total", "Lease slices the store granted to this store's limiters.",
          leases.leases_taken);
  counter("rl_lease_units_leased_total", "Units in the slices granted.", leases.units_leased);
  counter("rl_lease_units_unused_total", "Units left in slices when their lease ended.",
          leases.units_unused);
  counter("rl_lease_units_returned_total", "Of the unused units, those handed back to the store.",
          leases.units_returned);
  counter("rl_lease_decisions_total", "Calls decided from a slice, with no store call.",
          leases.decisions);
  if (view.has_round_trips) {
    const LatencyHistogram& h = view.stats->round_trips;
    out += "# HELP rl_store_round_trip_seconds Store round trips (quantiles within 12.5%).\n";
    out += "# TYPE rl_store_round_trip_seconds summary\n";
    for (double q : {0.5, 0.95, 0.99}) {
      line(out, "rl_store_round_trip_seconds{quantile=\"%g\"} %.6f\n", q,
           static_cast<double>(h.quantile(q)) / 1e6);
    }
    line(out, "rl_store_round_trip_seconds_sum %.6f\n", static_cast<double>(h.sum()) / 1e6);
    line(out, "rl_store_round_trip_seconds_count %llu\n",
         static_cast<unsigned long long>(h.count()));
  }
  return out;
}

}  // namespace rl
