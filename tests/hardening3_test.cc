// Hardening, round 3: the classes of failure a third probe found, each as
// the reproducer it was found with. Outputs never replace an input the run
// reads (tensor references, tokens, fonts, a checkpoint's files); a failed
// run replaces no output; config.json values are checked where they are
// read; a memory-mapped file cut short while it is read is an input error,
// not SIGBUS; what a result file says of its numbers must fit them; every
// result attn writes reads back. (Fonts: font_test.cc; the formats' own
// strictness and sizes before allocation: the bad-input corpus.)
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/npy.h"
#include "attn/safetensors.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::read_text;
using test::run_attn;
using test::source_path;
using test::temp_dir;
using test::write_temp;

std::string tiny(const std::string& name) { return source_path("data/models/" + name); }

// A copy of a tiny model in a fresh directory, its config.json patched.
std::string model_copy(const std::string& model, const std::string& dir_name,
                       const nlohmann::json& patch = nlohmann::json::object()) {
  const std::string dir = temp_dir() + "/" + dir_name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"config.json", "model.safetensors", "x_layer0.npy"}) {
    fs::copy_file(tiny(model) + "/" + f, dir + "/" + f);
  }
  nlohmann::json config = nlohmann::json::parse(read_text(dir + "/config.json"));
  config.merge_patch(patch);
  std::ofstream(dir + "/config.json") << config.dump();
  return dir;
}

std::string file_bytes(const std::string& path) { return read_text(path); }

// ---- 2. outputs never replace an input ----------------------------------

TEST(Hardening3Cli, NoOutputReplacesATensorReferenceTokensOrAFont) {
  const std::string st = write_temp("ref.safetensors", "");
  {
    // One 2x2 float64 tensor "x".
    const std::string header = R"({"x":{"dtype":"F64","shape":[2,2],"data_offsets":[0,32]}})";
    std::string bytes(8, '\0');
    const uint64_t n = header.size();
    std::memcpy(&bytes[0], &n, 8);
    bytes += header;
    const double cells[4] = {1, 0, 0, 1};
    bytes.append(reinterpret_cast<const char*>(cells), sizeof cells);
    std::ofstream(st, std::ios::binary) << bytes;
  }
  const std::string npz = temp_dir() + "/ref.npz";
  ASSERT_EQ(run_attn({"run", "--x", st + ":x", "-o", npz, "-w"}).code, 0);
  const std::string tok = write_temp("ref_tokens.txt", "a\nb\n");
  const std::string st_before = file_bytes(st), npz_before = file_bytes(npz);
  struct Case {
    std::vector<std::string> args;
    std::string out, input;
  };
  const std::vector<Case> cases = {
      {{"run", "--x", st + ":x", "-o", st}, st, st},
      {{"run", "--x", st + ":x", "--weights-out", st}, st, st},
      {{"run", "--x", npz + ":output", "-o", npz}, npz, npz},
      {{"run", "--x", st + ":x", "--tokens", tok, "-o", tok}, tok, tok},
      {{"heatmap", npz + ":weights", "-o", npz}, npz, npz},
      {{"heatmap", npz, "--tokens", tok, "-o", tok}, tok, tok},
      {{"diff", npz + ":weights", npz + ":weights", "--heatmap", npz}, npz, npz},
  };
  for (const Case& c : cases) {
    const auto r = run_attn(c.args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(c.out + ": refusing to overwrite the input file " + c.input),
              std::string::npos)
        << r.err;
  }
  EXPECT_EQ(file_bytes(st), st_before);
  EXPECT_EQ(file_bytes(npz), npz_before);
  EXPECT_EQ(read_text(tok), "a\nb\n");

  const std::string font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  if (!fs::exists(font)) GTEST_SKIP() << "no DejaVuSans.ttf (fonts-dejavu-core) for --font";
  const std::string copy = temp_dir() + "/guard_font.ttf";
  fs::copy_file(font, copy, fs::copy_options::overwrite_existing);
  const std::string font_before = file_bytes(copy);
  const auto f = run_attn({"run", "--example", "sweet", "--font", copy, "--heatmap", copy});
  EXPECT_EQ(f.code, 2) << f.err;
  EXPECT_NE(f.err.find("refusing to overwrite the input file " + copy), std::string::npos) << f.err;
  EXPECT_EQ(file_bytes(copy), font_before);
}

