// The registry of tensor file formats (lib/src/io/formats.h): its rows are
// consistent, every format reads what attn writes in it, and the commands
// (batch directories, -o, --weights-out) take their formats from it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "attn/file_io.h"
#include "attn/matrix_file.h"
#include "attn/npy.h"
#include "attn/npz.h"
#include "commands/batch.h"
#include "io/formats.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using test::run_attn;

Tensor<double> sample() {
  return Tensor<double>({2, 3}, Values<double>{0.5, -1, 2.25, 3, 0, -0.125});
}

void expect_values(const Tensor<double>& got, const Tensor<double>& want) {
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.size(); ++i) EXPECT_EQ(got.data()[i], want.data()[i]) << i;
}

// Every extension of a row: its own first, then the others it reads.
std::vector<std::string> extensions_of(const TensorFormat& f) {
  std::vector<std::string> out = {f.extension};
  out.insert(out.end(), f.also.begin(), f.also.end());
  return out;
}

// A safetensors file of one float64 tensor "w" of shape [2][3].
std::string safetensors_bytes(const Tensor<double>& t) {
  const std::string header = R"({"w":{"dtype":"F64","shape":[2,3],"data_offsets":[0,48]}})";
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(t.data()), sizeof(double) * 6);
  return out;
}

// A GGUF file (version 3) of the same tensor: F64 (ggml type 28), ggml's
// dimensions [3, 2], its data at byte 96 (the header's 65 bytes, aligned
// to 32).
std::string gguf_bytes(const Tensor<double>& t) {
  auto le = [](uint64_t v, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
    return s;
  };
  std::string out = "GGUF" + le(3, 4) + le(1, 8) + le(0, 8) + le(1, 8) + "w" + le(2, 4) + le(3, 8) +
                    le(2, 8) + le(28, 4) + le(0, 8);
  out.resize(96, '\0');
  out.append(reinterpret_cast<const char*>(t.data()), sizeof(double) * 6);
  return out;
}

std::string fresh_dir(const std::string& name) {
  const std::string d = test::temp_dir() + "/" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(FormatRegistry, RowsFollowMatrixFormat) {
  const std::vector<TensorFormat>& rows = tensor_formats();
  ASSERT_EQ(rows.size(), 6u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(rows[i].id), i) << rows[i].name;
    EXPECT_EQ(&tensor_format(rows[i].id), &rows[i]);
  }
}

TEST(FormatRegistry, ExtensionsAreUniqueAndLowerCase) {
  std::set<std::string> seen;
  for (const TensorFormat& f : tensor_formats()) {
    for (const std::string& e : extensions_of(f)) {
      EXPECT_TRUE(seen.insert(e).second) << "." << e << " is claimed twice";
      EXPECT_FALSE(e.empty());
      for (char c : e) {
        EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) << "." << e;
      }
      const TensorFormat* by = format_by_extension("dir/file." + e);
      ASSERT_NE(by, nullptr) << e;
      EXPECT_EQ(by->id, f.id) << e;
      std::string upper = e;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      EXPECT_EQ(format_by_extension("FILE." + upper), &f) << upper;
    }
  }
  EXPECT_EQ(format_by_extension("noextension"), nullptr);
  EXPECT_EQ(format_by_extension("dir.npy/file"), nullptr);
  EXPECT_EQ(format_by_extension("model.pt"), nullptr);
  EXPECT_EQ(format_by_extension("-"), nullptr);
}

