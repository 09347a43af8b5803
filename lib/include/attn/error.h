// Errors: the one exception type of the library, attn::Error, carrying the
// kind of the failure (which decides the program's exit code) and a one-line
// message that already names the place ("input.json:3:17: ...",
// "input.json: params.W_q: ...").
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace attn {

// What went wrong (the program turns each into its exit code).
enum class ErrorKind {
  kUsage,     // bad flag, missing argument, conflicting options
  kInput,     // invalid input data: parse error, bad shape, unknown key
  kFile,      // cannot open, read or write a file
  kInternal,  // a bug
};

class Error : public std::runtime_error {
 public:
  // A NUL byte in the message is written \u0000: what() is a C string,
  // and a printer would stop at the NUL.
  Error(ErrorKind kind, std::string message)
      : std::runtime_error(without_nul(std::move(message))), kind_(kind) {}

  ErrorKind kind() const { return kind_; }

 private:
  static std::string without_nul(std::string message);
  ErrorKind kind_;
};

// Builds "place: what" (or just "what" when place is empty) as an input error.
[[noreturn]] void throw_input(std::string_view place, std::string_view what);
[[noreturn]] void throw_usage(std::string_view what);
[[noreturn]] void throw_file(std::string_view path, std::string_view what);
[[noreturn]] void throw_internal(std::string_view what);

// Text from an input, made safe and short for a one-line message: at most
// 60 characters (then "..."), control characters and invalid UTF-8 written as
// \n, \t, \u0000 or \xff. Without quotes around it.
std::string message_text(std::string_view s);

// Joins a place and a message: "a.json: X" + "bad" -> "a.json: X: bad".
std::string at(std::string_view place, std::string_view what);

}  // namespace attn
