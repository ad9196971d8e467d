// The part of the Redis module API (Redis 7.0 and later, Valkey 7.2 and
// later) this module calls, declared here rather than copied: each function
// is a pointer the server hands out by name (RedisModule_GetApi, whose
// address is the first word of the context at load). Constants carry the
// values of the server's redismodule.h.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {
struct RedisModuleCtx;
struct RedisModuleKey;
struct RedisModuleString;
struct RedisModuleCommand;
typedef int (*RedisModuleCmdFunc)(RedisModuleCtx* ctx, RedisModuleString** argv, int argc);
}

namespace rl::module {

inline constexpr int kOk = 0;
inline constexpr int kErr = 1;
inline constexpr int kApiVersion1 = 1;
inline constexpr int kRead = 1 << 0;
inline constexpr int kWrite = 1 << 1;
inline constexpr int kListHead = 0;
inline constexpr int kListTail = 1;
inline constexpr int kKeyTypeEmpty = 0;
inline constexpr int kKeyTypeString = 1;
inline constexpr int kKeyTypeList = 2;
inline constexpr long long kNoExpire = -1;
inline constexpr int kNotifyGeneric = 1 << 2;
inline constexpr int kNotifyString = 1 << 3;
inline constexpr int kNotifyList = 1 << 4;
inline constexpr const char* kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";

struct Api {
  int (*GetApi)(const char*, void*) = nullptr;
  void (*SetModuleAttribs)(RedisModuleCtx*, const char*, int, int) = nullptr;
  int (*IsModuleNameBusy)(const char*) = nullptr;
  int (*CreateCommand)(RedisModuleCtx*, const char*, RedisModuleCmdFunc, const char*, int, int,
                       int) = nullptr;
  RedisModuleCommand* (*GetCommand)(RedisModuleCtx*, const char*) = nullptr;
  int (*WrongArity)(RedisModuleCtx*) = nullptr;
  int (*ReplyWithLongLong)(RedisModuleCtx*, long long) = nullptr;
  int (*ReplyWithError)(RedisModuleCtx*, const char*) = nullptr;
  int (*ReplyWithArray)(RedisModuleCtx*, long) = nullptr;
  int (*ReplyWithStringBuffer)(RedisModuleCtx*, const char*, size_t) = nullptr;
  RedisModuleKey* (*OpenKey)(RedisModuleCtx*, RedisModuleString*, int) = nullptr;
  void (*CloseKey)(RedisModuleKey*) = nullptr;
  int (*KeyType)(RedisModuleKey*) = nullptr;
  size_t (*ValueLength)(RedisModuleKey*) = nullptr;
  int (*DeleteKey)(RedisModuleKey*) = nullptr;
  int (*StringSet)(RedisModuleKey*, RedisModuleString*) = nullptr;
  char* (*StringDMA)(RedisModuleKey*, size_t*, int) = nullptr;
  int (*StringTruncate)(RedisModuleKey*, size_t) = nullptr;
  long long (*GetAbsExpire)(RedisModuleKey*) = nullptr;
  int (*SetAbsExpire)(RedisModuleKey*, long long) = nullptr;
  int (*SetExpire)(RedisModuleKey*, long long) = nullptr;
  int (*ListPush)(RedisModuleKey*, int, RedisModuleString*) = nullptr;
  RedisModuleString* (*ListPop)(RedisModuleKey*, int) = nullptr;
  RedisModuleString* (*ListGet)(RedisModuleKey*, long) = nullptr;
  int (*ListSet)(RedisModuleKey*, long, RedisModuleString*) = nullptr;
  int (*ListDelete)(RedisModuleKey*, long) = nullptr;
  RedisModuleString* (*CreateString)(RedisModuleCtx*, const char*, size_t) = nullptr;
  RedisModuleString* (*CreateStringFromLongLong)(RedisModuleCtx*, long long) = nullptr;
  void (*FreeString)(RedisModuleCtx*, RedisModuleString*) = nullptr;
  const char* (*StringPtrLen)(const RedisModuleString*, size_t*) = nullptr;
  int (*Replicate)(RedisModuleCtx*, const char*, const char*, ...) = nullptr;
  int (*NotifyKeyspaceEvent)(RedisModuleCtx*, int, const char*, RedisModuleString*) = nullptr;
  // Optional: newer servers only (nullptr on older ones).
  int (*SetCommandACLCategories)(RedisModuleCommand*, const char*) = nullptr;  // 7.2
};

// Filled by bind(); the module's commands read it.
extern Api api;

// Resolves every function above; false when the server lacks a required one
// (`missing` names it).
bool bind(RedisModuleCtx* ctx, const char** missing);

}  // namespace rl::module
