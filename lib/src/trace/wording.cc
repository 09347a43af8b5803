// The words of a trace: each step's title, formula and note, written from
// the data the engine recorded (attn/observer.h). Every formula is built
// once from pieces that know their plain text and their LaTeX, so the two
// cannot disagree. The renderers (trace.cc, latex.cc, json.cc) only format.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "attn/trace.h"
#include "base/number_text.h"
#include "problem/variant_unit.h"
#include "trace/formula.h"

namespace attn {

namespace {

using namespace formula;

// A number the step computed, with `digits` after the point (at least one,
// so that a factor 0.7071 does not print as 1; significant digits for one
// that would round to 0), or every digit when digits < 0.
std::string number(double v, int digits) {
  if (digits < 0 || !std::isfinite(v) || v == 0) return format_shortest(v);
  const int d = std::max(digits, 1);
  std::string s = format_fixed(v, d);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "0" || s == "-0") {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.*g", d, v);
    return buf;
  }
  return s;
}

std::string shortest(double v) { return format_shortest(v); }
std::string str(int64_t v) { return std::to_string(v); }

// The BiDAF pipeline's steps (biattention) are worded as document and
// memory.
bool bidaf(const StepFacts& f) { return detail::bidaf_pipeline(f.variant); }

using Wording = std::function<StepWords(const TraceStep&, int digits)>;
using WordingTable = std::map<StepId, Wording>;

// ---- inputs, projections, heads ---------------------------------------------

// Of a key or value block that a grouped query head reads.
std::string grouped_note(const TraceStep& s) {
  const StepFacts& f = s.facts;
  if (f.kv_head < 0) return "";
  return "query head " + str(s.head) + " reads key/value head " + str(f.kv_head) + " of " +
         str(f.kv_heads) + " (kv_heads)";
}

StepWords input(const TraceStep& s, int) {
  const StepFacts& f = s.facts;
  std::string title = "Input " + f.symbol;
  const bool x = f.symbol == "X";
  if (bidaf(f)) {
    title += x ? " (document)" : " (memory)";
  } else if (f.mode == Mode::kCross) {
    title += x ? " (queries)" : " (keys and values)";
  }
  return words(title, at_head(f.symbol, s.head), grouped_note(s));
}

// "Q = K = V = X": what the unprojected matrices are, one group per source.
StepWords sources(const TraceStep& s, int) {
  std::vector<std::pair<std::string, std::string>> groups;  // source, "Q = K = V"
  for (const auto& alias : s.facts.aliases) {
    // Named, not a structured binding: a lambda may not capture one before C++20 (clang).
    const std::string& name = alias.first;
    const std::string& src = alias.second;
    auto g =
        std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == src; });
    if (g == groups.end()) {
      groups.emplace_back(src, name);
    } else {
      g->second += " = " + name;
    }
  }
  std::string formula;
  for (const auto& [src, names] : groups)
    formula += (formula.empty() ? "" : ", ") + names + " = " + src;
  const bool self =
      s.facts.mode == Mode::kSelf && groups.size() == 1 && groups[0].second == "Q = K = V";
  return words("Queries, keys and values", formula,
               self ? "self-attention: every row of X is a query, a key and a value" : "");
}

StepWords projection(const TraceStep& s, int) {
  const StepFacts& f = s.facts;
  const std::string low(1,
                        static_cast<char>(std::tolower(static_cast<unsigned char>(f.symbol[0]))));
  Math formula = f.symbol + " = " + f.source + kDot + "W_" + low;
  if (f.bias) formula = formula + " + b_" + low;
  return words("Projection " + f.symbol, formula);
}

StepWords head_block(const TraceStep& s, int) {
  const StepFacts& f = s.facts;
  const std::string title = f.symbol == "Q"   ? "Query block"
                            : f.symbol == "K" ? "Key block"
                                              : "Value block";
  const std::string cols = "[:, " + str(f.first_col) + ":" + str(f.end_col) + "]";
  return words(title, at_head(f.symbol, s.head) + " = " + f.symbol + cols, grouped_note(s));
}

StepWords concat(const TraceStep& s, int) {
  const int64_t heads = s.facts.heads;
  Math blocks = sub("O", "0");
  for (int64_t h = 1; h < std::min<int64_t>(heads, 4); ++h)
    blocks = blocks + " | " + sub("O", str(h));
  if (heads > 4) blocks = blocks + " | " + kDots + " | " + sub("O", str(heads - 1));
  return words("Concatenated heads", "C = [" + blocks + "]");
}