TEST(Hardening3Cli, NoOutputReplacesAFileOfTheCheckpoint) {
  const std::string m = model_copy("tiny-llama", "guarded");
  const std::string link = temp_dir() + "/weights_link.safetensors";
  fs::remove(link);
  fs::create_symlink(m + "/model.safetensors", link);
  const std::string model_before = file_bytes(m + "/model.safetensors");
  const std::string config_before = file_bytes(m + "/config.json");
  const std::vector<std::string> base = {"run", "--checkpoint",     m, "--layer", "0",
                                         "--x", m + "/x_layer0.npy"};
  for (const auto& [flag, out] :
       std::vector<std::pair<std::string, std::string>>{{"--weights-out", m + "/model.safetensors"},
                                                        {"-o", m + "/config.json"},
                                                        {"-o", link},
                                                        {"--heatmap", m + "/model.safetensors"}}) {
    std::vector<std::string> args = base;
    args.push_back(flag);
    args.push_back(out);
    const auto r = run_attn(args);
    EXPECT_EQ(r.code, 2) << flag << " " << out << ": " << r.err;
    EXPECT_NE(r.err.find(flag + " " + out + ": refusing to overwrite the input file "),
              std::string::npos)
        << r.err;
  }
  EXPECT_EQ(file_bytes(m + "/model.safetensors"), model_before);
  EXPECT_EQ(file_bytes(m + "/config.json"), config_before);
  // A checkpoint given as a file guards the config.json beside it too.
  const auto c = run_attn({"run", "--checkpoint", m + "/model.safetensors", "--layer", "0", "--x",
                           m + "/x_layer0.npy", "-o", m + "/config.json"});
  EXPECT_EQ(c.code, 2) << c.err;
  EXPECT_EQ(file_bytes(m + "/config.json"), config_before);
}

// ---- 7. a failed run replaces no output --------------------------------