TEST(FormatRegistry, EveryRowCanBeRead) {
  for (const TensorFormat& f : tensor_formats()) {
    EXPECT_TRUE(f.parse || f.read_mapped) << f.name;
    // A file of named tensors is opened from its path, never parsed from
    // a stream, and its tensors can be viewed where they lie.
    if (f.multi_tensor) {
      EXPECT_EQ(f.parse, nullptr) << f.name;
      EXPECT_NE(f.read_mapped, nullptr) << f.name;
      EXPECT_NE(f.view, nullptr) << f.name;
    }
    // What is mapped can be viewed, and the reverse.
    EXPECT_EQ(f.read_mapped != nullptr, f.view != nullptr) << f.name;
    // A result written as text is that of --format NAME, in a format that
    // also writes one tensor.
    if (f.result == ResultFile::kText || f.result == ResultFile::kOutputArray) {
      EXPECT_NE(f.write, nullptr) << f.name;
    }
  }
}

TEST(FormatRegistry, SniffRecognisesWhatEachFormatWrites) {
  for (const TensorFormat& f : tensor_formats()) {
    if (!f.write) continue;
    const std::string bytes = f.write(sample(), DType::kF64);
    EXPECT_EQ(sniff_format(bytes).id, f.id) << f.name;
    // stdin has no extension: the content decides.
    EXPECT_EQ(matrix_format("-", bytes), f.id) << f.name;
    if (f.sniff) {
      EXPECT_TRUE(f.sniff(bytes)) << f.name;
    }
  }
  // Text that no row claims is the text matrix's to read (and refuse).
  EXPECT_EQ(sniff_format("").id, MatrixFormat::kCsv);
  EXPECT_EQ(sniff_format("\xEF\xBB\xBF  \n[1]").id, MatrixFormat::kJson);
  // The extension wins over the content.
  EXPECT_EQ(matrix_format("x.csv", "[1, 2]"), MatrixFormat::kCsv);
}

TEST(FormatRegistry, EveryWrittenFileReadsBackUnderEachOfItsExtensions) {
  const std::string d = fresh_dir("formats_round_trip");
  for (const TensorFormat& f : tensor_formats()) {
    if (!f.write) continue;
    for (const std::string& e : extensions_of(f)) {
      const std::string path = d + "/w." + e;
      const std::string bytes = format_matrix_file(sample(), DType::kF64, path);
      EXPECT_EQ(bytes, f.write(sample(), DType::kF64)) << path;
      std::ofstream(path, std::ios::binary) << bytes;
      SCOPED_TRACE(path);
      expect_values(read_matrix(path, CellKind::kFinite, {}, kDefaultMaxInputBytes).values,
                    sample());
      expect_values(parse_matrix(bytes, path, CellKind::kFinite).values, sample());
    }
  }
  // The extensions of no format attn writes a tensor in get JSON.
  for (const char* path : {"w", "w.out", "w.npz", "w.safetensors"}) {
    EXPECT_EQ(format_matrix_file(sample(), DType::kF64, path),
              tensor_format(MatrixFormat::kJson).write(sample(), DType::kF64))
        << path;
  }
}

TEST(FormatRegistry, MultiTensorFormatsReadAndViewNamedTensors) {
  const std::string d = fresh_dir("formats_multi");
  std::ofstream(d + "/m.safetensors", std::ios::binary) << safetensors_bytes(sample());
  std::ofstream(d + "/m.npz", std::ios::binary)
      << format_npz({{"w", format_npy(sample(), DType::kF64)}});
  std::ofstream(d + "/m.gguf", std::ios::binary) << gguf_bytes(sample());
  for (const TensorFormat& f : tensor_formats()) {
    const std::string spec = d + "/m." + f.extension + ":w";
    const TensorReference ref = split_tensor_reference(spec);
    if (!f.multi_tensor) {
      EXPECT_EQ(ref.path, spec) << "only files of named tensors split at a colon";
      EXPECT_FALSE(is_multi_tensor_file(spec));
      continue;
    }
    SCOPED_TRACE(spec);
    EXPECT_EQ(ref.path, d + "/m." + f.extension);
    EXPECT_EQ(ref.tensor, "w");
    EXPECT_TRUE(is_multi_tensor_file(spec));
    EXPECT_EQ(mapped_format(spec), &f);
    expect_values(read_matrix(spec, CellKind::kFinite, {}, kDefaultMaxInputBytes).values, sample());
    const BinaryArray a = f.view(ref, kDefaultMaxInputBytes, 5);
    expect_values(a.to_tensor(spec, CellKind::kFinite, kDefaultMaxElements), sample());
  }
  // A single-tensor file given a name: the message lists the registry's
  // formats of named tensors.
  std::ofstream(d + "/one.json") << "[[1]]";
  EXPECT_EQ(error_of([&] {
              read_matrix(TensorReference{d + "/one.json", "w"}, CellKind::kFinite, {},
                          kDefaultMaxInputBytes);
            }),
            d + "/one.json: names the tensor \"w\", but a .json file holds one; only "
                ".safetensors, .npz and .gguf hold named tensors");
}

