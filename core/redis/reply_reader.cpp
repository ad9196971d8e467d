#include "reply_reader.h"

#include <hiredis/hiredis.h>

#include <new>
#include <string>

namespace rl::redis {
namespace {

// The reply objects hiredis's reader builds by default.
const redisReplyObjectFunctions& hiredis_functions() {
  static const redisReplyObjectFunctions fn = [] {
    redisReader* r = redisReaderCreate();
    if (r == nullptr) throw std::bad_alloc();
    const redisReplyObjectFunctions copy = *r->fn;
    redisReaderFree(r);
    return copy;
  }();
  return fn;
}

// hiredis hands createArray the announced count. A huge one is a calloc of
// gigabytes (hiredis 0.14: 16 GB for *2147483647) and a wait for billions of
// elements; a negative one is refused by patched hiredis 0.14 only (others
// build an array with no storage and a count near SIZE_MAX). Both are
// refused here: hiredis then stops with an error, and next() says why.
void* create_checked_array(const redisReadTask* task, int elements) {
  if (elements < 0 || elements > ReplyReader::kMaxArrayElements) {
    static_cast<ReplyReader*>(task->privdata)
        ->refuse("array of " + std::to_string(elements) + " elements");
    return nullptr;
  }
  return hiredis_functions().createArray(task, elements);
}

redisReplyObjectFunctions* checked_functions() {
  static redisReplyObjectFunctions fn = [] {
    redisReplyObjectFunctions f = hiredis_functions();
    f.createArray = create_checked_array;
    return f;
  }();
  return &fn;
}

Reply copy_reply(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_STRING: out.type = Reply::Type::string; break;
    case REDIS_REPLY_STATUS: out.type = Reply::Type::status; break;
    case REDIS_REPLY_ERROR: out.type = Reply::Type::error; break;
    case REDIS_REPLY_INTEGER: out.type = Reply::Type::integer; break;
    case REDIS_REPLY_ARRAY: out.type = Reply::Type::array; break;
    default: out.type = Reply::Type::nil; break;
  }
  if (r->str != nullptr) out.text.assign(r->str, r->len);
  out.integer = r->integer;
  out.elements.reserve(r->elements);
  for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(copy_reply(r->element[i]));
  return out;
}

// hiredis's error text, kept to printable ASCII.
std::string printable(std::string_view text) {
  std::string out;
  for (const char c : text) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

}  // namespace

ReplyReader::ReplyReader() {
  reset();
}

ReplyReader::~ReplyReader() {
  if (reader_ != nullptr) redisReaderFree(reader_);
}

void ReplyReader::reset() {
  if (reader_ != nullptr) redisReaderFree(reader_);
  reader_ = redisReaderCreateWithFunctions(checked_functions());
  if (reader_ == nullptr) throw std::bad_alloc();
  reader_->privdata = this;
  error_.clear();
  refused_.clear();
}

bool ReplyReader::drained() const {
  return !failed() && reader_->ridx == -1 && reader_->pos == reader_->len;
}

void ReplyReader::fail(std::string_view why) {
  error_ = "protocol error: ";
  error_ += why;
}

bool ReplyReader::feed(std::string_view bytes) {
  if (failed()) return false;
  if (redisReaderFeed(reader_, bytes.data(), bytes.size()) != REDIS_OK) {
    fail(printable(reader_->errstr));
    return false;
  }
  return true;
}

std::optional<Reply> ReplyReader::next() {
  if (failed()) return std::nullopt;
  void* raw = nullptr;
  if (redisReaderGetReply(reader_, &raw) != REDIS_OK) {
    fail(refused_.empty() ? printable(reader_->errstr) : refused_);
    return std::nullopt;
  }
  if (raw == nullptr) return std::nullopt;
  Reply reply = copy_reply(static_cast<const redisReply*>(raw));
  freeReplyObject(raw);
  return reply;
}

}  // namespace rl::redis