TEST(Hardening3Cli, AFailedRunReplacesNoNamedOutput) {
  const std::string dir = temp_dir() + "/all_or_none";
  fs::create_directories(dir);
  const std::string w = dir + "/w.json", h = dir + "/h.svg", o = dir + "/o.json";
  for (const std::string& f : {w, h, o}) std::ofstream(f) << "old";
  // The weights were written first, and stayed replaced, before.
  const auto r = run_attn(
      {"run", "--example", "sweet", "-o", "/dev/full", "--weights-out", w, "--heatmap", h});
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "attn: error: /dev/full: cannot write: No space left on device\n");
  EXPECT_EQ(read_text(w), "old");
  EXPECT_EQ(read_text(h), "old");
  // The device among the named files, the regular file last.
  const std::string full_png = dir + "/full.png";
  fs::remove(full_png);
  fs::create_symlink("/dev/full", full_png);
  const auto r2 =
      run_attn({"run", "--example", "sweet", "--heatmap", full_png, "-o", o, "--weights-out", w});
  EXPECT_EQ(r2.code, 4) << r2.err;
  EXPECT_EQ(read_text(o), "old");
  EXPECT_EQ(read_text(w), "old");
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_NE(e.path().filename().string().rfind(".attn-", 0), 0u) << e.path();
  }
  // And when all can be written, all are.
  const auto ok = run_attn(
      {"run", "--example", "sweet", "-o", o, "--weights-out", w, "--heatmap", h, "-f", "json"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(read_text(o), "old");
  EXPECT_NE(read_text(w), "old");
  EXPECT_NE(read_text(h).find("<svg"), std::string::npos);
}

// ---- 4 and 6. config.json values checked where they are read ------------

TEST(Hardening3Cli, ConfigValuesAreCheckedWhereTheyAreRead) {
  struct Case {
    std::string model;
    nlohmann::json patch;
    std::string message;  // after "attn: error: DIR/config.json: "
  };
  const std::vector<Case> cases = {
      {"tiny-llama",
       {{"partial_rotary_factor", -1}},
       "\"partial_rotary_factor\" must be in (0, 1], got -1"},
      {"tiny-llama",
       {{"partial_rotary_factor", -0.5}},
       "\"partial_rotary_factor\" must be in (0, 1], got -0.5"},
      {"tiny-llama",
       {{"partial_rotary_factor", 1e300}},
       "\"partial_rotary_factor\" must be in (0, 1], got 1e+300"},
      {"tiny-llama",
       {{"partial_rotary_factor", -1e300}},
       "\"partial_rotary_factor\" must be in (0, 1], got -1e+300"},
      {"tiny-llama",
       {{"partial_rotary_factor", 0}},
       "\"partial_rotary_factor\" must be in (0, 1], got 0"},
      {"tiny-llama",
       {{"partial_rotary_factor", 0.01}},
       "\"partial_rotary_factor\" 0.01 rotates 0 of head_dim 8 dimensions; RoPE rotates an even "
       "number, at least 2"},
      {"tiny-llama", {{"rope_theta", 0}}, "\"rope_theta\" must be a positive number, got 0"},
      {"tiny-llama", {{"rope_theta", -1}}, "\"rope_theta\" must be a positive number, got -1"},
      {"tiny-llama",
       {{"model_type", "gemma2"}, {"query_pre_attn_scalar", -8}},
       "\"query_pre_attn_scalar\" must be a positive number, got -8"},
      {"tiny-llama",
       {{"model_type", "gemma2"}, {"query_pre_attn_scalar", 0}},
       "\"query_pre_attn_scalar\" must be a positive number, got 0"},
      {"tiny-llama",
       {{"model_type", "gemma2"}, {"attn_logit_softcapping", 0}},
       "\"attn_logit_softcapping\" must be a positive number, got 0"},
      {"tiny-llama",
       {{"model_type", "gemma2"}, {"attn_logit_softcapping", -50}},
       "\"attn_logit_softcapping\" must be a positive number, got -50"},
      {"tiny-llama",
       {{"layer_types", {"foo", "full_attention"}}},
       "\"layer_types\"[0] is \"foo\"; expected \"full_attention\" or \"sliding_attention\""},
      {"tiny-bert",
       {{"position_embedding_type", 5}},
       "\"position_embedding_type\" must be a string, got 5"},
  };
  int i = 0;
  for (const Case& c : cases) {
    const std::string m = model_copy(c.model, "config" + std::to_string(i++), c.patch);
    const auto r = run_attn(
        {"run", "--checkpoint", m, "--layer", "0", "--x", m + "/x_layer0.npy", "-o", "/dev/null"});
    EXPECT_EQ(r.code, 3) << c.patch.dump() << ": " << r.err;
    EXPECT_EQ(r.err, "attn: error: " + m + "/config.json: " + c.message + "\n") << c.patch.dump();
  }
  // A hidden size the tensors do not have.
  const std::string m = model_copy("tiny-llama", "hidden", {{"hidden_size", 64}});
  const auto r = run_attn({"run", "--checkpoint", m, "--layer", "0", "--x", m + "/x_layer0.npy"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + m +
                       "/model.safetensors:model.layers.0.self_attn.q_proj.weight: has shape "
                       "[32][32] but the config gives [32][64] for the query projection (llama: " +
                       m + "/config.json)\n");
  const std::string b = model_copy("tiny-bert", "bert_hidden", {{"hidden_size", 64}});
  const auto rb = run_attn({"run", "--checkpoint", b, "--layer", "0", "--x", b + "/x_layer0.npy"});
  EXPECT_EQ(rb.code, 3) << rb.err;
  EXPECT_NE(rb.err.find("encoder.layer.0.attention.self.query.weight: has shape [32][32] but the "
                        "config gives [64][64] for the query projection (bert: "),
            std::string::npos)
      << rb.err;
}

// ---- 10 and 13. checkpoints that are devices, FIFOs, links elsewhere ----

TEST(Hardening3Cli, CheckpointDevicesFifosAndForeignLinks) {
  const auto z = run_attn(
      {"run", "--checkpoint", "/dev/zero", "--layer", "0", "--x", tiny("tiny-llama/x_layer0.npy")});
  EXPECT_EQ(z.code, 3);
  EXPECT_EQ(z.err,
            "attn: error: /dev/zero: not a checkpoint: --checkpoint takes a directory, a "
            ".safetensors file or a .gguf file, and this is none of them (a device or a pipe?)\n");

  const std::string dir = temp_dir() + "/sharded";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(tiny("tiny-llama/config.json"), dir + "/config.json");
  fs::copy_file(tiny("tiny-llama/model.safetensors"), dir + "/shard1.safetensors");
  std::ofstream(dir + "/model.safetensors.index.json")
      << R"({"weight_map": {"model.layers.0.self_attn.q_proj.weight": "shard2.safetensors",)"
      << R"( "model.layers.0.self_attn.k_proj.weight": "shard1.safetensors"}})";
  ASSERT_EQ(::mkfifo((dir + "/shard2.safetensors").c_str(), 0600), 0);
  const auto f =
      run_attn({"run", "--checkpoint", dir, "--layer", "0", "--x", tiny("tiny-llama/x_layer0.npy")},
               "", {}, {"timeout", "20"});
  EXPECT_EQ(f.code, 3) << "a FIFO shard must be refused, not waited for: " << f.err;
  EXPECT_EQ(f.err, "attn: error: " + dir +
                       "/model.safetensors.index.json: weight_map names \"shard2.safetensors\", "
                       "which is not a regular file in the checkpoint's directory\n");

  // A shard linked to a text file: the message does not echo its bytes.
  fs::remove(dir + "/shard2.safetensors");
  const std::string secret = write_temp("secret.txt", "root:x:0:0:secret words\n");
  fs::create_symlink(secret, dir + "/shard2.safetensors");
  const auto s = run_attn(
      {"run", "--checkpoint", dir, "--layer", "0", "--x", tiny("tiny-llama/x_layer0.npy")});
  EXPECT_EQ(s.code, 3);
  const uint64_t first8 = 0x303a783a746f6f72ull;  // "root:x:0" as the header length
  EXPECT_EQ(s.err.find(std::to_string(first8)), std::string::npos) << s.err;
  EXPECT_EQ(s.err.find("root"), std::string::npos) << s.err;
}

// ---- 3. memory before --max-elements ------------------------------------

// Runs attn under an address-space cap of `mb` megabytes (as
// hardening_cli_test.cc's run_attn_capped; the sanitized build, whose
// shadow memory cannot start under a cap, checks the outcome alone).
test::Run run_capped(const std::vector<std::string>& args, int mb) {
  if (ATTN_SANITIZED) return run_attn(args);
  return run_attn(
      args, "", {},
      {"sh", "-c", "ulimit -v " + std::to_string(mb * 1024) + " && exec \"$0\" \"$@\""});
}

// A sparse file: `head`, then zeros up to `size` bytes (no disk blocks).
std::string sparse_file(const std::string& name, const std::string& head, uint64_t size,
                        const std::string& tail = "") {
  const std::string path = temp_dir() + "/" + name;
  { std::ofstream(path, std::ios::binary) << head; }
  EXPECT_EQ(::truncate(path.c_str(), static_cast<off_t>(size - tail.size())), 0);
  if (!tail.empty()) std::ofstream(path, std::ios::binary | std::ios::app) << tail;
  return path;
}

// The .npy header of a C-order array (version 1.0, padded to 64 bytes).
std::string npy_header(const std::string& descr, const std::string& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  dict.append(64 - (10 + dict.size() + 1) % 64, ' ');
  dict += '\n';
  std::string h("\x93NUMPY\x01\x00", 8);
  h += static_cast<char>(dict.size() & 0xff);
  h += static_cast<char>(dict.size() >> 8);
  return h + dict;
}

uint32_t crc32_of(const std::string& head, uint64_t zeros) {
  uint32_t table[256];
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char ch : head) c = table[(c ^ ch) & 0xff] ^ (c >> 8);
  for (uint64_t i = 0; i < zeros; ++i) c = table[c & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::string le(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// An .npz archive of one stored member "x.npy": `npy_head` then `zeros`.
std::string sparse_npz(const std::string& name, const std::string& npy_head, uint64_t zeros) {
  const uint64_t size = npy_head.size() + zeros;
  const uint32_t crc = crc32_of(npy_head, zeros);
  const std::string member = "x.npy";
  std::string local = le(0x04034b50, 4) + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(crc, 4) +
                      le(size, 4) + le(size, 4) + le(member.size(), 2) + le(0, 2) + member;
  const uint64_t dir_at = local.size() + size;
  std::string dir = le(0x02014b50, 4) + le(20, 2) + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
                    le(crc, 4) + le(size, 4) + le(size, 4) + le(member.size(), 2) + le(0, 2) +
                    le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(0, 4) + member;
  const std::string end = le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(1, 2) + le(1, 2) +
                          le(dir.size(), 4) + le(dir_at, 4) + le(0, 2);
  return sparse_file(name, local + npy_head, dir_at + dir.size() + end.size(), dir + end);
}

TEST(Hardening3Cli, TheLargestRefusedHeadersTakeNoMemory) {
  // Each format's largest header that the default limits refuse, its data
  // a gigabyte of sparse zeros: refused from the header, under a 3 GB
  // address-space cap that the file's mapping fits in and its decoding (8
  // bytes a cell: 8 GB; a 128 MiB file took 3.3 GB before) does not.
  // Within --max-input-bytes (2^30) with their headers.
  const uint64_t u8_cells = (uint64_t{1} << 30) - 256, f16_cells = u8_cells / 2;
  const std::string u8_head = npy_header("|u1", "(1, " + std::to_string(u8_cells) + ")");
  const std::string npy = sparse_file("big_u8.npy", u8_head, u8_head.size() + u8_cells);
  const std::string f16_head = npy_header("<f2", "(1, " + std::to_string(f16_cells) + ")");
  const std::string f16 = sparse_file("big_f16.npy", f16_head, f16_head.size() + 2 * f16_cells);
  const std::string st_header =
      R"({"x":{"dtype":"U8","shape":[1,1073741000],"data_offsets":[0,1073741000]}})";
  const std::string st = sparse_file("big_u8.safetensors", le(st_header.size(), 8) + st_header,
                                     8 + st_header.size() + 1073741000);
  const uint64_t npz_cells = uint64_t{1} << 27;  // 128 MiB: its CRC-32 is read
  const std::string npz = sparse_npz("big_u8.npz", npy_header("|u1", "(1, 134217728)"), npz_cells);
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"run", npy}, npy + ": shape [1][1073741568] holds 1073741568 elements"},
      {{"run", npy, "--max-elements", "1000"}, npy + ": shape [1][1073741568] holds"},
      {{"run", "--example", "sweet", "--mask", npy}, npy + ": shape [1][1073741568] holds"},
      {{"run", "--x", st}, st + ":x: shape [1][1073741000] holds 1073741000 elements"},
      {{"run", "--x", npz + ":x"}, npz + ":x: shape [1][134217728] holds 134217728 elements"},
      {{"heatmap", f16, "-o", temp_dir() + "/big.png"},
       f16 + ": shape [1][536870784] holds 536870784 elements"},
      {{"diff", f16, f16}, f16 + ": shape [1][536870784] holds 536870784 elements"},
  };
  for (const Case& c : cases) {
    const auto r = run_capped(c.args, 3000);
    EXPECT_EQ(r.code, 3) << c.args[1] << ": " << r.err;
    EXPECT_EQ(r.err.rfind("attn: error: " + c.message, 0), 0u) << r.err;
    EXPECT_NE(r.err.find("more than --max-elements"), std::string::npos) << r.err;
  }
}

// ---- 5. a mapped file cut short while it is read -----------------------

// A safetensors file of one float64 tensor of n cells.
std::string write_safetensors(const std::string& name, int64_t n) {
  const std::string header = R"({"w":{"dtype":"F64","shape":[)" + std::to_string(n) +
                             R"(],"data_offsets":[0,)" + std::to_string(8 * n) + "]}}";
  std::string bytes(8, '\0');
  const uint64_t len = header.size();
  std::memcpy(&bytes[0], &len, 8);
  bytes += header;
  bytes.append(static_cast<size_t>(8 * n), '\x01');
  const std::string path = temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(MappedFiles, ATensorCutShortWhileReadIsAnInputErrorNotSigbus) {
  const int64_t n = 1 << 18;  // 2 MiB of cells: many pages past the cut
  const std::string path = write_safetensors("cut.safetensors", n);
  const SafetensorsFile f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.view(f.get("w")).keep.mapped());
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0);  // another program cuts the file
  const std::string e = test::error_of([&] { f.read(f.get("w"), CellKind::kFinite); });
  EXPECT_EQ(e, path +
                   ":w: the file was cut short while attn read it (another program truncated or "
                   "rewrote it); run again once the file is complete");
  // Reading again keeps failing: the zero pages are not data.
  EXPECT_EQ(test::error_of([&] { f.read(f.get("w"), CellKind::kFinite); }), e);
}