TEST(FormatRegistry, OnlyBinaryFilesAreMapped) {
  for (const TensorFormat& f : tensor_formats()) {
    EXPECT_EQ(mapped_format("x." + std::string(f.extension)), f.read_mapped ? &f : nullptr)
        << f.name;
  }
  EXPECT_EQ(mapped_format("-"), nullptr);
  EXPECT_EQ(mapped_format("x.bin"), nullptr);
}

TEST(FormatRegistry, ResultFilesGoByTheOwnExtension) {
  for (const TensorFormat& f : tensor_formats()) {
    const TensorFormat* r = result_format("r." + std::string(f.extension));
    EXPECT_EQ(r, f.result == ResultFile::kNone ? nullptr : &f) << f.name;
    // r.tsv, r.txt: a table.
    for (const char* e : f.also) EXPECT_EQ(result_format(std::string("r.") + e), nullptr) << e;
  }
  EXPECT_EQ(result_format("r"), nullptr);
  EXPECT_EQ(result_format("-"), nullptr);
  EXPECT_EQ(result_format("R.NPZ")->result, ResultFile::kArchive);
  EXPECT_EQ(result_format("r.npy")->result, ResultFile::kOutputArray);
  EXPECT_EQ(result_format("r.json")->result, ResultFile::kText);
}

TEST(FormatRegistry, ExtensionListsForMessages) {
  EXPECT_EQ(extension_list({"json", "csv", "npy"}, "or"), ".json, .csv or .npy");
  EXPECT_EQ(extension_list({"safetensors", "npz"}, "and"), ".safetensors and .npz");
  EXPECT_EQ(extension_list({"npy"}, "or"), ".npy");
  EXPECT_EQ(extension_list({}, "or"), "");
}

