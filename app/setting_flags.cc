// The run settings' flags, from the settings table: attn run and attn bench
// bind the same rows the same way, so a setting's flag, placeholder, help
// and choices are written once (lib/src/io/settings.cc).
#include <map>
#include <memory>
#include <string>

#include "attn/error.h"
#include "commands.h"
#include "io/settings.h"

namespace attn::cli {

std::function<void(RunSettings&)> add_setting_flags(CLI::App* app, const std::string& group,
                                                    bool bench_only) {
  auto texts = std::make_shared<std::map<std::string, std::string>>();  // flag -> text
  auto wanted = [bench_only](const Setting& s) {
    return !s.flag.empty() && s.from_text != nullptr && (s.bench || !bench_only);
  };
  for (const Setting& s : settings_table()) {
    if (!wanted(s) || s.form != Setting::Form::kValue) continue;
    std::string help(s.help);
    if (s.choices != nullptr) {
      // The choices follow the help after ": ", where the completion tests
      // read them.
      help += ": ";
      const std::vector<std::string>& names = s.choices();
      for (size_t i = 0; i < names.size(); ++i) help += (i ? "|" : "") + names[i];
    }
    const std::string flag(s.flag);
    app->add_option(flag, (*texts)[flag], help)
        ->group(group)
        ->type_name(std::string(s.placeholder));
  }
  // Switches after the options: "--rope" alone, "--rope=false" (CLI11
  // reads the word as a boolean), "--causal=bottom-right" (cli.cc joins
  // "--causal bottom-right").
  auto on = std::make_shared<std::map<std::string, bool>>();  // flag -> switch
  for (const Setting& s : settings_table()) {
    if (!wanted(s) || s.form == Setting::Form::kValue) continue;
    const std::string flag(s.flag);
    if (s.form == Setting::Form::kSwitch) {
      app->add_flag(flag, (*on)[flag], std::string(s.help))->group(group);
    } else {
      app->add_flag(flag, (*texts)[flag], std::string(s.help))->group(group);
    }
  }
  return [app, texts, on](RunSettings& settings) {
    // Counted only where the command has both flags (attn bench has one).
    auto given = [app](std::string_view flag) {
      const CLI::Option* o = app->get_option_no_throw(std::string(flag));
      return o != nullptr && o->count() > 0;
    };
    for (const Setting& s : settings_table()) {
      if (!s.same_as.empty() && given(s.flag) && given(s.same_as)) {
        throw_usage(std::string(s.flag) + " and " + std::string(s.same_as) +
                    " set the same thing; give one");
      }
    }
    for (const auto& [flag, text] : *texts) {
      if (app->count(flag) > 0) setting_of_flag(flag)->from_text(settings, text);
    }
    for (const auto& [flag, value] : *on) {
      if (app->count(flag) > 0) setting_of_flag(flag)->from_text(settings, value ? "" : "false");
    }
  };
}

}  // namespace attn::cli
