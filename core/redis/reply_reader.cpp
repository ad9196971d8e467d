#include "reply_reader.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <utility>

namespace rl::redis {
namespace {

// Longest number line: "-9223372036854775808".
constexpr size_t kMaxNumberBytes = 20;
// Elements reserved up front for an array: its count as announced, up to
// this many, so that a few bytes announcing arrays reserve little.
constexpr long long kMaxReserve = 1024;
// A buffer grown past this is given back once it is empty.
constexpr size_t kKeptBuffer = 256 * 1024;

enum class Line { found, more, too_long };

// Where the line at the start of `s` ends ("\r\n"), if it came: its length
// in `length`. A line of at most `max` bytes ends within its first max + 2,
// so a longer one is known as soon as that many came, with its end or not.
Line find_line(std::string_view s, size_t max, size_t& length) {
  const std::string_view window = s.substr(0, max + 2);
  for (size_t at = 0; at < window.size();) {
    const void* cr = std::memchr(window.data() + at, '\r', window.size() - at);
    if (cr == nullptr) break;
    at = static_cast<size_t>(static_cast<const char*>(cr) - window.data());
    if (at + 1 == window.size()) break;  // its '\n' may come next
    if (window[at + 1] == '\n') {
      length = at;
      return Line::found;
    }
    ++at;
  }
  return s.size() >= max + 2 ? Line::too_long : Line::more;
}

// A number as hiredis reads one: an optional '-', then digits without a
// leading zero ("0" alone excepted; no "-0", no '+'), within 64 bits.
bool parse_number(std::string_view s, long long& out) {
  if (s == "0") {
    out = 0;
    return true;
  }
  const bool negative = !s.empty() && s[0] == '-';
  if (negative) s.remove_prefix(1);
  if (s.empty() || s[0] < '1' || s[0] > '9') return false;
  unsigned long long v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    const auto digit = static_cast<unsigned long long>(c - '0');
    if (v > (ULLONG_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  if (negative) {
    if (v > static_cast<unsigned long long>(LLONG_MAX) + 1) return false;
    out = static_cast<long long>(0 - v);  // modular: -2^63 included
  } else {
    if (v > static_cast<unsigned long long>(LLONG_MAX)) return false;
    out = static_cast<long long>(v);
  }
  return true;
}

// hiredis's message for a byte that starts no reply, the byte shown as C
// would write it.
std::string type_byte_error(char byte) {
  char shown[8];
  switch (byte) {
    case '\\':
    case '"': std::snprintf(shown, sizeof shown, "\"\\%c\"", byte); break;
    case '\n': std::snprintf(shown, sizeof shown, "\"\\n\""); break;
    case '\r': std::snprintf(shown, sizeof shown, "\"\\r\""); break;
    case '\t': std::snprintf(shown, sizeof shown, "\"\\t\""); break;
    case '\a': std::snprintf(shown, sizeof shown, "\"\\a\""); break;
    case '\b': std::snprintf(shown, sizeof shown, "\"\\b\""); break;
    default:
      if (byte >= 0x20 && byte < 0x7f) {
        std::snprintf(shown, sizeof shown, "\"%c\"", byte);
      } else {
        std::snprintf(shown, sizeof shown, "\"\\x%02x\"", static_cast<unsigned char>(byte));
      }
  }
  return std::string("Protocol error, got ") + shown + " as reply type byte";
}

}  // namespace

void ReplyReader::reset() {
  buffer_.clear();
  if (buffer_.capacity() > kKeptBuffer) buffer_.shrink_to_fit();
  pos_ = 0;
  root_ = Reply{};
  depth_ = 0;
  error_.clear();
}

void ReplyReader::fail(std::string_view why) {
  error_ = "protocol error: ";
  error_ += why;
  buffer_.clear();
  pos_ = 0;
  root_ = Reply{};
  depth_ = 0;
}

bool ReplyReader::feed(std::string_view bytes) {
  if (failed()) return false;
  // What was read leaves the buffer: what stays is one item's start at most.
  if (pos_ == buffer_.size()) {
    buffer_.clear();
    if (buffer_.capacity() > kKeptBuffer && bytes.size() <= kKeptBuffer) buffer_.shrink_to_fit();
  } else if (pos_ > 0) {
    buffer_.erase(0, pos_);
  }
  pos_ = 0;
  buffer_.append(bytes);
  return true;
}

ReplyReader::Item ReplyReader::read_item(Reply& out, long long& count) {
  if (pos_ == buffer_.size()) return Item::more;
  const char type = buffer_[pos_];
  const std::string_view rest = std::string_view(buffer_).substr(pos_ + 1);
  size_t length = 0;
  switch (type) {
    case '+':
    case '-': {
      const Line line = find_line(rest, kMaxLineBytes, length);
      if (line == Line::more) return Item::more;
      if (line == Line::too_long) {
        fail(std::string(type == '+' ? "a status" : "an error") + " line over " +
             std::to_string(kMaxLineBytes) + " bytes");
        return Item::failed;
      }
      out.type = type == '+' ? Reply::Type::status : Reply::Type::error;
      out.text.assign(rest.data(), length);
      pos_ += 1 + length + 2;
      return Item::done;
    }
    case ':': {
      const Line line = find_line(rest, kMaxNumberBytes, length);
      if (line == Line::more) return Item::more;
      long long value = 0;
      if (line == Line::too_long || !parse_number(rest.substr(0, length), value)) {
        fail("Bad integer value");
        return Item::failed;
      }
      out.type = Reply::Type::integer;
      out.integer = value;
      pos_ += 1 + length + 2;
      return Item::done;
    }
    case '$': {
      const Line line = find_line(rest, kMaxNumberBytes, length);
      if (line == Line::more) return Item::more;
      long long size = 0;
      if (line == Line::too_long || !parse_number(rest.substr(0, length), size)) {
        fail("Bad bulk string length");
        return Item::failed;
      }
      if (size < -1) {
        fail("Bulk string length out of range");
        return Item::failed;
      }
      if (size > kMaxBulkBytes) {
        fail("bulk string of " + std::to_string(size) + " bytes");
        return Item::failed;
      }
      if (size == -1) {
        out.type = Reply::Type::nil;
        pos_ += 1 + length + 2;
        return Item::done;
      }
      const size_t body = length + 2;
      const auto bytes = static_cast<size_t>(size);
      // As hiredis, the 2 bytes after the string are skipped unread.
      if (rest.size() < body + bytes + 2) return Item::more;
      out.type = Reply::Type::string;
      out.text.assign(rest.data() + body, bytes);
      pos_ += 1 + body + bytes + 2;
      return Item::done;
    }
    case '*': {
      if (depth_ == kMaxDepth) {
        fail("No support for nested multi bulk replies with depth > 7");
        return Item::failed;
      }
      const Line line = find_line(rest, kMaxNumberBytes, length);
      if (line == Line::more) return Item::more;
      long long elements = 0;
      if (line == Line::too_long || !parse_number(rest.substr(0, length), elements)) {
        fail("Bad multi-bulk length");
        return Item::failed;
      }
      if (elements < -1 || elements > INT_MAX) {
        fail("Multi-bulk length out of range");
        return Item::failed;
      }
      if (elements > kMaxArrayElements) {
        fail("array of " + std::to_string(elements) + " elements");
        return Item::failed;
      }
      out.type = elements == -1 ? Reply::Type::nil : Reply::Type::array;
      count = std::max(elements, 0ll);
      pos_ += 1 + length + 2;
      return Item::done;
    }
    default: fail(type_byte_error(type)); return Item::failed;
  }
}

bool ReplyReader::place(Reply&& item, long long count) {
  Reply* slot = &root_;
  if (depth_ == 0) {
    root_ = std::move(item);
  } else {
    Open& parent = open_[depth_ - 1];
    parent.array->elements.push_back(std::move(item));
    slot = &parent.array->elements.back();
    --parent.left;
  }
  if (count > 0) {
    slot->elements.reserve(static_cast<size_t>(std::min(count, kMaxReserve)));
    open_[depth_++] = Open{slot, count};
    return false;
  }
  while (depth_ > 0 && open_[depth_ - 1].left == 0) --depth_;
  return depth_ == 0;
}

std::optional<Reply> ReplyReader::next() {
  if (failed()) return std::nullopt;
  for (;;) {
    Reply item;
    long long count = 0;
    if (read_item(item, count) != Item::done) return std::nullopt;
    if (depth_ == 0 && count == 0) return item;
    if (place(std::move(item), count)) return std::move(root_);
  }
}

}  // namespace rl::redis
