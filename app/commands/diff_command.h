// `attn diff A B` as a library call: two matrix files read as `attn heatmap`
// reads its input (or two attn results written with -f json -w; one layer
// of a model's stack with --layer), compared (attn/compare.h) with the
// cells masked on both sides left out, the summary per batch entry (or
// layer) and head written as a table, JSON or CSV, and B − A drawn on a
// diverging scale centred on 0, those cells hatched.
#pragma once

#include <optional>
#include <string>

#include "attn/file_io.h"
#include "attn/heatmap.h"
#include "attn/output.h"
#include "commands/run.h"

namespace attn {

struct DiffRequest {
  std::string a, b;  // matrix files, FILE:NAME, or attn result documents; "-" stdin (one of them)
  std::string key;   // JSON documents: the member compared in both ("weights", "output", ...)
  // --layer N: layer N of each side that is a stack of a model's weights,
  // [layers][batch][heads][q][k] (rank 5, or rank 4 [layers][heads][q][k]);
  // --head H: head H of both.
  std::optional<int64_t> layer, head;
  // --stack: what the first axis of a rank-4 array is, "batch" or
  // "layers"; "" when not given (an attn result's recorded axes, the other
  // side's shape with --layer, else batch, said on stderr).
  std::string stack;
  bool quiet = false;  // no notes on stderr
  Format format = Format::kTable;
  int precision = 4;                // digits after the point in the table
  std::optional<double> tolerance;  // exit 1 when max |B − A| is above it
  std::string heatmap_path;         // --heatmap FILE.png or FILE.svg; "" for none
  bool show = false;                // preview B − A in the terminal, after the summary
  std::string title;                // of the figure (default "B − A")
  HeatmapOptions options;           // --vmin, --vmax, --max-size
  TerminalStyle terminal;
  int64_t max_input_bytes = kDefaultMaxInputBytes;  // --max-input-bytes: largest input read
  int64_t max_elements = kDefaultMaxElements;       // --max-elements: largest tensor read
  ProgressSink* progress = nullptr;                 // reports reading a large input; may be null
};

// Runs it; returns the exit code: 0, or 1 when a tolerance is given and
// max |B − A| exceeds it (or is NaN). Throws attn::Error for bad input,
// usage and file problems.
int diff_command(const DiffRequest& request, Console& console);

}  // namespace attn
