// Admissions across a failover, counted key by key (the Sentinel and Cluster
// failover figures): each key (limit 1/h) is decided once, so an admitted
// key holds a state that the master serving it afterwards must know, and a
// call that fails must fail as an outage or a timeout.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "error.h"
#include "limiter.h"

namespace rl::test {

class AdmissionLedger {
 public:
  explicit AdmissionLedger(Limiter& limiter) : limiter_(limiter) {}

  // Decides `key` once; whether the call was decided (and so admitted).
  bool decide(const std::string& key) {
    ++calls_;
    const Outcome o = limiter_.run(Op::acquire, key, 1);
    if (o.code == Code::ok) {
      EXPECT_TRUE(o.verdict.allowed) << key;
      admitted_.push_back(key);
      return true;
    }
    EXPECT_TRUE(o.code == Code::backend_unavailable || o.code == Code::timeout) << o.message;
    ++failures_[code_name(static_cast<int>(o.code))];
    failed_.push_back(key);
    return false;
  }

  size_t calls() const { return calls_; }
  const std::vector<std::string>& admitted() const { return admitted_; }
  const std::vector<std::string>& failed() const { return failed_; }

  // "A of N decisions admitted, L of them lost by the new master; F failed
  // (STATUS xK ... C of them counted by the new master all the same)".
  void describe(std::ostream& out, int64_t lost, int64_t counted_anyway) const {
    out << admitted_.size() << " of " << calls_ << " decisions admitted, " << lost
        << " of them lost by the new master; " << failed_.size() << " failed (";
    for (const auto& [status, count] : failures_) out << status << " x" << count << " ";
    out << counted_anyway << " of them counted by the new master all the same)";
  }

 private:
  Limiter& limiter_;
  size_t calls_ = 0;
  std::vector<std::string> admitted_;
  std::vector<std::string> failed_;
  std::map<std::string, int> failures_;
};

}  // namespace rl::test