TEST(MappedFiles, ANpyViewCutShortIsAnInputError) {
  const std::string path = temp_dir() + "/cut.npy";
  Tensor<double> t(Shape{512, 512});
  for (int64_t i = 0; i < t.size(); ++i) t[i] = 1.0;
  std::ofstream(path, std::ios::binary) << format_npy(t, DType::kF64);
  const BinaryArray a = view_npy(map_file(path), path, 4);
  ASSERT_EQ(::truncate(path.c_str(), 8192), 0);
  const std::string e = test::error_of([&] { a.to_tensor(path, CellKind::kFinite); });
  EXPECT_NE(e.find("the file was cut short while attn read it"), std::string::npos) << e;
}

TEST(Hardening3Cli, ATruncatedSafetensorsGivesExitThreeNamingTheFile) {
  // The whole program, with the file cut while the run reads it: a run
  // over a large tensor, the file truncated from outside mid-way.
  const int64_t n = int64_t{1} << 24;  // 128 MiB: reading it takes a while
  const std::string path = write_safetensors("race.safetensors", n);
  std::vector<std::string> args = {"run", "--x", path, "-o", "/dev/null", "--max-elements", "2^30"};
  // The cut comes from a shell running beside attn; either it lands
  // while attn reads (exit 3, named) or after (exit 0 or an error of the
  // numbers); never a signal.
  const std::string cmd = "( sleep 0.05; truncate -s 4096 " + test::quote(path) + " ) & " +
                          test::quote(ATTN_BINARY) + " run --x " + test::quote(path) +
                          " -o /dev/null --max-elements '2^30' --max-input-bytes '2^31'";
  const test::Run r = test::run_redirected(cmd, temp_dir() + "/race.out", temp_dir() + "/race.err");
  EXPECT_LT(r.code, 128) << "killed by a signal: " << r.err;
  if (r.code == 3 && r.err.find("cut short") != std::string::npos) {
    EXPECT_EQ(r.err, "attn: error: " + path +
                         ":w: the file was cut short while attn read it (another program "
                         "truncated or rewrote it); run again once the file is complete\n");
  }
}

