// The forward pass alone, timed in one process the way forward_bench.py
// times PyTorch's: attn::model_attention called R + 1 times on the same
// token ids, the first call to warm up (the page cache, the allocator, the
// thread pool), then R calls timed. Like PyTorch's timed forward it ends
// with the stack of every layer's weights in float32 in memory (gathered
// by ForwardRequest::on_layer; attn's own stack, in float64, is not
// kept). Each call still maps the checkpoint and widens its bf16 weights as
// it multiplies, where PyTorch starts from float32 weights in memory.
// Usage:
//   forward_time CHECKPOINT IDS [--dtype f32|f64] [--threads T] [--rounds R]
// IDS is a comma-separated list of token ids. Prints one time in seconds
// per line. A benchmark, not a test.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "attn/checkpoint.h"
#include "attn/error.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: forward_time CHECKPOINT IDS [--dtype f32|f64] [--threads T] "
                 "[--rounds R]\n");
    return 2;
  }
  attn::ForwardRequest req;
  req.checkpoint = argv[1];
  std::stringstream ids(argv[2]);
  for (std::string id; std::getline(ids, id, ',');) req.ids.push_back(std::stoll(id));
  req.dtype = attn::DType::kF32;
  req.keep_hidden = false;  // PyTorch's timed forward returns the stack of weights only
  req.keep_weights = false;
  std::vector<float> stack;
  req.on_layer = [&](int64_t layer, int64_t layers, const attn::Tensor<double>& w) {
    if (layer == 0) stack.assign(static_cast<size_t>(layers * w.size()), 0.0f);
    float* at = stack.data() + layer * w.size();
    for (int64_t i = 0; i < w.size(); ++i) at[i] = static_cast<float>(w[i]);
  };
  int rounds = 5;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--dtype")) {
      req.dtype = std::strcmp(argv[i + 1], "f64") == 0 ? attn::DType::kF64 : attn::DType::kF32;
    } else if (!std::strcmp(argv[i], "--threads")) {
      req.threads = std::atoi(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--rounds")) {
      rounds = std::atoi(argv[i + 1]);
    }
  }
  try {
    for (int r = 0; r <= rounds; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      stack.clear();
      stack.shrink_to_fit();  // a fresh stack each call, as PyTorch's
      attn::model_attention(req);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (r > 0) std::printf("%.4f\n", s);
      if (stack.empty()) return 1;
    }
  } catch (const attn::Error& e) {
    std::fprintf(stderr, "forward_time: %s\n", e.what());
    return 1;
  }
  return 0;
}