// Z, not Y: Y is the context of cross attention.
StepWords output_projection(const TraceStep& s, int) {
  Math formula = "Z = " + s.facts.source;
  if (s.facts.weight) formula = formula + kDot + "W_o";
  if (s.facts.bias) formula = formula + " + b_o";
  return words("Output projection", formula);
}

StepWords output(const TraceStep& s, int) {
  if (bidaf(s.facts)) {
    return words("Output", "[x_i, O1_i, x_i " + kOdot + " O1_i, o2 " + kOdot + " O1_i]");
  }
  return words("Output", at_head(roman("output"), s.head));
}

void add_input_words(WordingTable& t) {
  for (StepId id :
       {StepId::kInputX, StepId::kInputY, StepId::kInputQ, StepId::kInputK, StepId::kInputV}) {
    t[id] = input;
  }
  t[StepId::kSources] = sources;
  for (StepId id : {StepId::kProjectionQ, StepId::kProjectionK, StepId::kProjectionV}) {
    t[id] = projection;
  }
  for (StepId id : {StepId::kHeadQ, StepId::kHeadK, StepId::kHeadV}) t[id] = head_block;
  t[StepId::kConcat] = concat;
  t[StepId::kOutputProjection] = output_projection;
  t[StepId::kOutput] = output;
  t[StepId::kHeadOutput] = [](const TraceStep& s, int) {
    return words("Head output", at_head("O", s.head));
  };
}

// ---- scores and their scaling ---------------------------------------------------

StepWords normalized(const TraceStep& s, int) {
  const bool q = s.id == StepId::kCosineQ;
  const std::string x = q ? "Q" : "K", row = q ? "q_i" : "k_j";
  return words(q ? "Normalized queries" : "Normalized keys",
               hat(x) + " = " + x + " / " + fn("max") + "(" + kNorm + row + kNorm + ", 1e-12)",
               "each row " + row + " of " + x + " divided by its length");
}

// Each variant words its own scores (variants/).
StepWords scores(const TraceStep& s, int) {
  return detail::variant_unit(s.facts.variant).score_words(s);
}

// "factor 1/√d_k = 1/√4 = 0.5, temperature 2"
std::string factor_note(const StepFacts& f, int digits) {
  const std::string dk = shortest(static_cast<double>(f.d_k));
  std::string what;
  switch (f.scale) {
    case ScaleKind::kSqrtDk:
      what = "1/√d_k = 1/√" + dk;
      break;
    case ScaleKind::kDk:
      what = "1/d_k = 1/" + dk;
      break;
    case ScaleKind::kLongSeq:
      what = "1/√(d_k·len_k) = 1/√(" + dk + "·" + str(f.len_k) + ")";
      break;
    case ScaleKind::kNorm:
      what = "1/‖S‖_F";
      break;
    case ScaleKind::kValue:
      break;
    case ScaleKind::kNone:
    case ScaleKind::kCosine:
      what = "1";
      break;
  }
  std::string note = "factor " + (what.empty() ? "" : what + " = ") + number(f.factor, digits);
  if (f.temperature != 1.0) note += ", temperature " + shortest(f.temperature);
  return note;
}

// "·0.5 / 2": the factor and the temperature a matrix is scaled by.
Math scaling(const StepFacts& f, int digits) {
  Math m = "";
  if (f.factor != 1.0) m = kDot + number(f.factor, digits);
  if (f.temperature != 1.0) m = m + " / " + shortest(f.temperature);
  return m;
}

StepWords scaled(const TraceStep& s, int digits) {
  return words("Scaled scores", "S' = S" + scaling(s.facts, digits), factor_note(s.facts, digits));
}

StepWords output_scaled(const TraceStep& s, int digits) {
  const Math o = at_head("O", s.head);
  return words("Output scaled (scale_at output)", o + "' = " + o + scaling(s.facts, digits),
               factor_note(s.facts, digits));
}

void add_score_words(WordingTable& t) {
  t[StepId::kCosineQ] = t[StepId::kCosineK] = normalized;
  t[StepId::kScores] = scores;
  // The steps only one variant reports (its terms), worded in its file.
  for (const detail::VariantUnit* u : detail::variant_units()) {
    for (const detail::StepWording& w : u->own_steps) {
      t[w.id] = [words = w.words](const TraceStep& s, int) { return words(s); };
    }
  }
  t[StepId::kScaled] = scaled;
  t[StepId::kOutputScaled] = output_scaled;
}

