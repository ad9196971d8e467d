// The HTTP header fields of one limiter's decisions (rl_headers_render,
// docs/http-headers.md), for the middlewares: the limiter's name and limits
// are read from JS and held in C once, when the renderer is made, so that a
// request's fields take no marshalling of them (re-reading them per call was
// 0.21 of the 0.52 samples the Fastify plugin added in a profile).
#pragma once

#include <napi.h>
#include <rl/rl.h>

#include <string>
#include <vector>

namespace rlnode {

class HeaderRenderer {
 public:
  // headerRendererNew(name, [{ limit, windowUs }, ...]) -> renderer handle
  static Napi::Value New(const Napi::CallbackInfo& info);
  // headerRendererRender(renderer) -> the field values of the decision in
  // the `decision` export (pending_call.h's order, as a sync call leaves
  // it): null when no field is sent (a fail_open decision); the RateLimit
  // value alone when it is the only field besides a RateLimit-Policy the
  // same as this renderer last returned (an admission); else the values
  // indexed by rl_header, null where a field is not sent and a hole for a
  // RateLimit-Policy the same as last returned. The decision goes through
  // the shared Float64Array rather than as arguments (six numbers read in
  // C, not six N-API calls), and a request makes one JS string, not three
  // and an array (each N-API element set cost about 1,000 instructions).
  static Napi::Value Render(const Napi::CallbackInfo& info);

 private:
  HeaderRenderer(std::string name, std::vector<rl_limit_info> limits, const double* decision)
      : name_(std::move(name)), limits_(std::move(limits)), decision_(decision) {}

  std::string name_;
  std::vector<rl_limit_info> limits_;
  // The `decision` export's memory in the renderer's environment (it never
  // moves): no napi_get_instance_data per request.
  const double* decision_;
  // The RateLimit-Policy value last returned to JS (sent_policy_: one was).
  std::string policy_;
  bool sent_policy_ = false;
};

}  // namespace rlnode
