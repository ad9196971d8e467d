#include "module_api.h"

namespace rl::module {

Api api;

namespace {

template <class F>
bool get(const char* name, F& slot) {
  return api.GetApi(name, reinterpret_cast<void*>(&slot)) == kOk && slot != nullptr;
}

}  // namespace

bool bind(RedisModuleCtx* ctx, const char** missing) {
  // The server puts RedisModule_GetApi's address first in the load context.
  api.GetApi = reinterpret_cast<int (*)(const char*, void*)>(reinterpret_cast<void**>(ctx)[0]);
#define RL_REQUIRE(name)                      \
  if (!get("RedisModule_" #name, api.name)) { \
    *missing = "RedisModule_" #name;          \
    return false;                             \
  }
  RL_REQUIRE(SetModuleAttribs)
  RL_REQUIRE(IsModuleNameBusy)
  RL_REQUIRE(CreateCommand)
  RL_REQUIRE(GetCommand)
  RL_REQUIRE(WrongArity)
  RL_REQUIRE(ReplyWithLongLong)
  RL_REQUIRE(ReplyWithError)
  RL_REQUIRE(ReplyWithArray)
  RL_REQUIRE(ReplyWithStringBuffer)
  RL_REQUIRE(OpenKey)
  RL_REQUIRE(CloseKey)
  RL_REQUIRE(KeyType)
  RL_REQUIRE(ValueLength)
  RL_REQUIRE(DeleteKey)
  RL_REQUIRE(StringSet)
  RL_REQUIRE(StringDMA)
  RL_REQUIRE(StringTruncate)
  RL_REQUIRE(GetAbsExpire)
  RL_REQUIRE(SetAbsExpire)
  RL_REQUIRE(SetExpire)
  RL_REQUIRE(ListPush)
  RL_REQUIRE(ListPop)
  RL_REQUIRE(ListGet)
  RL_REQUIRE(ListSet)
  RL_REQUIRE(ListDelete)
  RL_REQUIRE(CreateString)
  RL_REQUIRE(CreateStringFromLongLong)
  RL_REQUIRE(FreeString)
  RL_REQUIRE(StringPtrLen)
  RL_REQUIRE(Replicate)
  RL_REQUIRE(NotifyKeyspaceEvent)
#undef RL_REQUIRE
  get("RedisModule_SetCommandACLCategories", api.SetCommandACLCategories);
  return true;
}

}  // namespace rl::module