// ---- bias, masks, softcap, ALiBi, RoPE ----------------------------------------------

std::string mask_note(const StepFacts& f) {
  std::string note = std::isinf(f.mask_fill)
                         ? "masked cells are set to -inf"
                         : "masked cells are set to mask_fill = " + shortest(f.mask_fill);
  // Positions: with offsets, key j is query i's own position at j = i + d.
  const std::string at = f.diagonal == 0  ? "i"
                         : f.diagonal > 0 ? "i + " + str(f.diagonal)
                                          : "i − " + str(-f.diagonal);
  if (f.diagonal != 0) {
    note += "; positions: key " + at +
            " sits where query i does (q_offset − k_offset = " + str(f.diagonal) + ")";
  }
  if (!f.window) return note;
  auto side = [](int64_t w) { return w < 0 ? std::string("unbounded") : str(w); };
  return note + "; window: query i sees keys " + at + " − " + side(f.window_left) + " … " + at +
         " + " + side(f.window_right);
}

StepWords masked(const TraceStep& s, int) {
  if (bidaf(s.facts)) {
    return each(
        "Masked scores", "S", "ij",
        kMaskFill + " " + Math("where memory j is padding", "\\text{where memory $j$ is padding}"));
  }
  return each("Masked scores", s.facts.source, "ij",
              kMaskFill + " " + Math("where masked", "\\text{where masked}"), mask_note(s.facts));
}

StepWords alibi_bias(const TraceStep& s, int) {
  const std::string m = shortest(s.facts.slope);
  // One head: the step is not per head, and the slope is head 0's.
  return each("ALiBi bias", "B", "ij", kMinus + "m" + kDot + "|i " + kMinus + " j|, m = " + m,
              "head " + str(std::max<int64_t>(s.head, 0)) + "'s slope m = " + m);
}

std::string rope_note(const StepFacts& f) {
  const Rope& r = f.rope;
  std::string s = "theta " + shortest(r.theta) + ", " + str(r.dims) + " of " + str(f.rope_width) +
                  " features rotate, layout " + std::string(name(r.layout)) +
                  "; query i is at position " + str(r.q_offset) + " + i, key j at " +
                  str(r.k_offset) + " + j";
  if (r.scaling) {
    s +=
        "; " + std::string(rope_scaling_name(r.scaling->kind)) + " scaling changes the frequencies";
    if (r.attention != 1) s += ", and cos and sin are multiplied by " + shortest(r.attention);
  }
  return s;
}

StepWords qk_norm_step(const TraceStep& s, const char* what) {
  const std::string x = s.facts.symbol;
  Math formula(x + " = " + x + "_i / √(mean(" + x + "_i²) + ε)",
               x + " = " + x + "_i / \\sqrt{\\mathrm{mean}(" + x + "_i^2) + \\epsilon}");
  if (s.facts.bias) formula = formula + kDot + "w";
  return words(
      std::string("Normed ") + what, formula,
      "an RMSNorm of each row of the head, ε = " + shortest(s.facts.qk_norm) +
          (s.facts.bias ? ", w the " + std::string(x == "Q" ? "q" : "k") + "_norm weights" : ""));
}

Math rotation() {
  const Math cos_t("cos θ", "\\cos\\theta"), sin_t("sin θ", "\\sin\\theta");
  return Math("(a, b) → (a", "(a, b) \\to (a") + kDot + cos_t + " " + kMinus + " b" + kDot + sin_t +
         ", b" + kDot + cos_t + " + a" + kDot + sin_t + ")";
}

