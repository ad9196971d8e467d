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
  // it), indexed by rl_header, a hole where a field is not sent; null when
  // none is (a fail_open decision). The decision goes through the shared
  // Float64Array rather than as arguments: six numbers read in C, not six
  // N-API calls.
  static Napi::Value Render(const Napi::CallbackInfo& info);

 private:
  HeaderRenderer(std::string name, std::vector<rl_limit_info> limits, const double* decision)
      : name_(std::move(name)), limits_(std::move(limits)), decision_(decision) {}

  std::string name_;
  std::vector<rl_limit_info> limits_;
  // The `decision` export's memory in the renderer's environment (it never
  // moves): no napi_get_instance_data per request.
  const double* decision_;
};

}  // namespace rlnode
