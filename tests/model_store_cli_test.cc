// Models by name through the real attn binary: attn models over stores
// built in a temporary directory (store_util.h), and --checkpoint
// ollama:NAME and hf:ORG/NAME giving what the model's own path gives, with
// the exit codes of their refusals.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands/models.h"
#include "store_util.h"
#include "test_util.h"

namespace attn {
namespace {

using test::run_attn;

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";

struct Stores {
  std::string ollama, hf, blob, snapshot;
  // The environment that points attn at these stores and nowhere else.
  std::vector<std::string> env() const {
    return {"OLLAMA_MODELS=" + ollama, "HF_HUB_CACHE=" + hf, "HOME=/nonexistent"};
  }
};

const Stores& stores() {
  static const Stores s = [] {
    Stores s;
    s.ollama = test::fresh_dir("cli-ollama");
    s.hf = test::fresh_dir("cli-hf");
    s.blob = test::add_ollama_model(s.ollama, "registry.ollama.ai/library/tiny/latest",
                                    test::model("tiny-llama/model.gguf"));
    s.snapshot = test::add_hf_snapshot(
        s.hf, "org/tiny", kCommit,
        {test::model("tiny-llama/config.json"), test::model("tiny-llama/model.safetensors"),
         test::model("tiny-llama/tokenizer.json")});
    return s;
  }();
  return s;
}

// The output and weights of layer `layer` of `checkpoint` over a few ids.
nlohmann::json numbers(const std::string& checkpoint, const std::string& layer = "1") {
  const test::Run r = run_attn({"run", "--checkpoint", checkpoint, "--ids", "1,17,29,8,33",
                                "--layer", layer, "-f", "json", "-w"},
                               "", stores().env());
  EXPECT_EQ(r.code, 0) << checkpoint << ": " << r.err;
  if (r.code != 0) return nullptr;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  return {j.at("output"), j.at("weights")};
}

TEST(StoreCli, EveryOllamaNameFormGivesTheGgufFilesNumbers) {
  const nlohmann::json want = numbers(test::model("tiny-llama/model.gguf"));
  ASSERT_FALSE(want.is_null());
  for (const std::string name : {"ollama:tiny", "ollama:tiny:latest", "ollama:library/tiny:latest",
                                 "ollama:registry.ollama.ai/library/tiny:latest"}) {
    EXPECT_EQ(numbers(name), want) << name;
  }
}

TEST(StoreCli, EveryHfNameFormGivesTheDirectorysNumbers) {
  stores();
  const nlohmann::json want = numbers(test::model("tiny-llama"));
  ASSERT_FALSE(want.is_null());
  for (const std::string& name :
       std::vector<std::string>{"hf:org/tiny", "hf:org/tiny@main", "hf:org/tiny@" + kCommit}) {
    EXPECT_EQ(numbers(name), want) << name;
  }
  // The snapshot's tokenizer.json labels the tokens and reads --text.
  const test::Run r = run_attn({"run", "--checkpoint", "hf:org/tiny", "--text", "The cat sat",
                                "--layer", "0", "-f", "json", "-w"},
                               "", stores().env());
  ASSERT_EQ(r.code, 0) << r.err;
  const test::Run direct = run_attn({"run", "--checkpoint", test::model("tiny-llama"), "--text",
                                     "The cat sat", "--layer", "0", "-f", "json", "-w"});
  EXPECT_EQ(nlohmann::json::parse(r.out).at("weights"),
            nlohmann::json::parse(direct.out).at("weights"));
  const test::Run tok =
      run_attn({"tokenize", "--checkpoint", "hf:org/tiny", "The cat"}, "", stores().env());
  EXPECT_EQ(tok.code, 0) << tok.err;
  EXPECT_EQ(tok.out, "      1  <s>\n     17  ␣The\n     29  ␣cat\n");
}

TEST(StoreCli, AllLayersThroughANameAsThroughThePath) {
  stores();
  auto stack = [](const std::string& checkpoint) {
    const test::Run r = run_attn(
        {"run", "--checkpoint", checkpoint, "--ids", "1,17,29", "--layer", "all", "-f", "json"}, "",
        stores().env());
    EXPECT_EQ(r.code, 0) << r.err;
    return r.out;
  };
  const nlohmann::json by_path = nlohmann::json::parse(stack(test::model("tiny-llama/model.gguf")));
  const nlohmann::json by_name = nlohmann::json::parse(stack("ollama:tiny"));
  EXPECT_EQ(by_name.at("weights"), by_path.at("weights"));
  // The title names the model as it was given.
  EXPECT_EQ(by_name.at("title"), "llama, every layer (ollama:tiny)");
}

TEST(StoreCli, RefusalsAreOneLineWithTheirExitCodes) {
  const Stores& s = stores();
  auto fails = [&s](const std::string& name) {
    const test::Run r = run_attn({"run", "--checkpoint", name, "--ids", "1,2"}, "", s.env());
    return std::to_string(r.code) + " " + r.err;
  };
  EXPECT_EQ(fails("ollama:../x"),
            "3 attn: error: ollama:../x: the namespace \"..\" is not one Ollama accepts (1 to 80 "
            "letters, digits, '_' and '-', the first a letter, a digit or '_')\n");
  EXPECT_EQ(fails("hf:../../etc"),
            "3 attn: error: hf:../../etc: the repository id \"../../etc\" has more than one '/'; "
            "the hub's ids are NAME or ORG/NAME\n");
  EXPECT_EQ(fails("ollama:tini"), "4 attn: error: ollama:tini: not in the Ollama store " +
                                      s.ollama +
                                      " (attn models lists its models); did you mean "
                                      "'ollama:tiny:latest'?\n");
  EXPECT_EQ(fails("hf:org/tin"), "4 attn: error: hf:org/tin: not in the Hugging Face cache " +
                                     s.hf +
                                     " (attn models lists its models); did you mean "
                                     "'hf:org/tiny'?\n");
  // A store's name mistyped is not taken for a missing file only.
  const test::Run typo =
      run_attn({"run", "--checkpoint", "olama:tiny", "--ids", "1,2"}, "", s.env());
  EXPECT_EQ(typo.code, 4);
  EXPECT_EQ(typo.err,
            "attn: error: olama:tiny: cannot open: no such file or directory; ollama:NAME and "
            "hf:ORG/NAME name the models of stores (attn models lists them)\n");
  // A blob cut short: the manifest's size says so.
  const std::string store = test::fresh_dir("cli-short");
  const std::string blob = test::add_ollama_model(store, "registry.ollama.ai/library/cut/latest",
                                                  test::model("tiny-llama/model.gguf"));
  std::filesystem::resize_file(blob, 1000);
  const test::Run cut = run_attn({"run", "--checkpoint", "ollama:cut", "--ids", "1,2"}, "",
                                 {"OLLAMA_MODELS=" + store});
  EXPECT_EQ(cut.code, 3);
  EXPECT_EQ(cut.err,
            "attn: error: " + blob + ": holds 1000 bytes, but the manifest " + store +
                "/manifests/registry.ollama.ai/library/cut/latest gives the model layer " +
                std::to_string(std::filesystem::file_size(test::model("tiny-llama/model.gguf"))) +
                " (a pull or copy that did not finish?)\n");
}

TEST(StoreCli, OutputOntoAStoresFileIsRefused) {
  const Stores& s = stores();
  const test::Run r =
      run_attn({"run", "--checkpoint", "ollama:tiny", "--ids", "1,2", "--layer", "0", "-o", s.blob},
               "", s.env());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(s.blob), std::string::npos) << r.err;
}

TEST(StoreCli, ModelsListsBothStoresAsATableAndAsJson) {
  const Stores& s = stores();
  const int64_t gguf = static_cast<int64_t>(std::filesystem::file_size(s.blob));
  const test::Run table = run_attn({"models"}, "", s.env());
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_EQ(table.out,
            "name                architecture  reads  parameters  quantization  size     path\n"
            "ollama:tiny:latest  llama         yes    21.2K       F32           " +
                detail::bytes_text(gguf) + "  " + s.blob +
                "\n"
                "hf:org/tiny         llama         yes    21.2K       F32           86.7 KB  " +
                s.snapshot + "\n");
  const test::Run json = run_attn({"models", "-f", "json"}, "", s.env());
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_EQ(json.out,
            "[\n"
            "  {\"name\": \"ollama:tiny:latest\", \"store\": \"ollama\", \"architecture\": "
            "\"llama\", \"reads\": true, \"parameters\": 21152, \"size_label\": null, "
            "\"quantization\": \"F32\", \"bytes\": " +
                std::to_string(gguf) + ", \"path\": \"" + s.blob +
                "\", \"problem\": null},\n"
                "  {\"name\": \"hf:org/tiny\", \"store\": \"hf\", \"architecture\": \"llama\", "
                "\"reads\": true, \"parameters\": 21152, \"size_label\": null, "
                "\"quantization\": \"F32\", \"bytes\": 86704, \"path\": \"" +
                s.snapshot + "\", \"problem\": null}\n]\n");
}

TEST(StoreCli, ModelsSaysWhereItLookedWhenThereAreNone) {
  const test::Run r =
      run_attn({"models"}, "", {"OLLAMA_MODELS=/nonexistent/o", "HF_HUB_CACHE=/nonexistent/h"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "no models: no Ollama store at /nonexistent/o; no Hugging Face cache at "
            "/nonexistent/h\n");
  const test::Run j = run_attn({"models", "-f", "json"}, "",
                               {"OLLAMA_MODELS=/nonexistent/o", "HF_HUB_CACHE=/nonexistent/h"});
  EXPECT_EQ(j.out, "[]\n");
  const test::Run bad = run_attn({"models", "-f", "csv"}, "", {"OLLAMA_MODELS=/nonexistent/o"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "attn: error: --format csv: expected table or json\n");
}

TEST(StoreCli, SizesAndCountsAreWrittenShort) {
  EXPECT_EQ(detail::count_text(999), "999");
  EXPECT_EQ(detail::count_text(21152), "21.2K");
  EXPECT_EQ(detail::count_text(494032768), "494M");
  EXPECT_EQ(detail::count_text(1235814400), "1.24B");
  EXPECT_EQ(detail::count_text(-1), "-");
  EXPECT_EQ(detail::bytes_text(512), "512 B");
  EXPECT_EQ(detail::bytes_text(87936), "87.9 KB");
  EXPECT_EQ(detail::bytes_text(1321082880), "1.32 GB");
}

}  // namespace
}  // namespace attn