void add_modern_words(WordingTable& t) {
  t[StepId::kBiased] = [](const TraceStep& s, int) {
    return words("Scores plus bias",
                 "S' = " + s.facts.source + " + " + Math("attn_bias", "\\text{attn\\_{bias}}"));
  };
  t[StepId::kMasked] = masked;
  t[StepId::kSoftcapRaw] = [](const TraceStep&, int) {
    return words("Scores before capping", "S' (uncapped)");
  };
  t[StepId::kSoftcap] = [](const TraceStep& s, int) {
    return words("Capped scores",
                 "S' = c" + kDot + fn("tanh") + "(S'/c), c = " + shortest(s.facts.softcap),
                 "every score is pulled into (−c, c)");
  };
  t[StepId::kAlibiBias] = alibi_bias;
  t[StepId::kAlibi] = [](const TraceStep&, int) {
    return words("Scores plus ALiBi", "S' = S' + B");
  };
  t[StepId::kQkNormQ] = [](const TraceStep& s, int) { return qk_norm_step(s, "queries"); };
  t[StepId::kQkNormK] = [](const TraceStep& s, int) { return qk_norm_step(s, "keys"); };
  const Math theta = sub(Math("θ", "\\theta"), "tp");
  t[StepId::kRopeAngles] = [theta](const TraceStep& s, int) {
    if (s.facts.rope.scaling) {
      return words("RoPE angles", theta + " = t" + kDot + "f_p", rope_note(s.facts));  // scaled f_p
    }
    return words("RoPE angles", theta + " = t" + kDot + "theta^(" + kMinus + "2p/dims)",
                 rope_note(s.facts));
  };
  t[StepId::kRopeCos] = [theta](const TraceStep&, int) {
    return words("RoPE cosines", Math("cos ", "\\cos ") + theta);
  };
  t[StepId::kRopeSin] = [theta](const TraceStep&, int) {
    return words("RoPE sines", Math("sin ", "\\sin ") + theta);
  };
  t[StepId::kRopeQ] = [](const TraceStep&, int) { return words("Rotated queries", rotation()); };
  t[StepId::kRopeK] = [](const TraceStep&, int) { return words("Rotated keys", rotation()); };
}

// ---- softmax, dropout, the weighted sum -----------------------------------------------

StepWords row_max(const TraceStep& s, int) {
  const Math sij = sub(s.facts.source, "ij");
  if (s.facts.sink) {
    return each("Row maxima", "m", "i",
                fn("max") + "(" + fn("max") + "_j " + sij + ", s), s = " + shortest(*s.facts.sink),
                "the sink logit s takes part in the maximum");
  }
  return each("Row maxima", "m", "i", fn("max") + "_j " + sij,
              "subtracted before exp so that exp never overflows");
}

StepWords row_sum(const TraceStep& s, int) {
  const Math sum = kSumJ + " " + sub("E", "ij");
  if (s.facts.sink) {
    return each("Row sums with the sink", "z", "i", fn("exp") + "(s " + kMinus + " m_i) + " + sum);
  }
  return each("Row sums", "z", "i", sum);
}

std::string weights_note(const StepFacts& f) {
  if (f.sink) return "each row sums to 1 minus the sink's share";
  if (!f.fully_masked_rows) return "each row sums to 1";
  return "each row sums to 1, except rows with every key masked (fully_masked: " +
         std::string(name(f.fully_masked)) + ")";
}

// A, not W: W_q, W_k, W_v and W_o are the projections.
StepWords weights(const TraceStep& s, int) {
  if (bidaf(s.facts)) {
    return words("Document-to-memory weights", "A1 = " + roman("softmax") + "_j(S)",
                 "each row sums to 1");
  }
  return each("Attention weights", "A", "ij", sub("E", "ij") + " / z_i", weights_note(s.facts));
}

StepWords dropout(const TraceStep& s, int) {
  const StepFacts& f = s.facts;
  return words("Weights after dropout",
               kTildeA + " = A " + kOdot + " " + roman("keep") + " / (1 " + kMinus +
                   " p), p = " + shortest(f.dropout),
               "keep: cells kept by the dropout generator (seed " + std::to_string(f.seed) + ")");
}

StepWords weighted_sum(const TraceStep& s, int) {
  const Math a = s.facts.dropout > 0 ? kTildeA : Math("A");
  return words("Weighted sum of values",
               at_head("O", s.head) + " = " + at_head(a, s.head) + kDot + at_head("V", s.head));
}

void add_softmax_words(WordingTable& t) {
  t[StepId::kRowMax] = row_max;
  t[StepId::kExp] = [](const TraceStep& s, int) {
    return each("Exponentials", "E", "ij",
                fn("exp") + "(" + sub(s.facts.source, "ij") + " " + kMinus + " m_i)");
  };
  t[StepId::kRowSum] = row_sum;
  t[StepId::kSinkShare] = [](const TraceStep&, int) {
    return each("Sink's share of each row", "σ", "i", fn("exp") + "(s " + kMinus + " m_i) / z_i",
                "the weight the sink takes; row i of A sums to 1 − σ_i");
  };
  t[StepId::kWeights] = weights;
  t[StepId::kDropout] = dropout;
  t[StepId::kWeightedSum] = weighted_sum;
}

// ---- BiAttention: the BiDAF pipeline after the scores ---------------------------------

