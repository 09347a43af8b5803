// Private steps of run_command(), split by topic.
#pragma once

#include "attn/attention.h"
#include "attn/document.h"
#include "attn/problem.h"
#include "commands/run.h"

namespace attn::detail {

// The document a run starts from: a JSON document, a matrix file taken as
// X, a built-in example, or nothing (everything from flags).
InputDocument load_document(const RunRequest& req);

// Flags replace the document's inputs and settings.
void apply_flags(const RunRequest& req, InputDocument& doc);

// Takes the params and settings of --checkpoint's layer into the document
// (apply_flags calls it before the flags' settings, which win).
void apply_checkpoint(const RunRequest& req, InputDocument& doc);

// Refuses a run whose largest tensor would exceed --max-elements.
void check_run_limits(const RunRequest& req, const Problem& p, const ComputeRequest& creq);

}  // namespace attn::detail
