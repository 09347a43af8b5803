// Head summaries as numbers (`attn heatmap STACK --summary M -f json|csv`,
// `attn run ... --layer all --summary M`, and their mean and spread over
// many sentences): one document, CSV or table of [layer][head] values,
// with the heads of --top N, and the figure of them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attn/analysis.h"
#include "attn/heatmap.h"
#include "attn/output.h"
#include "io/json_writer.h"

namespace attn {

struct SummaryNumbers {
  HeadStat stat = HeadStat::kEntropy;
  std::vector<int64_t> layers, heads;  // the rows' and columns' indices in the stack
  std::vector<double> values;          // [layers][heads]; the mean over sentences for several
  std::vector<double> sd;              // [layers][heads], numpy.std over sentences; empty for one
  std::vector<int64_t> counts;         // sentences that gave each cell a value; empty for one
  int64_t sentences = 0;               // 0: one input
  std::string left_out;                // what the rows left out, in words ("" for nothing)
  std::string source;                  // the stack's file, or the model
  int64_t top = 0;                     // --top N: list the N heads first
};

// `more` adds members to the JSON document (predictions, the lens).
std::string format_summary(const SummaryNumbers& s, Format format, int precision,
                           const std::function<void(JsonWriter&)>& more = {});

// The figure: one cell per layer and head, as attn heatmap --summary draws a stack.
HeatmapData summary_figure(const SummaryNumbers& s, const std::string& title);

}  // namespace attn
