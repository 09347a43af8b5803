// The files a command reads, so that none of its outputs replaces one: an
// output named like an input, a link to it, or a hard link of it is
// refused before anything is read (docs/errors.md, "Output files").
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attn {

struct Font;

class InputFiles {
 public:
  // A path, "-" (stdin: nothing to guard) or FILE.safetensors:NAME /
  // FILE.npz:NAME (the file part).
  void add(const std::string& spec);
  // Every regular file in a checkpoint's directory (config.json, the
  // safetensors files, their index, the tokenizer), or a checkpoint file
  // and the config.json beside it.
  void add_checkpoint(const std::string& path);
  // The file of a --font (nothing for the built-in one).
  void add_font(const std::shared_ptr<const Font>& font);
  // A usage error "FLAG OUT: refusing to overwrite the input file IN" when
  // writing `out` would replace one of the inputs; nothing for "" and "-".
  void refuse_output(const std::string& out, const std::string& flag) const;

 private:
  struct File {
    std::string path;  // as given, for the message
    dev_t dev = 0;
    ino_t ino = 0;
    bool exists = false;
  };
  void add_file(const std::string& path);
  std::vector<File> files_;
};

}  // namespace attn
