// The model's predictions: the most likely tokens of each position under
// softmax over the vocabulary of its logits.
#include <algorithm>
#include <cmath>

#include "attn/analysis.h"
#include "attn/error.h"

namespace attn {

std::vector<std::vector<TokenProbability>> top_tokens(const Tensor<double>& logits, int64_t k,
                                                      const std::string& flag) {
  if (logits.rank() < 1) throw_internal("top_tokens: a scalar");
  const int64_t vocab = logits.dim(logits.rank() - 1);
  if (k < 1 || k > vocab) {
    throw_usage(flag + " " + std::to_string(k) + ": the vocabulary has " + std::to_string(vocab) +
                " tokens; K is 1 to " + std::to_string(vocab));
  }
  const int64_t rows = vocab == 0 ? 0 : logits.size() / vocab;
  std::vector<std::vector<TokenProbability>> out(static_cast<size_t>(rows));
  std::vector<int64_t> order(static_cast<size_t>(vocab));
  for (int64_t r = 0; r < rows; ++r) {
    const double* l = logits.data() + r * vocab;
    // log Σ exp(l − max): the largest logit subtracted so that exp cannot overflow.
    const double top = *std::max_element(l, l + vocab);
    double sum = 0;
    for (int64_t j = 0; j < vocab; ++j) sum += std::exp(l[j] - top);
    for (int64_t j = 0; j < vocab; ++j) order[static_cast<size_t>(j)] = j;
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int64_t a, int64_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
    for (int64_t t = 0; t < k; ++t) {
      const int64_t id = order[static_cast<size_t>(t)];
      out[static_cast<size_t>(r)].push_back({id, std::exp(l[id] - top) / sum});
    }
  }
  return out;
}

}  // namespace attn