void add_biattention_words(WordingTable& t) {
  t[StepId::kBiO1] = [](const TraceStep&, int) {
    return words("Attended memory", "O1 = A1" + kDot + "Y");
  };
  t[StepId::kBiRowMax] = [](const TraceStep&, int) {
    return each("Best match per document position", "m", "i", fn("max") + "_j " + sub("S", "ij"));
  };
  t[StepId::kBiW2] = [](const TraceStep&, int) {
    return words("Memory-to-document weights", "a2 = " + roman("softmax") + "_i(m)");
  };
  t[StepId::kBiO2] = [](const TraceStep&, int) {
    return words("Attended document", "o2 = a2" + kTop + kDot + "X");
  };
}

// ---- what attn run adds: similarity, expected numbers ---------------------------------------

std::string expected_note(const StepFacts& f) {
  if (f.matches) return "the output above matches these numbers";
  if (!f.explanation.empty()) return "these differ from the output above: " + f.explanation;
  return "these differ from the output above, and no common misreading of the formula explains "
         "them";
}

// The reading of the formula that gives the expected numbers.
StepWords expected_reading(const TraceStep& s, int digits) {
  const StepFacts& f = s.facts;
  Math formula = "O = " + roman("softmax") + "(Q" + kDot + "K" + kTop + ")" + kDot + "V";
  if (f.setting == "--scale-at output")
    formula = formula + kDot + "f, f = " + number(f.factor, digits);
  if (f.setting.empty()) {  // a mistake no flag makes: named
    return words("Output with the " + f.detail + " (reproduces the expected numbers)", "O");
  }
  return words("Output under " + f.setting + " (reproduces the expected numbers)", formula);
}

void add_run_words(WordingTable& t) {
  // The dot products between rows: of the inputs X, or of the outputs o.
  t[StepId::kSimilarityInput] = t[StepId::kSimilarityOutput] = [](const TraceStep& s, int) {
    const bool in = s.id == StepId::kSimilarityInput;
    const std::string& x = s.facts.source;
    return words(in ? "Similarity of input rows" : "Similarity of output rows",
                 "sim(i, j) = " + x + "_i" + kDot + x + "_j",
                 in ? "" : "how alike the rows are after attention (compare with the inputs)");
  };
  t[StepId::kExpected] = [](const TraceStep& s, int) {
    return words("Expected output (the input's expected block)", "expected",
                 expected_note(s.facts));
  };
  t[StepId::kExpectedReading] = expected_reading;
}

// ---- a model's steps before the layer: from the token ids ----------------------

void add_model_words(WordingTable& t) {
  t[StepId::kTokenIds] = [](const TraceStep& s, int) {
    return words("Token ids", Math("id", "\\mathrm{id}"), s.facts.detail);
  };
  t[StepId::kEmbeddings] = [](const TraceStep& s, int) {
    return words("Embeddings", Math("H⁰ = embed(id)", "H^0 = \\mathrm{embed}(\\mathrm{id})"),
                 s.facts.detail);
  };
  t[StepId::kHiddenIn] = [](const TraceStep& s, int) {
    const std::string n = str(s.facts.layer), m = str(s.facts.layer - 1);
    const Math through =
        s.facts.layer == 1 ? Math("H = layer_0(H⁰)", "H = \\mathrm{layer}_0(H^0)")
                           : Math("H = layer_" + m + "(… layer_0(H⁰))",
                                  "H = \\mathrm{layer}_{" + m + "}(\\dots \\mathrm{layer}_0(H^0))");
    return words("Hidden states entering layer " + n, through,
                 "each layer adds its attention's output and its MLP's to the hidden states "
                 "(with its norms), as transformers computes them");
  };
  t[StepId::kInputNorm] = [](const TraceStep& s, int) {
    return words("Layer " + str(s.facts.layer) + "'s input norm",
                 Math("X = norm(H)", "X = \\mathrm{norm}(H)"), s.facts.detail);
  };
}

const WordingTable& wording_table() {
  static const WordingTable table = [] {
    WordingTable t;
    add_input_words(t);
    add_score_words(t);
    add_modern_words(t);
    add_softmax_words(t);
    add_biattention_words(t);
    add_run_words(t);
    add_model_words(t);
    return t;
  }();
  return table;
}

}  // namespace

StepWords step_words(const TraceStep& s, int digits) {
  const WordingTable& table = wording_table();
  const auto it = table.find(s.id);
  // A step attn does not know (an observer's own, kCustom) is shown under its name.
  if (it == table.end()) return words(std::string(name(s)), "");
  return it->second(s, digits);
}

}  // namespace attn
