// Every architecture of the table against the float64 PyTorch
// re-implementation of its transformers modeling code
// (data/models/make_tiny_*.py): each layer's weights, the hidden states and
// the logits of a tiny checkpoint; one layer's attention read on its own;
// float32; and what a checkpoint that does not fit its config gets told.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/checkpoint.h"
#include "attn/error.h"
#include "attn/problem.h"
#include "model/architecture.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::max_diff;
using test::model;
using test::Piece;
using test::read_text;

// The tiny checkpoints whose references include the hidden states: one or
// more for each row of the table.
std::vector<std::string> tiny_models() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(model(""))) {
    const std::string name = e.path().filename().string();
    if (name.rfind("tiny-", 0) == 0 && fs::exists(e.path() / "hidden.npy")) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> ids_of(const std::string& dir) {
  return nlohmann::json::parse(read_text(dir + "/ids.json")).get<std::vector<int64_t>>();
}

// The largest |a − b| over the largest |b|, at least 1.
double relative(const Tensor<double>& a, const Tensor<double>& b) {
  double top = 1;
  for (int64_t i = 0; i < b.size(); ++i) top = std::max(top, std::abs(b[i]));
  return max_diff(a, b) / top;
}

class Family : public ::testing::TestWithParam<std::string> {};

TEST_P(Family, EveryLayersWeightsTheHiddenStatesAndTheLogitsMatchItsReference) {
  const std::string dir = model(GetParam());
  ForwardRequest r;
  r.checkpoint = dir;
  r.ids = ids_of(dir);
  r.keep_logits = fs::exists(dir + "/logits.npy");
  const ModelAttention m = model_attention(r);
  const Tensor<double> att = test::load_npy(dir + "/attentions.npy");
  const Tensor<double> hidden = test::load_npy(dir + "/hidden.npy");
  ASSERT_EQ(m.weights.shape(), att.shape());
  ASSERT_EQ(m.hidden.shape(), hidden.shape());
  EXPECT_LT(max_diff(m.weights, att), 1e-10);
  EXPECT_LT(relative(m.hidden, hidden), 1e-9);
  if (r.keep_logits) {
    const Tensor<double> logits = test::load_npy(dir + "/logits.npy");
    ASSERT_EQ(m.logits.shape(), logits.shape());
    EXPECT_LT(relative(m.logits, logits), 1e-9);
  }
  const nlohmann::json config = nlohmann::json::parse(read_text(dir + "/config.json"));
  EXPECT_EQ(m.model_type, config["model_type"].get<std::string>());
}

// --checkpoint DIR --layer N on the hidden states entering layer N: the
// layer's attention as load_checkpoint_layer reads it (its projections as
// params, or its own heads) is the stack's layer N.
TEST_P(Family, OneLayersAttentionOnItsOwnIsTheStacksLayer) {
  const std::string dir = model(GetParam());
  const Tensor<double> att = test::load_npy(dir + "/attentions.npy");
  const int64_t layers = att.dim(0), heads = att.dim(2), q = att.dim(3);
  for (int64_t n = 0; n < layers; ++n) {
    ForwardRequest fr;
    fr.checkpoint = dir;
    fr.ids = ids_of(dir);
    fr.layer = n;
    const Tensor<double> x = attention_input(fr);
    LayerRequest lr;
    lr.checkpoint = dir;
    lr.layer = n;
    CheckpointLayer layer = load_checkpoint_layer(lr);
    InputDocument doc;
    doc.source = layer.title;
    doc.settings_place = layer.title;
    if (layer.heads_from_x) {
      LayerHeads h = checkpoint_layer_heads(lr, x);
      doc.Q = std::move(h.Q);
      doc.K = std::move(h.K);
      doc.V = std::move(h.V);
      layer.settings.mode = Mode::kQkv;
    } else {
      doc.X = Input{x, "X"};
    }
    doc.params = std::move(layer.params);
    doc.settings = layer.settings;
    ComputeRequest cr;
    cr.weights = true;
    const Result result = compute(build_problem(std::move(doc)), cr);
    Tensor<double> want(Shape{heads, q, q});
    std::copy(att.data() + n * heads * q * q, att.data() + (n + 1) * heads * q * q, want.data());
    ASSERT_EQ(result.weights->shape(), want.shape()) << "layer " << n;
    EXPECT_LT(max_diff(*result.weights, want), 1e-10) << "layer " << n;
  }
}

// --dtype f32: the products and the attention in float32, within float32's
// rounding of the float64 reference.
TEST_P(Family, Float32IsWithinItsRounding) {
  const std::string dir = model(GetParam());
  ForwardRequest r;
  r.checkpoint = dir;
  r.ids = ids_of(dir);
  r.dtype = DType::kF32;
  const ModelAttention m = model_attention(r);
  const double d = max_diff(m.weights, test::load_npy(dir + "/attentions.npy"));
  EXPECT_LT(d, 1e-4);
  EXPECT_GT(d, 0) << "float32 rounds somewhere";
  EXPECT_LT(relative(m.hidden, test::load_npy(dir + "/hidden.npy")), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(TinyCheckpoints, Family, ::testing::ValuesIn(tiny_models()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string s = i.param.substr(5);
                           for (char& c : s) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return s;
                         });

// The table is the one place a family lives: every row has a tiny
// checkpoint with its references, the names attn lists are its rows, and
// each row names each role once.
TEST(ArchitectureTable, EveryRowHasATinyCheckpointAndTheListsComeFromIt) {
  std::set<std::string> tested;
  for (const std::string& name : tiny_models()) {
    tested.insert(nlohmann::json::parse(read_text(model(name + "/config.json")))["model_type"]);
  }
  std::set<std::string> rows;
  for (const model::Row& r : model::rows()) rows.insert(r.model_type);
  EXPECT_EQ(tested, rows);
  std::vector<std::string> names;
  for (const model::Row& r : model::rows()) names.emplace_back(r.model_type);
  EXPECT_EQ(architecture_names(), names);
  ASSERT_EQ(architectures().size(), names.size());
  for (const model::Row& r : model::rows()) {
    std::set<int> roles;
    for (const model::TensorName& t : r.tensors) {
      EXPECT_TRUE(roles.insert(static_cast<int>(t.role)).second)
          << r.model_type << ": " << model::role_title(t.role) << " twice";
    }
    EXPECT_NE(std::string(r.title), "") << r.model_type;
    EXPECT_EQ(std::string(r.source).rfind("models/", 0), 0u) << r.model_type;
  }
  // docs/models.md has a row for each, with the file it was written from.
  const std::string page = read_text(test::source_path("docs/models.md"));
  for (const model::Row& r : model::rows()) {
    EXPECT_NE(page.find("| `" + std::string(r.model_type) + "` |"), std::string::npos)
        << r.model_type;
    EXPECT_NE(page.find("`" + std::string(r.source) + "`"), std::string::npos) << r.model_type;
  }
}

// --- What a checkpoint that does not fit its config is told ----------------

std::string layer_error(const std::string& dir, DType dtype = DType::kF64) {
  return test::error_of([&] {
    ForwardRequest r;
    r.checkpoint = dir;
    r.ids = {1, 2, 3};
    r.dtype = dtype;
    model_attention(r);
  });
}

// A tensor cut (or widened) by `rows` rows, its cells kept as far as they go.
void cut_rows(std::vector<Piece>& pieces, const std::string& name, int64_t rows) {
  for (Piece& p : pieces) {
    if (p.name != name) continue;
    const int64_t row_bytes = static_cast<int64_t>(p.bytes.size()) / p.shape[0];
    p.shape[0] += rows;
    p.bytes.resize(static_cast<size_t>(p.shape[0] * row_bytes), '\0');
    return;
  }
  FAIL() << "no tensor " << name;
}

TEST(FamilyRefusals, ATensorOfTheWrongShapeIsNamedBeforeAnyProductInEveryPrecision) {
  const std::string up = test::changed_checkpoint(model("tiny-llama"), "narrow-up", [](auto& p) {
    cut_rows(p, "model.layers.0.mlp.up_proj.weight", -1);
  });
  const std::string down = test::changed_checkpoint(
      model("tiny-llama"), "narrow-down",
      [](auto& p) { cut_rows(p, "model.layers.0.mlp.down_proj.weight", 1); });
  const std::string w3 = test::changed_checkpoint(model("tiny-mixtral"), "narrow-w3", [](auto& p) {
    cut_rows(p, "model.layers.1.block_sparse_moe.experts.2.w3.weight", -1);
  });
  for (const DType dtype : {DType::kF64, DType::kF32}) {
    EXPECT_EQ(
        layer_error(up, dtype),
        up +
            "/model.safetensors:model.layers.0.mlp.up_proj.weight: has shape [63][32] but the "
            "config gives [64][32] for the MLP up projection (llama: " +
            up + "/config.json)");
    EXPECT_EQ(
        layer_error(down, dtype),
        down +
            "/model.safetensors:model.layers.0.mlp.down_proj.weight: has shape [33][64] but the "
            "config gives [32][64] for the MLP down projection (llama: " +
            down + "/config.json)");
    const std::string e = layer_error(w3, dtype);
    EXPECT_NE(e.find("model.layers.1.block_sparse_moe.experts.2.w3.weight: has shape "), 0u) << e;
    EXPECT_NE(e.find("for the expert up projection (mixtral: "), std::string::npos) << e;
  }
}

TEST(FamilyRefusals, AMissingOrStrayTensorIsNamedWithWhatExpectsIt) {
  const std::string missing =
      test::changed_checkpoint(model("tiny-phi3"), "no-gate-up", [](std::vector<Piece>& p) {
        p.erase(std::remove_if(p.begin(), p.end(),
                               [](const Piece& x) {
                                 return x.name == "model.layers.1.mlp.gate_up_proj.weight";
                               }),
                p.end());
      });
  EXPECT_EQ(layer_error(missing),
            missing +
                ": no tensor named layers.1.mlp.gate_up_proj.weight (or "
                "model.layers.1.mlp.gate_up_proj.weight), the fused MLP gate/up projection of a "
                "phi3 layer; is the architecture right?");
  // A bias the config does not give: the weights are another model's.
  const std::string bias =
      test::changed_checkpoint(model("tiny-llama"), "stray-bias", [](std::vector<Piece>& p) {
        p.push_back({"model.layers.0.self_attn.q_proj.bias", "F32", {32}, std::string(128, '\0')});
      });
  EXPECT_EQ(layer_error(bias),
            bias +
                ": holds model.layers.0.self_attn.q_proj.bias, a bias of the query projection, "
                "which " +
                bias +
                "/config.json does not give llama layers (\"attention_bias\" "
                "is not true); are the config and the weights the same model's?");
  // A tensor of another architecture names what it is and who has it.
  const std::string norm =
      test::changed_checkpoint(model("tiny-llama"), "stray-norm", [](std::vector<Piece>& p) {
        p.push_back({"model.layers.1.self_attn.q_norm.weight", "F32", {8}, std::string(32, '\0')});
      });
  EXPECT_EQ(layer_error(norm),
            norm +
                ": holds model.layers.1.self_attn.q_norm.weight, a query norm, which llama "
                "layers do not have (qwen3, qwen3_moe, gemma3_text, olmo2, cohere do); is the "
                "architecture right?");
}

TEST(FamilyRefusals, AWeightOfIntegersOrBooleansIsNotAWeight) {
  const std::string dir =
      test::changed_checkpoint(model("tiny-llama"), "bool-weight", [](std::vector<Piece>& p) {
        for (Piece& x : p) {
          if (x.name == "model.layers.1.self_attn.o_proj.weight") {
            x.dtype = "BOOL";
            x.bytes = std::string(32 * 32, '\2');
          }
        }
      });
  EXPECT_EQ(
      layer_error(dir),
      dir +
          "/model.safetensors:model.layers.1.self_attn.o_proj.weight: has cells of type BOOL; "
          "the output projection must hold floating-point numbers (F64, F32, F16 or BF16)");
}

TEST(FamilyRefusals, AConfigFieldThatChangesTheComputationIsNotIgnored) {
  nlohmann::json falcon = nlohmann::json::parse(read_text(model("tiny-falcon-mq/config.json")));
  falcon["alibi"] = true;
  const std::string dir = test::changed_checkpoint(
      model("tiny-falcon-mq"), "alibi", [](auto&) {}, falcon.dump());
  EXPECT_EQ(layer_error(dir),
            dir +
                "/config.json: \"alibi\" true: ALiBi Falcons (RW-1B, 7B-RW) add the bias twice "
                "in transformers' eager attention, which returns the weights, and once "
                "otherwise; attn computes neither");
  nlohmann::json opt = nlohmann::json::parse(read_text(model("tiny-opt/config.json")));
  opt["word_embed_proj_dim"] = 16;
  const std::string o = test::changed_checkpoint(
      model("tiny-opt"), "projected-opt", [](auto&) {}, opt.dump());
  EXPECT_EQ(layer_error(o), o + "/config.json: \"word_embed_proj_dim\" 16 differs from "
                                "hidden_size 32: OPT's project_in and project_out are not "
                                "implemented");
}

TEST(FamilyRefusals, AnUnknownModelTypeNamesTheFamiliesRead) {
  nlohmann::json c = nlohmann::json::parse(read_text(model("tiny-llama/config.json")));
  c["model_type"] = "mamba";
  const std::string dir = test::changed_checkpoint(
      model("tiny-llama"), "mamba", [](auto&) {}, c.dump());
  const std::string e = layer_error(dir);
  EXPECT_EQ(e.rfind("architecture \"mamba\" is not one attn reads (llama, mistral, mixtral, ", 0),
            0u)
      << e;
  EXPECT_NE(e.find("deepseek_v3, gpt2, bert, roberta)"), std::string::npos) << e;
}

}  // namespace
}  // namespace attn
