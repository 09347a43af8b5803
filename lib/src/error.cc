#include "attn/error.h"

namespace attn {

std::string at(std::string_view place, std::string_view what) {
  if (place.empty()) return std::string(what);
  std::string s(place);
  s += ": ";
  s += what;
  return s;
}

void throw_input(std::string_view place, std::string_view what) {
  throw Error(ErrorKind::kInput, at(place, what));
}

void throw_usage(std::string_view what) { throw Error(ErrorKind::kUsage, std::string(what)); }

void throw_file(std::string_view path, std::string_view what) {
  throw Error(ErrorKind::kFile, at(path, what));
}

void throw_internal(std::string_view what) {
  throw Error(ErrorKind::kInternal, "internal error: " + std::string(what));
}

}  // namespace attn