// ---- 8. every result attn writes reads back -----------------------------

TEST(Hardening3Cli, ResultsWithTheLongestLabelsReadBack) {
  const std::string x = write_temp("two_rows.json", "[[1, 0], [0, 1]]");
  // A label of 1,000,000 characters (the npz's '<U1000000'), as a token.
  const std::string tok = write_temp("long_tokens.txt", std::string(1000000, 'a') + "\nb\n");
  const std::string npz = temp_dir() + "/long.npz", json = temp_dir() + "/long.json";
  ASSERT_EQ(run_attn({"run", "--x", x, "--tokens", tok, "-o", npz, "-w"}).code, 0);
  ASSERT_EQ(run_attn({"run", "--x", x, "--tokens", tok, "-o", json, "-w", "-f", "json"}).code, 0);
  for (const std::string& f : {npz, json}) {
    const auto r = run_attn({"heatmap", f, "-o", temp_dir() + "/long.svg"});
    EXPECT_EQ(r.code, 0) << f << ": " << r.err;
  }
  // One byte more than a result can hold is refused before anything is written.
  const std::string too_long =
      write_temp("too_long_tokens.txt", std::string((1u << 20) + 1, 'a') + "\nb\n");
  const auto r = run_attn({"run", "--x", x, "--tokens", too_long, "-o", npz});
  EXPECT_EQ(r.code, 2) << r.err;  // labels from a flag's file, as a count that does not fit
  EXPECT_NE(r.err.find("label 0 has 1048577 bytes; labels are limited to 1048576 bytes"),
            std::string::npos)
      << r.err;
}

