// `attn models`: the models of Ollama's store and the Hugging Face hub's
// cache on this machine (commands/models.h writes them).
#include <memory>
#include <string>

#include "attn/error.h"
#include "commands.h"
#include "commands/models.h"
#include "console.h"
#include "flag_table.h"

namespace attn::cli {

Action add_models(CLI::App& app) {
  auto format = std::make_shared<std::string>("table");
  CLI::App* cmd = app.add_subcommand(
      "models",
      "list the models of Ollama's store and of the Hugging Face cache on this machine (names "
      "for --checkpoint)");
  add(cmd, "--format", *format);
  return [format]() {
    if (*format != "table" && *format != "json") {
      throw_usage("--format " + *format + ": expected table or json");
    }
    const model::StoreListing listing = model::list_store_models();
    StdConsole console;
    console.out(*format == "json" ? detail::models_json(listing) : detail::models_table(listing));
    return 0;
  };
}

}  // namespace attn::cli
