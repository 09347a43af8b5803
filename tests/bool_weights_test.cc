// A BOOL tensor holds the bytes 0 and 1. As a model's weight it is no
// weight at all: refused when the model is opened, whatever its bytes, on
// every path (--layer N, --layer all, float32 and float64), naming the
// tensor and what it was to be. Read as a tensor (a figure's stack), one
// that holds another byte than 0 or 1 is refused where it is read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "attn/safetensors.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::run_attn;

// tiny-llama's checkpoint with tensor `name` made BOOL: its cells 0 and 1
// in turn, and `byte` at cell 5.
std::string checkpoint_with_bool(const std::string& dir_name, const std::string& name, int byte) {
  const std::string dir = test::temp_dir() + "/" + dir_name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  const SafetensorsFile f = SafetensorsFile::open(test::model("tiny-llama/model.safetensors"));
  std::string header = "{", data;
  for (const SafetensorsEntry& e : f.tensors()) {
    std::string bytes(reinterpret_cast<const char*>(f.view(e).data), e.end - e.begin);
    std::string dtype = e.dtype;
    if (e.name == name) {
      bytes.assign(static_cast<size_t>(shape_size(e.shape)), '\0');
      for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i % 2);
      bytes[5] = static_cast<char>(byte);
      dtype = "BOOL";
    }
    if (header.size() > 1) header += ",";
    header += "\"" + e.name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":[";
    for (size_t i = 0; i < e.shape.size(); ++i)
      header += (i ? "," : "") + std::to_string(e.shape[i]);
    header += "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
              std::to_string(data.size() + bytes.size()) + "]}";
    data += bytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string length(8, '\0');
  for (int i = 0; i < 8; ++i)
    length[static_cast<size_t>(i)] = static_cast<char>(header.size() >> (8 * i));
  std::ofstream(dir + "/model.safetensors", std::ios::binary) << length << header << data;
  fs::copy_file(test::model("tiny-llama/config.json"), dir + "/config.json");
  return dir;
}

TEST(BoolWeights, AModelsWeightOfBoolCellsIsRefusedOnEveryPath) {
  const std::pair<std::string, std::string> weights[] = {
      {"model.layers.1.self_attn.q_proj.weight", "query projection"},
      {"model.layers.0.mlp.up_proj.weight", "MLP up projection"},
      {"model.embed_tokens.weight", "token embedding"}};
  for (const auto& [name, what] : weights) {
    for (const int byte : {1, 2}) {
      const std::string dir = checkpoint_with_bool("bool_weights", name, byte);
      const std::string message = "attn: error: " + dir + "/model.safetensors:" + name +
                                  ": has cells of type BOOL; the " + what +
                                  " must hold floating-point numbers (F64, F32, F16 or BF16)\n";
      const std::string out = test::temp_dir() + "/bool_weights_stack.npy";
      const std::vector<std::vector<std::string>> runs = {
          {"--layer", "1"},
          {"--layer", "1", "--dtype", "f32"},
          {"--layer", "all", "-o", out},
          {"--layer", "all", "-o", out, "--dtype", "f64"},
      };
      for (const auto& flags : runs) {
        std::vector<std::string> args = {"run", "--checkpoint", dir, "--ids", "1,2,3"};
        args.insert(args.end(), flags.begin(), flags.end());
        const auto r = run_attn(args);
        EXPECT_EQ(r.code, 3) << name << " " << flags[1];
        EXPECT_EQ(r.err, message) << name << " " << flags[1];
      }
    }
  }
}

// A figure's stack is read where it lies in the file: a bool .npy there
// is checked as a tensor read whole is.
TEST(BoolWeights, AFiguresStackIsCheckedToo) {
  std::string header = "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  const std::string npy = test::write_temp(
      "bool_stack.npy", std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) +
                            '\0' + header + std::string("\x00\x01\x02\x01", 4));
  const auto r = run_attn({"heatmap", npy, "-o", test::temp_dir() + "/bool_stack.png"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err,
            "attn: error: " + npy + "[1][0]: a bool cell holds the byte 2; bools are 0 or 1\n");
}

}  // namespace
}  // namespace attn