// ---- 11. what a result says of its numbers must fit them ----------------

TEST(Hardening3Cli, TamperedResultsAreRefusedNotDrawn) {
  const auto base = run_attn({"run", "--example", "sweet", "-f", "json", "-w"});
  ASSERT_EQ(base.code, 0);
  const nlohmann::json result = nlohmann::json::parse(base.out);
  struct Case {
    std::string name;
    std::function<void(nlohmann::json&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"short_labels", [](nlohmann::json& d) { d["labels"]["queries"].erase(0); },
       ": labels.queries: 3 labels for 4 queries (rows of weights [4][4])"},
      {"axes",
       [](nlohmann::json& d) {
         d["weights_axes"] = {"foo", "bar"};
       },
       ": weights_axes: [foo, bar] are not the axes of weights [4][4]; an attn result names them "
       "[batch, heads,] queries, keys"},
      {"masked",
       [](nlohmann::json& d) {
         d["masked"] =
             nlohmann::json::array({{2, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}});
       },
       ": masked[0][0]: mask cells must be true/false or 0/1, got 2"},
      {"title", [](nlohmann::json& d) { d["title"] = 5; }, ": title: expected a string, got 5"},
      {"unknown", [](nlohmann::json& d) { d["extra"] = 1; },
       ": unknown key \"extra\" in an attn result (it holds labels, labels_readable, title, "
       "settings, output, weights, weights_axes, masked, similarity)"},
  };
  for (const Case& c : cases) {
    nlohmann::json d = result;
    c.edit(d);
    const std::string f = write_temp("tampered_" + c.name + ".json", d.dump());
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"heatmap", f, "-o", temp_dir() + "/t.svg"},
          std::vector<std::string>{"diff", f, f}}) {
      const auto r = run_attn(args);
      EXPECT_EQ(r.code, 3) << c.name << ": " << r.err;
      EXPECT_EQ(r.err, "attn: error: " + f + c.message + "\n") << args[0];
    }
  }
}