TEST(FormatRegistry, BatchDirectoriesTakeEachSingleTensorFormat) {
  std::vector<std::string> want;
  for (const TensorFormat& f : tensor_formats()) {
    if (!f.multi_tensor) want.emplace_back(f.extension);
  }
  EXPECT_EQ(batch_extensions(), want);
  EXPECT_EQ(want, (std::vector<std::string>{"json", "csv", "npy"}));

  // A directory holding a file of every extension the registry knows (and
  // some it does not): the batch runs those of its single-tensor formats,
  // by their own extension, in name order.
  const std::string d = fresh_dir("formats_batch");
  std::vector<std::string> expected;
  int n = 0;
  for (const TensorFormat& f : tensor_formats()) {
    for (const std::string& e : extensions_of(f)) {
      const std::string path = d + "/f" + std::to_string(n++) + "." + e;
      std::ofstream(path) << "1\n";
      if (!f.multi_tensor && e == f.extension) expected.push_back(path);
    }
  }
  for (const char* other : {"notes.md", "model.pt", "x.png", ".hidden.json"}) {
    std::ofstream(d + "/" + other) << "1\n";
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(expand_batch_inputs({d}), expected);

  const std::string empty = fresh_dir("formats_batch_empty");
  std::ofstream(empty + "/w.tsv") << "1\n";
  EXPECT_EQ(error_of([&] { expand_batch_inputs({empty}); }),
            empty + ": no " + extension_list(want, "or") + " files in the directory");
}

// --weights-out W.dat is CSV, as a .dat input is read.
TEST(FormatsCli, WeightsOutDatIsReadBack) {
  const std::string d = fresh_dir("formats_cli");
  const std::string in = test::source_path("data/examples/sweet.json");
  const test::Run r = run_attn({"run", in, "--weights-out", d + "/w.dat", "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string text = test::read_text(d + "/w.dat");
  EXPECT_EQ(text.rfind("# weights [4][4]\n", 0), 0u) << text;
  const test::Run back = run_attn({"heatmap", d + "/w.dat", "-o", d + "/w.svg"});
  EXPECT_EQ(back.code, 0) << back.err;
}

// A file named for a format attn reads but does not write there is
// refused, not filled with another format's text.
TEST(FormatsCli, RefusesOutputsInFormatsItDoesNotWrite) {
  const std::string d = fresh_dir("formats_cli_refused");
  const std::string in = test::source_path("data/examples/sweet.json");
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"run", in, "-o", d + "/r.safetensors"},
       "attn: error: -o " + d +
           "/r.safetensors: attn does not write .safetensors files; write the result as .json, "
           ".csv, .npy or .npz\n"},
      {{"run", in, "--weights-out", d + "/w.safetensors"},
       "attn: error: --weights-out " + d +
           "/w.safetensors: attn does not write .safetensors files; write the weights as .json, "
           ".csv or .npy\n"},
      {{"run", in, "-o", d + "/r.gguf"},
       "attn: error: -o " + d +
           "/r.gguf: attn does not write .gguf files; write the result as .json, .csv, .npy or "
           ".npz\n"},
      {{"run", in, "--weights-out", d + "/w.npz"},
       "attn: error: --weights-out " + d +
           "/w.npz: attn does not write one tensor as .npz; write the weights as .json, .csv or "
           ".npy, or the whole result with -o FILE.npz --weights\n"},
      // A stack of every layer has no result archive to point to.
      {{"run", "--checkpoint", test::model("tiny-llama"), "--ids", "1,2,3", "--layer", "all", "-f",
        "json", "--weights-out", d + "/s.npz"},
       "attn: error: --weights-out " + d +
           "/s.npz: attn does not write one tensor as .npz; write the weights as .json, .csv or "
           ".npy\n"},
  };
  for (const Case& c : cases) {
    const test::Run r = run_attn(c.args);
    EXPECT_EQ(r.code, 2) << c.err;
    EXPECT_EQ(r.err, c.err);
    EXPECT_EQ(r.out, "");
  }
  EXPECT_TRUE(fs::is_empty(d)) << "nothing is written";
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

using test::run_attn;
using test::temp_dir;
using test::write_temp;

// A PyTorch pickle is never opened, and its message says how to convert it.
TEST(FormatsCli, PicklesAreNeverOpenedAndNameTheirConversion) {
  const std::string pt = write_temp("weights.pt", "\x80\x02}q\x00.");
  const std::string message =
      "attn: error: " + pt +
      ": a PyTorch pickle (torch.save), which attn does not open: loading one runs code. Convert "
      "a tensor with python3 -c \"import torch, numpy; numpy.save('t.npy', "
      "torch.load('FILE.pt').numpy())\", or a state_dict with python3 -c \"import torch; from "
      "safetensors.torch import save_file; save_file(torch.load('FILE.pt'), "
      "'model.safetensors')\"\n";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", pt}, std::vector<std::string>{"run", "--x", pt},
        std::vector<std::string>{"heatmap", pt, "-o", temp_dir() + "/p.png"},
        std::vector<std::string>{"diff", pt, pt}}) {
    const auto r = run_attn(args);
    EXPECT_EQ(r.code, 3) << args[0];
    EXPECT_EQ(r.err, message) << args[0];
  }
}

}  // namespace
}  // namespace attn
