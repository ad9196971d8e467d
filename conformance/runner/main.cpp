// rl_conformance: runs the conformance cases (conformance/README.md) on one
// store and prints one line per case and a final "N passed, N failed".
//   rl_conformance [--url URL] [--alternate-url URL2] file.yaml...
// URL defaults to memory://. Every case gets a fresh store opened from URL
// with clock=manual; a Redis store also gets a key prefix of its own, so
// cases never see each other's keys. With --alternate-url every case also
// opens URL2 with the same prefix, and its decisions alternate between the
// two stores call by call (the module and the Lua path: docs/redis-module.md;
// suppressed cases run on URL alone, their draws being each limiter's own,
// and so do cases whose limiter leases: a slice is one limiter's own, and
// the other store's limiter, like another process, holds none of it;
// and so do cases of several processes, each already a limiter of its own).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "case_runner.h"

namespace {

// Whether a case's limiter takes leases (lease=auto): its calls decide from
// slices that one limiter holds.
bool leases(const YAML::Node& c) {
  const YAML::Node limiter = c.IsMap() ? c["limiter"] : YAML::Node();
  return limiter.IsMap() && limiter["lease"] && limiter["lease"].IsScalar() &&
         limiter["lease"].Scalar() != "off";
}

// Whether a case runs several limiters (processes): each is its own, so the
// case runs on URL alone as a leasing one does.
bool several_processes(const YAML::Node& c) {
  const YAML::Node processes = c.IsMap() ? c["processes"] : YAML::Node();
  return processes && processes.IsScalar() && processes.Scalar() != "1";
}

struct Tally {
  int passed = 0;
  int failed = 0;
};

// The URL one case opens: clock=manual, plus a prefix unique to the run and
// the case for a shared server.
std::string case_url(const std::string& base, int case_number) {
  std::string url = base + (base.find('?') == std::string::npos ? "?" : "&") + "clock=manual";
  if (base.rfind("redis", 0) == 0) {
    static const long long run = std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
    url += "&prefix=ct" + std::to_string(getpid()) + "x" + std::to_string(run) + "n" +
           std::to_string(case_number);
  }
  return url;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void report(Tally& tally, const std::string& file, const std::string& name,
            const std::string& failure) {
  if (failure.empty()) {
    ++tally.passed;
    std::cout << "ok   " << file << ": " << name << "\n";
  } else {
    ++tally.failed;
    std::cout << "FAIL " << file << ": " << name << ": " << failure << "\n";
  }
}

void run_file(const conformance::Schema& schema, const std::string& path,
              const std::string& base_url, const std::string& alternate_url, Tally& tally) {
  const std::string file = base_name(path);
  YAML::Node cases;
  try {
    cases = YAML::LoadFile(path)["cases"];
  } catch (const YAML::Exception& e) {
    return report(tally, file, "(file)", std::string("cannot read: ") + e.what());
  }
  if (!cases.IsSequence()) return report(tally, file, "(file)", "no 'cases:' list");
  std::set<std::string> names;
  for (const YAML::Node& c : cases) {
    const std::string name = c.IsMap() && c["name"] ? c["name"].Scalar() : "(unnamed)";
    std::string failure;
    if (!names.insert(name).second) {
      failure = "bad case: the name is used twice in this file";
    } else {
      try {
        const int number = tally.passed + tally.failed;
        const bool alternates = !alternate_url.empty() && file != "suppressed.yaml" && !leases(c) &&
                                !several_processes(c);
        failure = conformance::run_case(schema, c, case_url(base_url, number),
                                        alternates ? case_url(alternate_url, number) : "");
      } catch (const conformance::BadCase& e) {
        failure = std::string("bad case: ") + e.what();
      } catch (const YAML::Exception& e) {
        failure = std::string("bad case: ") + e.what();
      }
    }
    report(tally, file, name, failure);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string url = "memory://";
  std::string alternate_url;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--url" && i + 1 < argc) {
      url = argv[++i];
    } else if (arg.rfind("--url=", 0) == 0) {
      url = arg.substr(6);
    } else if (arg == "--alternate-url" && i + 1 < argc) {
      alternate_url = argv[++i];
    } else if (arg.rfind("-", 0) == 0) {
      std::cerr << "usage: rl_conformance [--url URL] [--alternate-url URL2] file.yaml...\n";
      return 2;
    } else {
      files.push_back(arg);
    }
  }
  // The case format, from the source tree (conformance/schema/schema.yaml).
  const conformance::Schema schema(RL_CONFORMANCE_SCHEMA);
  Tally tally;
  for (const std::string& f : files) run_file(schema, f, url, alternate_url, tally);
  std::cout << tally.passed << " passed, " << tally.failed << " failed\n";
  return tally.failed == 0 && tally.passed > 0 ? 0 : 1;
}
