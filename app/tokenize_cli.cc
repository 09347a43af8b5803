// `attn tokenize`: a tokenizer.json's ids and tokens for texts, as Hugging
// Face's tokenizers encodes them, or a GGUF file's, as llama.cpp does; the
// engine's Tokenizer does the work.
#include <memory>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/file_io.h"
#include "attn/tokenizer.h"
#include "commands.h"
#include "commands/flags.h"
#include "console.h"
#include "flag_table.h"
#include "io/json_writer.h"
#include "model/model_store.h"

namespace attn::cli {

// A file's text, or stdin's for "-": one text, without one final newline
// (as the shell's $(cat FILE) gives it).
std::string text_of_file(const std::string& path, int64_t max_bytes) {
  std::string s = read_file(path, {}, max_bytes);
  if (s.find('\0') != std::string::npos) {
    throw_input(display_name(path), "holds a NUL byte; a text to tokenize is UTF-8 text");
  }
  if (!s.empty() && s.back() == '\n') s.pop_back();
  if (!s.empty() && s.back() == '\r') s.pop_back();
  return s;
}

Action add_tokenize(CLI::App& app) {
  struct Flags {
    std::vector<std::string> texts;
    std::string tokenizer, checkpoint, text_file, format = "text";
    bool no_special = false, parse_special = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "tokenize",
      "the token ids and tokens of texts as a Hugging Face tokenizer.json encodes them, or as "
      "llama.cpp encodes them with a GGUF file's tokenizer");
  cmd->allow_extras();
  // The texts are the words CLI11 leaves over (cmd->remaining()), taken
  // as typed: a vector option would read "[CLS] x [SEP]" as a list of two.
  cmd->footer(
      "TEXT...: texts to encode, each one word of the command line (quote it); - reads one "
      "text from stdin; after -- a text may start with '-'.");
  add(cmd, "--tokenizer", f->tokenizer);
  add(cmd, "--checkpoint", f->checkpoint);
  add(cmd, "--text-file", f->text_file);
  add(cmd, "--no-special", f->no_special);
  add(cmd, "--parse-special", f->parse_special);
  add(cmd, "--format", f->format);
  return [f, cmd]() {
    // CLI11 leaves the words before -- to the command and those after it
    // (without the --) to the program: those are texts whatever they say.
    bool literal = false;
    for (const std::string& w : cmd->remaining()) {
      if (!literal && w == "--") {
        literal = true;
        continue;
      }
      if (!literal && w.size() > 1 && w[0] == '-') {
        throw_usage("tokenize: unknown option '" + w.substr(0, w.find('=')) +
                    "' (attn tokenize --help lists the options; a text that starts with - goes "
                    "after --)");
      }
      f->texts.push_back(w);
    }
    if (cmd->get_parent()) {
      for (const std::string& w : cmd->get_parent()->remaining()) f->texts.push_back(w);
    }
    if (!f->tokenizer.empty() && !f->checkpoint.empty()) {
      throw_usage("give --tokenizer or --checkpoint, not both");
    }
    const std::string path = f->tokenizer.empty() ? f->checkpoint : f->tokenizer;
    if (path.empty()) {
      throw_usage("tokenize needs --tokenizer FILE|DIR (or --checkpoint DIR)");
    }
    if (f->format != "text" && f->format != "json") {
      throw_usage("--format " + f->format + ": expected text or json");
    }
    std::vector<std::pair<std::string, std::string>> texts;  // source, text
    bool stdin_used = false;
    for (const std::string& t : f->texts) {
      if (t == "-") {
        if (stdin_used) throw_usage("- is given twice; stdin can be read once");
        stdin_used = true;
        texts.emplace_back("<stdin>", text_of_file("-"));
      } else {
        texts.emplace_back("text " + std::to_string(texts.size() + 1), t);
      }
    }
    if (!f->text_file.empty()) {
      texts.emplace_back(display_name(f->text_file), text_of_file(f->text_file));
    }
    if (texts.empty()) {
      throw_usage("nothing to tokenize; give TEXT..., - (stdin) or --text-file FILE");
    }
    const Tokenizer tok =
        f->checkpoint.empty() ? Tokenizer::load(path) : model::checkpoint_tokenizer(path);
    std::vector<Encoding> encodings;
    for (const auto& [source, text] : texts) {
      EncodeOptions o;
      o.add_special_tokens = !f->no_special;
      o.parse_special = f->parse_special;
      encodings.push_back(tok.encode(text, o, source));
    }
    std::string out;
    if (f->format == "json") {
      // One object a text, on its line; several texts as an array.
      const bool many = texts.size() > 1;
      JsonWriter w(out);
      if (many) w.begin_array(JsonLayout::kBlock);
      for (size_t i = 0; i < texts.size(); ++i) {
        w.begin_object(JsonLayout::kInline).key("text").string(texts[i].second);
        w.key("ids").begin_array(JsonLayout::kInline);
        for (int64_t id : encodings[i].ids) w.integer(id);
        w.end_array().key("tokens").strings(encodings[i].tokens).end_object();
      }
      if (many) w.end_array();
      out += '\n';
    } else {
      for (size_t i = 0; i < texts.size(); ++i) {
        if (texts.size() > 1) {
          out += (i ? "\n" : "") + terminal_text(json_string(texts[i].second)) + "\n";
        }
        const Encoding& e = encodings[i];
        for (size_t k = 0; k < e.ids.size(); ++k) {
          std::string id = std::to_string(e.ids[k]);
          if (id.size() < 7) id.insert(0, 7 - id.size(), ' ');
          // What the token reads as, spaces, newlines and tabs made visible.
          out += id + "  " + token_table_text(tok.readable(e.tokens[k])) + "\n";
        }
      }
    }
    StdConsole console;
    console.out(out);
    return 0;
  };
}

}  // namespace attn::cli
