// Placeholder until the Redis store lands (issue 3).
#include "../store.h"

namespace rl {

std::shared_ptr<Store> open_redis_store(const Url&, const Settings&, std::unique_ptr<Clock>) {
  throw Error(Code::unsupported, "url: redis:// is not supported by this build yet");
}

}  // namespace rl
