// RoPE's frequencies and attention factor as a scaling makes them: a
// factor that makes a frequency, an angle at the sequence's last position
// or the attention factor infinite, NaN or zero is refused by name (the
// cosines of infinite angles are NaN, and every score with them).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace attn {
namespace {

using test::problem_error;

// Three positions of width 4: RoPE rotates two pairs.
std::string doc(const std::string& rope) {
  return R"({"X": [[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]], "causal": true, "rope": )" + rope +
         "}";
}

std::string scaling(const std::string& fields) { return doc(R"({"scaling": {)" + fields + "}}"); }

TEST(RopeFrequencies, NonFiniteOrZeroIsRefusedByTheFieldThatMadeIt) {
  struct Case {
    std::string document, message;
  };
  const std::string at = "t.json: rope.scaling: rope_scaling ";
  const std::vector<Case> cases = {
      {scaling(R"("rope_type": "linear", "factor": 1e-308)"),
       at + "\"factor\" 1e-308 makes the rotation angle of pair 0 at position 2 infinite "
            "(frequency 1e+308); RoPE needs finite angles"},
      {scaling(R"("rope_type": "dynamic", "factor": 1e300, "max_position_embeddings": 2)"),
       at + "\"factor\" 1e+300 makes the rotation frequency of pair 1 0; RoPE needs finite "
            "frequencies above 0"},
      {scaling(R"("rope_type": "llama3", "factor": 1e-308, "original_max_position_embeddings": 8, )"
               R"("low_freq_factor": 1, "high_freq_factor": 4)"),
       at + "\"factor\" 1e-308 makes the rotation angle of pair 0 at position 2 infinite "
            "(frequency 9.089201517549458e+307); RoPE needs finite angles"},
      {scaling(R"("rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 8, )"
               R"("mscale": -100, "mscale_all_dim": 1)"),
       at + "\"mscale\" -100 with \"mscale_all_dim\" 1 makes the attention factor "
            "-11.296865515018865; it must be finite and above 0"},
      {scaling(R"("rope_type": "longrope", "factor": 4, "original_max_position_embeddings": 8, )"
               R"("short_factor": [1e-308, 1], "long_factor": [1, 1])"),
       at + "\"short_factor\"[0] 1e-308 makes the rotation angle of pair 0 at position 2 "
            "infinite (frequency 1e+308); RoPE needs finite angles"},
      {scaling(R"("rope_type": "longrope", "factor": 4, "original_max_position_embeddings": 1, )"
               R"("short_factor": [1, 1], "long_factor": [1, 1])"),
       at + "\"original_max_position_embeddings\" 1 makes the attention factor inf; it must be "
            "finite and above 0"},
  };
  for (const Case& c : cases) EXPECT_EQ(problem_error(c.document), c.message);
}

TEST(RopeFrequencies, EveryKindAtItsUsualFactorsIsAccepted) {
  for (const std::string& fields :
       {std::string(R"("rope_type": "linear", "factor": 2)"),
        std::string(R"("rope_type": "linear", "factor": 1e300)"),
        std::string(R"("rope_type": "dynamic", "factor": 2, "max_position_embeddings": 2)"),
        std::string(R"("rope_type": "llama3", "factor": 8, "original_max_position_embeddings": 8, )"
                    R"("low_freq_factor": 1, "high_freq_factor": 4)"),
        std::string(R"("rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 8)"),
        std::string(R"("rope_type": "longrope", "factor": 4, )"
                    R"("original_max_position_embeddings": 8, "short_factor": [1, 1], )"
                    R"("long_factor": [1, 2])")}) {
    EXPECT_EQ(problem_error(scaling(fields)), "") << fields;
  }
  EXPECT_EQ(problem_error(doc(R"({"theta": 1e-300})")), "");
}

}  // namespace
}  // namespace attn
