// The kernels are built once per instruction set and one is chosen at run
// time (lib/src/kernel/instruction_set.h): every build this CPU runs gives
// the generic build's results on every golden case, to rounding (1e-12
// relative in float64, as the kernels against the reference path, 1e-5 in
// float32, more with scores of 1e4); ATTN_KERNEL
// picks one or is refused; --version names the one in use; and no AVX
// instruction leaks out of the kernels built for it (scripts/check_isa.sh).
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/document.h"
#include "attn/error.h"
#include "attn/problem.h"
#include "isa_util.h"
#include "kernel/instruction_set.h"
#include "shell_util.h"
#include "test_util.h"

namespace attn {
namespace {

using kernel::Isa;

using test::UseIsa;

std::vector<Isa> runnable() { return test::runnable_isas(); }

// The largest |got - want| / max(1, |want|); infinite where NaNs differ.
double worst_difference(const Tensor<double>& got, const Tensor<double>& want) {
  if (got.shape() != want.shape()) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    if (std::isnan(g) || std::isnan(w)) {
      if (std::isnan(g) != std::isnan(w)) return INFINITY;
      continue;
    }
    if (g == w) continue;  // infinities too
    worst = std::max(worst, std::fabs(g - w) / std::max(1.0, std::fabs(w)));
  }
  return worst;
}

struct Outcome {
  std::optional<Result> result;
  std::string error;
};

Outcome run(const Problem& p, DType dtype, bool weights) {
  ComputeRequest req;
  req.weights = weights;
  req.dtype = dtype;
  req.threads = 1;
  Outcome o;
  try {
    o.result = compute(p, req);
  } catch (const Error& e) {
    o.error = e.what();
  }
  return o;
}

// The largest finite |score| entering the softmax (the generic build's).
double largest_score(const Problem& p) {
  UseIsa use(Isa::kGeneric);
  ComputeRequest req;
  req.scores = true;
  req.threads = 1;
  double top = 0;
  try {
    const Result r = compute(p, req);
    for (int64_t i = 0; r.scores && i < r.scores->size(); ++i) {
      if (std::isfinite((*r.scores)[i])) top = std::max(top, std::fabs((*r.scores)[i]));
    }
  } catch (const Error&) {
  }
  return top;
}

// Every golden case of `dir` through the kernel of every build this CPU
// runs, output only and with the weights kept, against the generic build. Returns the cases;
// counts the outputs not bit for bit the generic build's in `differing`.
int compare_isas_on(const std::string& dir, int& differing) {
  DIR* d = opendir(dir.c_str());
  EXPECT_NE(d, nullptr) << dir;
  if (!d) return 0;
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 5 && name.substr(name.size() - 5) == ".json") names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  int n = 0;
  for (const std::string& name : names) {
    const std::string path = dir + "/" + name;
    const Problem p = build_problem(read_document(test::read_text(path), path));
    if (p.variant != Variant::kScaledDot && p.variant != Variant::kDot) continue;
    ++n;
    const double top = largest_score(p);
    for (const DType dtype : {DType::kF64, DType::kF32}) {
      // Sums in another order (vectors of 4 to 16 lanes), with and without
      // FMA: a few roundings apart, and a score of 1e4 is itself only good
      // to 1e4 · epsilon, which the exponential turns into a relative error.
      const double eps = dtype == DType::kF64 ? 0x1p-52 : 0x1p-23;
      const double tol = (dtype == DType::kF64 ? 1e-12 : 1e-5) + 4 * eps * top;
      for (const bool weights : {false, true}) {
        std::optional<Outcome> generic;
        {
          UseIsa use(Isa::kGeneric);
          generic = run(p, dtype, weights);
        }
        for (const Isa isa : runnable()) {
          if (isa == Isa::kGeneric) continue;
          UseIsa use(isa);
          const Outcome o = run(p, dtype, weights);
          const std::string what = name + (dtype == DType::kF64 ? " f64" : " f32") +
                                   (weights ? " weights kept " : " output only ") +
                                   std::string(kernel::isa_name(isa));
          EXPECT_EQ(o.error, generic->error) << what;
          if (!o.result || !generic->result) continue;
          const double diff = worst_difference(o.result->output, generic->result->output);
          EXPECT_LE(diff, tol) << what << " output";
          if (diff > 0) ++differing;
          EXPECT_EQ(o.result->weights.has_value(), generic->result->weights.has_value()) << what;
          if (o.result->weights && generic->result->weights) {
            EXPECT_LE(worst_difference(*o.result->weights, *generic->result->weights), tol)
                << what << " weights";
          }
          EXPECT_EQ(o.result->fully_masked_rows.size(), generic->result->fully_masked_rows.size())
              << what;
        }
      }
    }
  }
  return n;
}

TEST(KernelIsa, EveryBuildThisCpuRunsAgreesOnEveryGoldenCase) {
  if (runnable().size() == 1) GTEST_SKIP() << "this CPU runs the generic kernels only";
  int differing = 0;
  EXPECT_GT(compare_isas_on(test::source_path("tests/golden/cases"), differing), 100);
  EXPECT_GT(compare_isas_on(test::source_path("tests/golden/modern"), differing), 30);
  // They do run different code: FMA alone changes some last bits.
  EXPECT_GT(differing, 0);
}

