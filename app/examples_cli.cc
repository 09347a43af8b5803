// `attn examples` and `attn examples show NAME`.
#include <memory>

#include "attn/checkpoint.h"
#include "attn/error.h"
#include "attn/options.h"
#include "base/names.h"
#include "commands.h"
#include "commands/examples.h"
#include "console.h"

namespace attn::cli {

Action add_examples(CLI::App& app) {
  auto name = std::make_shared<std::string>();
  CLI::App* ex = app.add_subcommand("examples", "list the built-in examples, or show one");
  ex->allow_extras();
  CLI::App* show = ex->add_subcommand("show", "print an example's input document");
  show->allow_extras();
  show->add_option("name", *name, "example name")->required();
  return [ex, show, name]() {
    StdConsole console;
    if (show->parsed()) {
      const Example* e = find_example(*name);
      if (!e) throw_usage("examples show: " + not_one_of(*name, example_names()));
      const std::string text = e->text();
      console.out(text);
      if (text.empty() || text.back() != '\n') console.out("\n");
      return 0;
    }
    size_t width = 0;
    for (const Example& e : examples()) width = std::max(width, e.name.size());
    std::string out;
    for (const Example& e : examples()) {
      out += e.name + std::string(width - e.name.size() + 2, ' ') + e.title + "\n";
    }
    out += "\nrun one with: attn run --example NAME   (attn examples show NAME prints it)\n";
    // Real models: what --checkpoint maps, so a user knows before trying.
    out += "\nlayers of Hugging Face checkpoints: attn run --checkpoint DIR --layer N --x FILE\n";
    for (const ArchitectureInfo& a : architectures()) {
      out += "- " + a.name + ": " + a.tensors + "\n  config.json: " + a.fields + "\n";
    }
    out +=
        "tiny models to try: share/attn/models where attn is installed, data/models in its "
        "source (tiny-llama, tiny-llama-bf16, tiny-gpt2, tiny-bert)\n";
    console.out(out);
    (void)ex;
    return 0;
  };
}

}  // namespace attn::cli
