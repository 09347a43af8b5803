// Several inputs in one `attn run`: every file given (and every *.json,
// *.csv and *.npy file of a directory given, in name order) is run with the
// same flags, and each result is written to its own file in an output
// directory. A bad input is reported on stderr and skipped; the others
// still run, and a summary line ends the batch.
#pragma once

#include <string>
#include <vector>

#include "commands/run.h"

namespace attn {

struct BatchRequest {
  RunRequest run;                   // the flags shared by every input; run.input is unused
  std::vector<std::string> inputs;  // files and directories, as given ("-" is stdin)
  std::string out_dir;              // --out-dir DIR; "" for none
};

// One input that is not a directory, without out_dir: exactly
// run_command(). Otherwise every input is run and its result written to
// out_dir/<stem>.<ext> (see batch_output_name), and its figure, when
// --heatmap names a format, to out_dir/<stem>.png|svg|html; errors reported through
// console.error(); returns the largest exit code of the inputs (0: all
// done, 1: some --check differed, 3: some input invalid, 4: some file
// unreadable, ...). Throws attn::Error for what stops the whole batch:
// usage errors (several inputs without out_dir, flags that name one output
// file) and an output directory that cannot be created.
int run_batch(const BatchRequest& request, Console& console);

// The file name a batch writes for `input`: its name without directory and
// extension, plus the extension of what the run prints: ".json"/".csv"/".txt"
// for --format json/csv/table, ".md"/".tex"/".json"/".txt" for traces,
// ".py" for --emit-pytorch. "in/a.json" -> "a.json" (--format json).
std::string batch_output_name(const std::string& input, const RunRequest& run);

// Whether --heatmap names a format ("png", "svg", "html") rather than a
// file: with out_dir, each input's figure is drawn to out_dir/<stem>.<format>,
// beside its result.
bool batch_figure_format(const std::string& heatmap);

// The inputs a batch runs: files as given, directories replaced by their
// *.json, *.csv and *.npy files (sorted by name; hidden files skipped).
std::vector<std::string> expand_batch_inputs(const std::vector<std::string>& inputs);

}  // namespace attn