// ---- from the engineer's workflow: pickles and ambiguous labels ---------

TEST(Hardening3Cli, PicklesAreNeverOpenedAndNameTheirConversion) {
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

TEST(Hardening3Cli, AQueryLabelThatNamesTwoQueriesIsNotGuessed) {
  const std::string x = write_temp("three_rows.json", "[[1, 0], [0, 1], [1, 1]]");
  const std::string tokens = write_temp("the_cat_the.json", "[\"the\", \"cat\", \"the\"]");
  const auto r = run_attn({"run", x, "--tokens", tokens, "--trace", "--query", "the"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: --query the: queries 0 (the₀), 2 (the₂) are all called 'the'; give "
            "the index of the one to trace\n");
  EXPECT_EQ(run_attn({"run", x, "--tokens", tokens, "--trace", "--query", "2"}).code, 0);
  // The name the table shows picks one of them.
  EXPECT_EQ(run_attn({"run", x, "--tokens", tokens, "--trace", "--query", "the₂"}).code, 0);
}

TEST(Hardening3Cli, AQueryIsFoundByHowItsTokenReads) {
  const std::string x = write_temp("four_rows.json", "[[1, 0], [0, 1], [1, 1], [2, 1]]");
  for (const char* list :
       {R"(["The", "Ġcat", "Ġsat", "Ġthe"])", R"(["The", "▁cat", "▁sat", "▁the"])",
        R"(["The", " cat", " sat", " the"])"}) {
    const std::string tokens = write_temp("spaced.json", list);
    const auto r = run_attn({"run", x, "--tokens", tokens, "--trace", "--query", "cat"});
    EXPECT_EQ(r.code, 0) << list << r.err;
    EXPECT_NE(r.out.find("query 1 ("), std::string::npos) << r.out;
  }
}

TEST(Hardening3Cli, SlidingWindowCountsAsHuggingFaceDoes) {
  // config.sliding_window W: W keys up to and including the query, which
  // is --window W-1,0 (and not --window W, which sees one key more).
  const auto hf = run_attn(
      {"run", "--example", "sweet", "--causal", "--sliding-window", "2", "-f", "json", "-w"});
  const auto lr =
      run_attn({"run", "--example", "sweet", "--causal", "--window", "1,0", "-f", "json", "-w"});
  const auto w =
      run_attn({"run", "--example", "sweet", "--causal", "--window", "2", "-f", "json", "-w"});
  ASSERT_EQ(hf.code, 0) << hf.err;
  EXPECT_EQ(nlohmann::json::parse(hf.out)["weights"], nlohmann::json::parse(lr.out)["weights"]);
  EXPECT_NE(nlohmann::json::parse(hf.out)["weights"], nlohmann::json::parse(w.out)["weights"]);
  // Query 2 ("it") sees itself and the key before it, not "cat".
  const auto row = nlohmann::json::parse(hf.out)["weights"][2];
  EXPECT_EQ(row[0], 0);
  EXPECT_GT(row[1].get<double>(), 0);
  const auto zero = run_attn({"run", "--example", "sweet", "--sliding-window", "0"});
  EXPECT_EQ(zero.code, 2);
  EXPECT_EQ(zero.err,
            "attn: error: --sliding-window: expected a whole number of keys >= 1 (the query "
            "counts as one)\n");
}

}  // namespace
}  // namespace attn
