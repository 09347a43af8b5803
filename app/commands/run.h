// `attn run` as a library call: gathers the input document (a file, stdin,
// a built-in example, matrix files from flags), lets flag settings override
// the document's, builds the Problem, computes and writes the result. The
// command-line front end only fills a RunRequest and provides a Console.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attn/analysis.h"
#include "attn/file_io.h"
#include "attn/heatmap.h"
#include "attn/limits.h"
#include "attn/options.h"
#include "attn/output.h"
#include "attn/progress.h"
#include "attn/trace.h"
#include "commands/heatmap_flags.h"

namespace attn {

// Where a run's text goes. The CLI writes to stdout/stderr; tests capture.
class Console {
 public:
  virtual ~Console() = default;
  virtual void out(std::string_view text) = 0;   // data (stdout)
  virtual void warn(std::string_view line) = 0;  // one diagnostic line, without newline
  virtual void info(std::string_view text) = 0;  // reports meant for people (stderr)
  // One error line, without newline (a failed input of a batch).
  virtual void error(std::string_view line) { info("attn: error: " + std::string(line) + "\n"); }
};

// Matrix files given by flags (--x, --y, ...), each a 2D matrix in JSON,
// CSV or NumPy format; "" when not given.
struct MatrixFiles {
  std::string x, y, q, k, v, mask, bias, key_padding_mask;

  // The sequences' files by role, X, Y, Q, K, V in that order ("" where
  // not given).
  std::array<std::pair<const char*, const std::string*>, 5> sequences() const {
    return {{{"X", &x}, {"Y", &y}, {"Q", &q}, {"K", &k}, {"V", &v}}};
  }
};

// --checkpoint DIR|FILE --layer N [--arch NAME]: the params and settings of
// one attention layer of a Hugging Face checkpoint.
struct CheckpointFlags {
  std::string path;  // "" for none
  int64_t layer = 0;
  std::string arch;
  // Instead of --x: the layer's input computed from token ids (--ids), or
  // from text through the checkpoint's tokenizer.json (--text).
  std::vector<int64_t> ids;
  std::optional<std::string> text;
  bool no_special = false;  // --no-special: the text without special tokens
  // --tokenizer FILE|DIR: the tokenizer.json to use instead of the
  // checkpoint directory's (a model without one, or --checkpoint FILE).
  std::string tokenizer;
  bool all_layers = false;  // --layer all: every layer's weights as one stack

  bool from_tokens() const { return !ids.empty() || text.has_value(); }
};

// What a run of the whole model (--layer all) computes besides the stack
// of weights (whose kind --of chooses, HeatmapRequest::stack_of), and the
// sentences of a corpus (docs/analyses.md).
struct AnalysisRequest {
  std::optional<HeadStat> summary;  // --summary STAT: one number per head, no stack held
  int64_t top = 0;  // --top N: the N heads with the largest value (entropy: smallest)
  RolloutFusion fusion = RolloutFusion::kMean;  // --rollout-fusion: over the heads
  bool fusion_given = false;
  int64_t predict = 0;     // --predict K: the K most likely next tokens of each position
  int64_t logit_lens = 0;  // --logit-lens K: the same from every hidden state
  std::string logits_out;  // --logits-out FILE.npy: the final logits [1][q][vocab], float32
  std::string texts;       // --texts FILE: JSON Lines, a sentence a line
  std::string lines;       // --text-file FILE --each-line: a sentence a line

  bool sentences() const { return !texts.empty() || !lines.empty(); }
  bool predictions() const { return predict > 0 || logit_lens > 0 || !logits_out.empty(); }
};

struct TraceRequest {
  bool enabled = false;     // --trace: print every step instead of the result
  bool similarity = false;  // --similarity: dot products between output rows and input rows
  TraceOptions options;
  // --batch, --head (-1: all) and --query (an index or a label; "": all)
  // narrow the trace to one batch entry, head or query.
  int64_t batch = -1, head = -1;
  std::string query;
};

struct RunRequest {
  std::string input;    // input document or matrix file; "-" is stdin; "" for none
  std::string example;  // a built-in example instead of a file
  MatrixFiles matrices;
  std::string valid_lens;  // "2,6" or JSON text such as "[[1,2],[3,4]]"
  std::string labels;      // "cat,milk,it" (queries; keys too in self mode)
  std::string key_labels;  // "a,b,c"
  std::string tokens;      // --tokens FILE: labels, one per token
  CheckpointFlags checkpoint;
  std::optional<std::string> title, description;  // --title, --description
  RunSettings settings;                           // from flags; override the document's

  OutputOptions output;
  std::string output_path = "-";  // "-" is stdout
  std::string weights_out;        // write the weights to this file too
  std::string hidden_out;         // --hidden-out FILE.npy: the model's hidden states
  HeatmapRequest heatmap;         // --heatmap FILE, --show
  AnalysisRequest analysis;       // --summary, --predict, --texts, ...

  bool check = false;                // compare with the document's expected numbers
  std::optional<double> rtol, atol;  // --rtol, --atol: NumPy's allclose rule
  std::string expect_path;           // expected numbers from this file instead
  bool average_heads = false;
  DType dtype = DType::kF64;
  int threads = 0;     // --threads: worker threads of the kernels (0: every core)
  bool quiet = false;  // no warnings; --check reports only mismatches
  int64_t max_elements = kDefaultMaxElements;       // --max-elements: largest tensor allowed
  int64_t max_input_bytes = kDefaultMaxInputBytes;  // --max-input-bytes: largest file read
  TraceRequest trace;
  bool emit_pytorch = false;  // print a PyTorch program instead of the result
  // The program loads tensors of at least this many values that were read
  // from files from them; unset: emit_pytorch's kLoadFromFiles (no flag
  // sets it; tests lower it).
  std::optional<int64_t> emit_load_from;
  // --emit-pytorch of a layer run from token ids: the program that checks
  // it with transformers (false: the layer's own program with its input
  // written out, which the tests of every family's layer run).
  bool emit_model = true;
  std::string command_line = "attn run";  // as typed, for programs and traces
  ProgressSink* progress = nullptr;       // reports reading and computing; may be null
};

// Refuses flags that cannot go together in one run (--emit-pytorch with
// --check, --trace and the other flags that need the computation) with a
// usage error. run_command calls it; a batch calls it once, before its inputs.
void refuse_conflicting_flags(const RunRequest& request);

// Runs it. Returns the exit code: 0, or 1 when --check found differences.
// Throws attn::Error for invalid input, usage and file problems.
int run_command(const RunRequest& request, Console& console);

}  // namespace attn
