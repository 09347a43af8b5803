// `attn examples` and `attn examples show NAME`.
#include <iterator>
#include <memory>
#include <string>

#include "attn/checkpoint.h"
#include "attn/error.h"
#include "attn/options.h"
#include "base/names.h"
#include "commands.h"
#include "commands/examples.h"
#include "console.h"
#include "flag_table.h"

namespace attn::cli {

namespace {

// The tiny models of data/models (installed in share/attn/models), every
// checkpoint directory and GGUF file; tests/cli_test.cc holds the lists
// equal to the directory.
const char* const kTinyCheckpoints[] = {
    "tiny-bert",
    "tiny-bert-f64",
    "tiny-cohere",
    "tiny-cohere-qknorm",
    "tiny-deepseek-v3",
    "tiny-deepseek-v3-lite",
    "tiny-deepseek-v3-nobias",
    "tiny-falcon",
    "tiny-falcon-mq",
    "tiny-gemma",
    "tiny-gemma2",
    "tiny-gemma2-softcap",
    "tiny-gemma3",
    "tiny-gpt-neox",
    "tiny-gpt-oss",
    "tiny-gpt2",
    "tiny-gpt2-ninner",
    "tiny-granite",
    "tiny-llama",
    "tiny-llama-bf16",
    "tiny-llama-bias",
    "tiny-llama-wide",
    "tiny-mistral",
    "tiny-mixtral",
    "tiny-olmo",
    "tiny-olmo2",
    "tiny-opt",
    "tiny-opt-post",
    "tiny-phi",
    "tiny-phi-qkln",
    "tiny-phi3",
    "tiny-phi3-long",
    "tiny-qwen2",
    "tiny-qwen2-moe",
    "tiny-qwen2-moe-sparse",
    "tiny-qwen2-text",
    "tiny-qwen3",
    "tiny-qwen3-moe",
    "tiny-qwen3-moe-sparse",
    "tiny-roberta",
    "tiny-smollm3",
    "tiny-stablelm",
    "tiny-stablelm-parallel",
    "tiny-starcoder2",
};
const char* const kTinyGgufs[] = {
    "tiny-cohere/model.gguf",
    "tiny-deepseek-v3-nobias/model.gguf",
    "tiny-falcon/model.gguf",
    "tiny-gemma/model.gguf",
    "tiny-gemma2-softcap/model.gguf",
    "tiny-gemma3/model.gguf",
    "tiny-gpt-neox/model.gguf",
    "tiny-gpt-oss/model.gguf",
    "tiny-gpt2-ninner/model.gguf",
    "tiny-granite/model.gguf",
    "tiny-llama-bias/model.gguf",
    "tiny-llama-wide-quant/model-Q4_0.gguf",
    "tiny-llama-wide-quant/model-Q4_K_M.gguf",
    "tiny-llama-wide-quant/model-Q8_0.gguf",
    "tiny-llama/model.gguf",
    "tiny-mistral/model.gguf",
    "tiny-mixtral/model.gguf",
    "tiny-olmo/model.gguf",
    "tiny-olmo2/model.gguf",
    "tiny-phi/model.gguf",
    "tiny-phi3-long/model.gguf",
    "tiny-phi3/model.gguf",
    "tiny-qwen2-moe-sparse/model.gguf",
    "tiny-qwen2-text/model.gguf",
    "tiny-qwen2/model.gguf",
    "tiny-qwen3-moe-sparse/model.gguf",
    "tiny-qwen3/model.gguf",
    "tiny-smollm3/model.gguf",
    "tiny-stablelm-parallel/model.gguf",
    "tiny-starcoder2/model.gguf",
};

// The names, comma separated and wrapped at 80 columns after `indent`.
std::string name_list(const char* const* names, size_t n, const std::string& indent) {
  std::string out, line = indent;
  for (size_t i = 0; i < n; ++i) {
    const std::string item = std::string(names[i]) + (i + 1 < n ? "," : "");
    if (line.size() > indent.size() && line.size() + 1 + item.size() > 80) {
      out += line + "\n";
      line = indent;
    }
    line += (line.size() > indent.size() ? " " : "") + item;
  }
  return out + line + "\n";
}

}  // namespace

Action add_examples(CLI::App& app) {
  auto name = std::make_shared<std::string>();
  CLI::App* ex = app.add_subcommand("examples", "list the built-in examples, or show one");
  ex->allow_extras();
  CLI::App* show = ex->add_subcommand("show", "print an example's input document");
  show->allow_extras();
  add(show, "name", *name)->required();
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
    out +=
        "\nlayers of Hugging Face checkpoints: attn run --checkpoint DIR --text \"...\" --layer N "
        "(--layer all for every one; --ids for token ids)\n";
    for (const ArchitectureInfo& a : architectures()) {
      out += "- " + a.name + ": " + a.tensors + "\n  config.json: " + a.fields + "\n";
    }
    out +=
        "tiny models to try, in share/attn/models where attn is installed, data/models in its "
        "source:\n  checkpoints (--checkpoint DIR):\n" +
        name_list(kTinyCheckpoints, std::size(kTinyCheckpoints), "    ") +
        "  GGUF files (--checkpoint FILE.gguf):\n" +
        name_list(kTinyGgufs, std::size(kTinyGgufs), "    ");
    console.out(out);
    (void)ex;
    return 0;
  };
}

}  // namespace attn::cli
