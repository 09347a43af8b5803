// `attn heatmap` as a library call (a matrix file drawn as PNG/SVG and/or
// previewed in the terminal), and the heatmap part of `attn run`: which
// maps the engine must keep, rendering after the compute, and writing once
// everything else is written. The front end only fills the requests.
#pragma once

#include <optional>
#include <string>

#include "attn/attention.h"
#include "attn/file_io.h"
#include "attn/heatmap.h"
#include "attn/output.h"
#include "attn/problem.h"
#include "commands/run.h"

namespace attn {

struct HeatmapCommandRequest {
  std::string input;  // a matrix file (JSON array or attn result document, CSV, .npy); "-" stdin
  std::string key;    // JSON documents: the member to draw ("weights", "output", ...)
  std::string output_path;  // -o FILE.png, .svg or .html; "-" is PNG on stdout; "" for none
  bool show = false;        // preview in the terminal
  std::string title;        // instead of the file name
  std::string labels;       // "cat,milk,it": row labels (columns too for a square matrix)
  std::string key_labels;   // column labels
  std::string tokens;       // --tokens FILE: labels of rows and columns
  // Stacks of attention weights (.npy, FILE.npz:NAME, FILE.safetensors:NAME):
  // rank 5 is [layers][batch][heads][q][k]. Rank 4 is [layers][heads][q][k]
  // with --stack layers, or with --layer and no --stack; [batch][heads][q][k]
  // with --stack batch, as an attn result records it, or else (the default,
  // which a warning names when the first axis is above 1).
  std::optional<int64_t> layer;
  std::string stack;                // --stack: "batch", "layers", or "" when not given
  std::optional<HeadStat> summary;  // --summary: one cell per (layer, head)
  // --summary as numbers instead of a figure: -f json|csv|table, or -o
  // FILE.json / FILE.csv; --top N lists the N heads first.
  std::optional<Format> format;
  int64_t top = 0;
  std::vector<int64_t> layers, heads;  // --layers 0-5,11, --heads 0,3: some of a stack's
  bool quiet = false;                  // no warnings (a font without some label's glyphs)
  HeatmapOptions options;
  TerminalStyle terminal;
  int64_t max_input_bytes = kDefaultMaxInputBytes;  // --max-input-bytes: largest input read
  int64_t max_elements = kDefaultMaxElements;       // --max-elements: largest tensor read
  ProgressSink* progress = nullptr;                 // reports reading a large input; may be null
};

// Runs it; returns the exit code (0). Throws attn::Error for bad input,
// usage and file problems.
int heatmap_command(const HeatmapCommandRequest& request, Console& console);

// Asks the engine for the weights or scores the run's heatmap draws.
void request_heatmap_maps(const HeatmapRequest& h, ComputeRequest& creq);

// The run's heatmap, rendered before anything is written: the file's bytes
// and the terminal preview (each empty when not asked for). --show is a
// usage error when stdout already carries JSON or CSV data.
struct RenderedHeatmap {
  std::string file;
  std::string preview;
  std::string warning;  // missing_glyph_warning(), or ""
};
RenderedHeatmap render_run_heatmap(const RunRequest& req, const Problem& p, const Result& r);

// The model view of a run's stack of every layer's weights,
// [layers][1][heads][q][k] (`--layer all --heatmap FILE`): as attn heatmap
// draws a stack, with the tokens as labels.
// `value_name` names the colour bar of a stack that is not of weights
// (rollout, value norms), drawn from 0 to 1 when `zero_based`, else over
// its own range.
RenderedHeatmap render_stack_heatmap(const RunRequest& req, const Tensor<double>& stack,
                                     const std::vector<std::string>& labels,
                                     const std::string& title, const std::string& value_name = "",
                                     bool zero_based = true);

// A figure a run made of its numbers (a head summary, the logit lens),
// rendered as the run's --heatmap and --show ask, with their checks.
RenderedHeatmap render_run_figure(const RunRequest& req, const HeatmapData& d,
                                  const HeatmapOptions* options = nullptr);

// Writes the file atomically and the preview to the console's output.
void write_run_heatmap(const RunRequest& req, const RenderedHeatmap& h, Console& console);
// Only the preview (the file went with the run's other named files).
void write_run_heatmap_preview(const RunRequest& req, const RenderedHeatmap& h, Console& console);
// The figure once a run's files are written: the file (and its warning)
// when it did not go with them, then the preview.
void finish_run_heatmap(const RunRequest& req, const RenderedHeatmap& h, Console& console,
                        bool written_with_files);

}  // namespace attn
