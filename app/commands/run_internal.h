// Private steps of run_command(), split by topic.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/checkpoint.h"
#include "attn/document.h"
#include "attn/problem.h"
#include "attn/tokenizer.h"
#include "commands/run.h"
#include "io/json_writer.h"

namespace attn::detail {

// The document a run starts from: a JSON document, a matrix file taken as
// X, a built-in example, or nothing (everything from flags).
InputDocument load_document(const RunRequest& req);

// Flags replace the document's inputs and settings.
void apply_flags(const RunRequest& req, InputDocument& doc);

// Takes the params and settings of --checkpoint's layer into the document
// (apply_flags calls it before the flags' settings, which win).
void apply_checkpoint(const RunRequest& req, InputDocument& doc);

// The token ids of --text (through the checkpoint's tokenizer.json) or
// --ids, and their labels: the tokens as they read, or the ids where the
// checkpoint has no tokenizer.
struct CheckpointTokens {
  std::vector<int64_t> ids;
  std::vector<std::string> labels;
  std::string source = "--ids";  // where the ids came from (ForwardRequest::ids_source)
};
CheckpointTokens checkpoint_tokens(const RunRequest& req);

// The run's tokenizer: --tokenizer's, else the tokenizer.json of the
// checkpoint's directory. Where there is none, `needed` (text to encode)
// throws, naming what to give; otherwise nullopt (the ids label the tokens).
std::optional<Tokenizer> run_tokenizer(const RunRequest& req, bool needed);

// The forward request of the run's checkpoint and tokens.
ForwardRequest forward_request(const RunRequest& req, const CheckpointTokens& t);

// The trace's first steps when a checkpoint's layer runs from token ids:
// the ids, the embeddings, the hidden states entering the layer (past
// layer 0) and the layer's input norm, which the engine's steps follow.
std::vector<TraceStep> model_input_steps(const RunRequest& req);

// `attn run --checkpoint DIR --layer all`: every layer's weights as one
// stack, written as JSON or .npy, with --hidden-out.
int run_all_layers(const RunRequest& req, Console& console);

// A model's stack (weights, or what --of made of them) as a result
// document that attn heatmap and attn diff read back with its labels:
// `what` says which ("every layer", "attention rollout"), `more` adds
// members (predictions).
std::string stack_json(const RunRequest& req, const ModelAttention& m,
                       const std::vector<std::string>& labels, DType dtype, const std::string& what,
                       const std::function<void(JsonWriter&)>& more = {});

// Refuses the flags of the whole model's analyses (--summary, --of rollout,
// --predict, --texts, ...) where the run is not of every layer, or they do
// not go together (run_command calls it first).
void check_analysis_flags(const RunRequest& req);

// Whether a run of every layer adds an analysis to (or makes one of) its
// stack: run_model_analysis runs it.
bool wants_model_analysis(const RunRequest& req);
int run_model_analysis(const RunRequest& req, Console& console);

// `attn run --checkpoint DIR --texts FILE --layer all --summary STAT`
// (or --text-file FILE --each-line): every sentence, in batches.
int run_sentences(const RunRequest& req, Console& console);

// Refuses a run whose largest tensor would exceed --max-elements.
void check_run_limits(const RunRequest& req, const Problem& p, const ComputeRequest& creq);

}  // namespace attn::detail
