// The run settings, one row each: a setting's document key, its flag and
// placeholder, its help, its choices, how it parses from a flag's text and
// from a document's JSON, and how a later source (the flags) overrides an
// earlier one (the document). The document reader, the flags of attn run
// and attn bench, --help, both completions (app/flag_docs.cc writes them
// from these rows and app/flag_table.cc's), and through --help the manual
// page and docs/cli.md (which tests compare with it) all come from here.
// docs/architecture.md lists what else a new setting touches.
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "attn/json.h"
#include "attn/options.h"
#include "base/names.h"

namespace attn {

// A JSON value and where it is, for messages: `path` is the JSON path
// inside the document `source` ("rope.theta"). The checks throw input
// errors naming "source: path". It refers to `v` and `source`: both must
// outlive it (json::Value::element() returns a copy; keep it in a local).
struct JsonAt {
  const json::Value& v;
  const std::string& source;
  std::string path;

  [[noreturn]] void fail(const std::string& what) const;
  JsonAt at(const json::Value& child, const std::string& child_path) const {
    return JsonAt{child, source, child_path};
  }
  double number() const;           // a finite number
  double extended_number() const;  // a number, or "-inf"/"inf" as a string
  // A number, or a non-empty array of finite numbers; `forms` words both.
  std::vector<double> numbers(const std::string& forms) const;
  int64_t count() const;  // an integer >= 0
  std::string string() const;
  template <class P>
  auto enumeration(P parse, const std::vector<std::string>& names) const ->
      typename std::invoke_result_t<P, std::string_view>::value_type {
    if (!v.is_string()) fail("expected a string, got " + json::describe(v));
    auto e = parse(v.as_string());
    if (!e) fail(not_one_of(v.as_string(), names));
    return *e;
  }
};

// The message for an unknown key: the closest accepted key, and the list
// when none is close.
std::string unknown_key(const std::string& key, const std::vector<std::string>& accepted);

// Flag text: each throws a usage error "FLAG: what".
[[noreturn]] void bad_flag(std::string_view flag, const std::string& what);
double flag_number(std::string_view flag, const std::string& text);
template <class P>
auto flag_choice(std::string_view flag, const std::string& text, P parse,
                 const std::vector<std::string>& names) ->
    typename std::invoke_result_t<P, std::string_view>::value_type {
  auto v = parse(text);
  if (!v) bad_flag(flag, not_one_of(text, names));
  return *v;
}

struct Setting {
  // The document key; "rope.theta" is the key theta of rope's object; ""
  // when no document key sets it (--sliding-window).
  std::string_view key;
  // The flag; "" when only a document sets it (rope.scaling).
  std::string_view flag;
  // How the flag takes its value: kValue "--heads 4"; kSwitch "--rope",
  // "--rope=false" (and the other words CLI11 reads as a boolean: off, no,
  // ...; from_text then gets "" or "false"); kSwitchOrWord "--causal",
  // "--causal=bottom-right" (from_text gets the word, "true" when alone).
  enum class Form { kValue, kSwitch, kSwitchOrWord } form = Form::kValue;
  std::string_view placeholder;  // "N", "X", "NAME"; as in docs/cli.md and the manual page
  std::string_view help;         // ends with the default: "(default 1)"
  // The accepted names (empty for free-form values): for --help and the
  // completions, which read them after the help's ": ".
  const std::vector<std::string>& (*choices)() = nullptr;
  bool bench = false;  // attn bench takes the flag too
  // Another flag that sets the same field ("--window" for
  // --sliding-window): giving both is a usage error, not a silent choice.
  std::string_view same_as;
  // Sets the setting from the flag's text (a switch given alone: "").
  void (*from_text)(RunSettings& s, const std::string& text) = nullptr;
  // Sets the setting from the document's value.
  void (*from_json)(RunSettings& s, const JsonAt& at) = nullptr;
  // Copies what `over` sets into `into`; nullptr for a row whose fields
  // another row merges (--sliding-window and --window share `window`).
  void (*merge)(RunSettings& into, const RunSettings& over) = nullptr;
  // The "modern" column: a setting of today's attention, which only the
  // variants the fast kernel computes take; `modern` is the document key a
  // refusal names ("rope" for every rope row), `given` whether a run sets
  // it. Empty and nullptr for the others.
  std::string_view modern;
  bool (*given)(const RunSettings& s) = nullptr;
};

// Every setting, in the order of --help (switches are listed after the
// options there) and of the document's keys.
const std::vector<Setting>& settings_table();

// The row of a flag ("--heads") or a document key ("heads", "rope.theta");
// nullptr when there is none.
const Setting* setting_of_flag(std::string_view flag);
const Setting* setting_of_key(std::string_view key);

// The keys of rope's object, in table order: theta, dims, layout, ...
const std::vector<std::string>& rope_keys();

}  // namespace attn
