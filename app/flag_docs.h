// The shell completions of attn, written from its commands as CLI11 holds
// them (their flags, in the order of --help) and the rows behind each flag:
// the flag table (flag_table.h) and the settings table (io/settings.h).
// data/completions/attn.bash and data/completions/_attn are these texts,
// byte for byte: `scripts/dev.sh generate` rewrites them (attn_flag_docs
// write), and the test FlagDocs.Generated (attn_flag_docs check) fails
// when they differ.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace attn::cli {

// `app` holds attn's commands (add_commands in commands.h).
std::string bash_completion(const CLI::App& app);
std::string zsh_completion(const CLI::App& app);

// The manual page's entries are prose written by hand (they say more than
// --help and group flags); their headings are written from the rows
// (man_page_headings), and every flag of every command has an entry
// heading, with the row's placeholder, in its command's OPTIONS section
// (a row shared with another command may be documented there): what
// `page` (docs/attn.1) lacks, one message each.
std::vector<std::string> man_page_gaps(const CLI::App& app, const std::string& page);

// `page` with each entry heading of its OPTIONS sections written from the
// flag's row (man_heading in flag_docs.cc: the spellings and the row's
// placeholder), one flag a heading and the next ones of a group under
// .TQ; the prose between them is kept. docs/attn.1 is this text, byte for
// byte, like the completions.
std::string man_page_headings(const CLI::App& app, const std::string& page);

// The rows of the flag table that a command they name does not bind (a
// row left behind when a flag was removed), one message each.
std::vector<std::string> unbound_rows(const CLI::App& app);

}  // namespace attn::cli
