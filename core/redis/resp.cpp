#include "resp.h"

#include <charconv>

namespace rl::redis {
namespace {

size_t decimal_digits(size_t n) {
  size_t digits = 1;
  for (; n >= 10; n /= 10) ++digits;
  return digits;
}

void append_decimal(std::string& out, size_t n) {
  char digits[20];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out.append(digits, end);
}

}  // namespace

size_t resp_header_size(size_t argc) {
  return 1 + decimal_digits(argc) + 2;
}

size_t resp_argument_size(size_t length) {
  return 1 + decimal_digits(length) + 2 + length + 2;
}

void append_resp_header(std::string& out, size_t argc) {
  out += '*';
  append_decimal(out, argc);
  out += "\r\n";
}

void append_resp_argument(std::string& out, std::string_view argument) {
  out += '$';
  append_decimal(out, argument.size());
  out += "\r\n";
  out += argument;
  out += "\r\n";
}

std::string format_command(const std::vector<std::string_view>& args) {
  size_t bytes = resp_header_size(args.size());
  for (std::string_view a : args) bytes += resp_argument_size(a.size());
  std::string out;
  out.reserve(bytes);
  append_resp_header(out, args.size());
  for (std::string_view a : args) append_resp_argument(out, a);
  return out;
}

}  // namespace rl::redis