TEST(KernelIsa, TheBestIsChosenUnlessAsked) {
  EXPECT_EQ(kernel::best_isa(), runnable().back());
  EXPECT_TRUE(kernel::cpu_supports(Isa::kGeneric));
  // A CPU that runs a build runs every lower one.
  const std::vector<Isa>& built = kernel::built_isas();
  for (size_t i = 1; i < built.size(); ++i) {
    if (kernel::cpu_supports(built[i])) {
      EXPECT_TRUE(kernel::cpu_supports(built[i - 1])) << kernel::isa_name(built[i]);
    }
  }
  EXPECT_EQ(kernel::parse_isa_request(nullptr), std::nullopt);
  EXPECT_EQ(kernel::parse_isa_request(""), std::nullopt);
  EXPECT_EQ(kernel::parse_isa_request("auto"), std::nullopt);
  EXPECT_EQ(kernel::parse_isa_request("generic"), Isa::kGeneric);
  for (Isa isa : kernel::built_isas()) {
    const std::string key(kernel::isa_key(isa));
    if (kernel::cpu_supports(isa)) {
      EXPECT_EQ(kernel::parse_isa_request(key.c_str()), isa);
    } else {
      EXPECT_EQ(test::error_of([&] { kernel::parse_isa_request(key.c_str()); }),
                "ATTN_KERNEL=" + key + ": this CPU has no " + std::string(kernel::isa_name(isa)) +
                    "; it runs " +
                    (isa == Isa::kAvx512 && kernel::cpu_supports(Isa::kAvx2) ? "generic, avx2"
                                                                             : "generic") +
                    " or auto");
    }
  }
}

TEST(KernelIsa, UnknownNamesAreUsageErrors) {
  for (const char* bad : {"AVX2", "sse2", "avx", "native", " avx2"}) {
    try {
      kernel::parse_isa_request(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_EQ(
          std::string(e.what()),
          "ATTN_KERNEL=" + std::string(bad) +
              ": unknown kernels; use avx512, avx2, generic or auto (the best this CPU runs)");
    }
  }
}

// The program, run as a user runs it, with ATTN_KERNEL set.

TEST(KernelEnv, VersionNamesTheKernelsInUse) {
  const std::string best(kernel::isa_name(kernel::best_isa()));
  const test::Run v = test::run_attn({"--version"});
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.out.find(", kernels: " + best + " (chosen at run time; "), std::string::npos)
      << v.out;
#if defined(__x86_64__)
  const test::Run g = test::run_attn({"--version"}, "", {"ATTN_KERNEL=generic"});
  EXPECT_NE(
      g.out.find(", kernels: generic (set by ATTN_KERNEL; AVX-512 and AVX2+FMA also built))\n"),
      std::string::npos)
      << g.out;
  const test::Run a = test::run_attn({"--version"}, "", {"ATTN_KERNEL=auto"});
  EXPECT_EQ(a.out, v.out);
#endif
}

TEST(KernelEnv, EveryBuildPrintsTheSameNumbers) {
  const std::vector<std::string> args = {"run", "--example", "sweet", "--weights"};
  const test::Run want = test::run_attn(args, "", {"ATTN_KERNEL=generic"});
  ASSERT_EQ(want.code, 0) << want.err;
  for (Isa isa : runnable()) {
    const test::Run r =
        test::run_attn(args, "", {"ATTN_KERNEL=" + std::string(kernel::isa_key(isa))});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, want.out) << kernel::isa_name(isa);
  }
}

TEST(KernelEnv, BadValuesAreRefusedByEveryCommand) {
  const std::string unknown =
      "attn: error: ATTN_KERNEL=sse4: unknown kernels; use avx512, avx2, generic or auto (the "
      "best this CPU runs)\n";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--version"}, {"run", "--example", "sweet"}, {"examples"}}) {
    const test::Run r = test::run_attn(args, "", {"ATTN_KERNEL=sse4"});
    EXPECT_EQ(r.code, 2) << args[0];
    EXPECT_EQ(r.err, unknown) << args[0];
    EXPECT_EQ(r.out, "") << args[0];
  }
  for (Isa isa : kernel::built_isas()) {
    if (kernel::cpu_supports(isa)) continue;
    const test::Run r = test::run_attn({"run", "--example", "sweet"}, "",
                                       {"ATTN_KERNEL=" + std::string(kernel::isa_key(isa))});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("this CPU has no " + std::string(kernel::isa_name(isa))),
              std::string::npos)
        << r.err;
  }
}

// The built program: AVX only inside the kernels built for it.
TEST(IsaConfinement, AvxOnlyInTheKernelsBuiltForIt) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the AVX kernels are built on x86-64 only";
#else
  if (ATTN_NATIVE_BUILD) GTEST_SKIP() << "-DATTN_NATIVE=ON builds everything for this CPU";
  if (test::find_program("objdump").empty() || test::find_program("c++filt").empty()) {
    GTEST_SKIP() << "objdump is not installed (apt-get install binutils)";
  }
  const test::Shell r = test::sh(test::quote(test::source_path("scripts/check_isa.sh")) + " " +
                                 test::quote(ATTN_BINARY));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("ok: AVX in ", 0), 0u) << r.out;
#endif
}

}  // namespace
}  // namespace attn
