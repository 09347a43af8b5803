// attn_flag_docs: the completion scripts of data/completions/ and the entry
// headings of the manual page (docs/attn.1), written from the flag and
// settings tables (flag_docs.h).
//
//   attn_flag_docs write SOURCE_DIR   rewrite them (scripts/dev.sh generate)
//   attn_flag_docs check SOURCE_DIR   exit 1, naming the file, when one
//                                     differs (the test FlagDocs.Generated)
//
// Both also check that docs/attn.1 has an entry for every flag of every
// command (man_page_gaps) and that every row of the flag table is bound
// by the commands it names (unbound_rows), and exit 1 naming each gap.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "flag_docs.h"

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[1] : "";
  if (mode != "write" && mode != "check") {
    std::fprintf(stderr, "usage: attn_flag_docs write|check SOURCE_DIR\n");
    return 2;
  }
  CLI::App app;
  attn::cli::add_commands(app, "attn");
  const std::string dir = argv[2];
  const std::string man = dir + "/docs/attn.1";
  const std::pair<std::string, std::string> files[] = {
      {dir + "/data/completions/attn.bash", attn::cli::bash_completion(app)},
      {dir + "/data/completions/_attn", attn::cli::zsh_completion(app)},
      {man, attn::cli::man_page_headings(app, read(man))}};
  int code = 0;
  for (const auto& [path, text] : files) {
    if (mode == "write") {
      std::ofstream(path, std::ios::binary) << text;
    } else if (read(path) != text) {
      std::fprintf(stderr,
                   "%s differs from what the flag table makes of it; run "
                   "`scripts/dev.sh generate` (or attn_flag_docs write SOURCE_DIR)\n",
                   path.c_str());
      code = 1;
    }
  }
  // Every flag has its entry in the manual page, and every row is bound.
  std::vector<std::string> gaps = attn::cli::man_page_gaps(app, read(man));
  for (const std::string& row : attn::cli::unbound_rows(app)) gaps.push_back(row);
  for (const std::string& gap : gaps) {
    std::fprintf(stderr, "%s\n", gap.c_str());
    code = 1;
  }
  return code;
}
