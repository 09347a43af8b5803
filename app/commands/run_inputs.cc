// Gathering the input document of `attn run`: the file, stdin or a
// built-in example, then the matrix files, lists and settings given as
// flags, which replace the document's.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "attn/checkpoint.h"
#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "attn/json_tensor.h"
#include "attn/matrix_file.h"
#include "attn/tokenizer.h"
#include "base/names.h"
#include "base/number_text.h"
#include "base/path.h"
#include "base/utf8.h"
#include "commands/examples.h"
#include "commands/flags.h"
#include "commands/run_internal.h"
#include "io/formats.h"
#include "io/open_beneath.h"
#include "io/tokens.h"
#include "model/model_store.h"

namespace attn::detail {

namespace {

// Reads an input, reporting the bytes read (large files take a while).
std::string read_input(const RunRequest& req, const std::string& path) {
  return read_file(
      path, progress_task(req.progress, "reading " + display_name(path), ProgressUnit::kBytes),
      req.max_input_bytes);
}

std::string read_input(const RunRequest& req, const OpenedFile& file) {
  return read_file(
      file,
      progress_task(req.progress, "reading " + display_name(file.path()), ProgressUnit::kBytes),
      req.max_input_bytes);
}

// Reads a matrix flag's file, or one tensor of a .safetensors/.npz file.
MatrixData read_input_matrix(const RunRequest& req, const std::string& spec, CellKind kind) {
  return read_matrix(
      spec, kind,
      progress_task(req.progress, "reading " + display_name(spec), ProgressUnit::kBytes),
      req.max_input_bytes, req.max_elements);
}

// Stdin can be read once: a second "-" would read nothing.
void refuse_double_stdin(const RunRequest& req) {
  const MatrixFiles& m = req.matrices;
  const std::pair<const std::string*, const char*> ins[] = {
      {&req.input, "the input"},
      {&m.x, "--x"},
      {&m.y, "--y"},
      {&m.q, "--q"},
      {&m.k, "--k"},
      {&m.v, "--v"},
      {&m.mask, "--mask"},
      {&m.bias, "--bias"},
      {&m.key_padding_mask, "--key-padding-mask"},
      {&req.expect_path, "--expect"},
      {&req.tokens, "--tokens"}};
  const char* first = nullptr;
  for (const auto& [path, what] : ins) {
    if (*path != "-") continue;
    if (first) {
      throw_usage(std::string(first) + " and " + what +
                  " both read stdin (-); stdin can be read once");
    }
    first = what;
  }
}

// Where a document names files: its directory, as given ("." for none).
std::string directory_of(const std::string& doc_path) {
  const std::string dir = path::directory_prefix(doc_path);
  return dir.empty() ? "." : dir;
}

// A document in a file and its directory, the document opened through
// the directory's descriptor: the files it names are opened beneath that
// same descriptor, so that the document and its files come from one
// directory whatever its path is made to point at meanwhile.
struct DocumentFile {
  OpenedFile dir, file;
};

// Nothing for stdin and a path whose last part names no file in a
// directory ("dir/", ".."): those are read by their path.
std::optional<DocumentFile> open_document(const std::string& path) {
  const std::string base = path::file_name_of(path);
  if (path == "-" || base.empty() || base == "." || base == "..") return std::nullopt;
  const std::string dir = directory_of(path);
  const int dir_fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) throw_file(path, std::string("cannot open: ") + std::strerror(errno));
  OpenedFile d(dir_fd, dir);
  // O_NONBLOCK: a FIFO is refused by read_file, never waited for.
  const int fd = ::openat(dir_fd, base.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) throw_file(path, std::string("cannot open: ") + std::strerror(errno));
  return DocumentFile{std::move(d), OpenedFile(fd, path)};
}

// The file `rel` below the directory `dir`, opened without leaving it: in
// one step (openat2's RESOLVE_BENEATH), so that another program cannot
// swap it for a link out between a check and the open, and checked to be
// a regular file (a FIFO would block, a device never end). `full` names
// it in messages; `quoted` is the reference as the document wrote it.
OpenedFile open_below(const OpenedFile& dir, const std::string& rel, const std::string& full,
                      const std::string& place, const std::string& quoted) {
  const detail::BeneathFile opened = detail::open_beneath(dir.fd(), rel);
  if (opened.fd < 0) {
    if (opened.error == EXDEV) {
      throw_input(place, quoted +
                             "leads out of the document's directory through a symbolic link; a "
                             "document names files in its own directory (or below it)");
    }
    if (opened.error == ELOOP && opened.no_links) {
      throw_input(place, quoted +
                             "passes through a symbolic link, which attn follows in a document's "
                             "directory only where the kernel has openat2 (Linux 5.6)");
    }
    if (opened.error == ELOOP) throw_input(place, quoted + "is a loop of symbolic links");
    throw_file(full, std::string("cannot open: ") + std::strerror(opened.error));
  }
  OpenedFile file(opened.fd, full);
  struct stat st {};
  if (::fstat(file.fd(), &st) != 0) {
    throw_file(full, std::string("cannot read: ") + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    throw_input(place, quoted + "is " + file_kind(st.st_mode) + ", not a regular file");
  }
  return file;
}

// The files a document in a file may name for its tensors: paths relative
// to its directory that stay inside it. "..", an absolute path or a
// symbolic link out of the directory is refused: a document is data,
// often someone else's, and must not read (and put into a result) any
// file the user can read. The file is read from the descriptor that
// opened it, never by its path again.
TensorFileReader document_files(const RunRequest& req, const OpenedFile& directory) {
  return [&req, directory](const std::string& reference, const std::string& place,
                           CellKind kind) -> Input {
    const TensorReference ref = split_tensor_reference(reference);
    const std::string& rel = ref.path;
    const std::string quoted = "\"" + message_text(reference) + "\" ";
    auto refuse = [&](const std::string& why) {
      throw_input(place,
                  quoted + why + "; a document names files in its own directory (or below it)");
    };
    if (rel.empty()) refuse("names no file");
    if (rel.front() == '/') refuse("is an absolute path");
    size_t from = 0;
    while (from <= rel.size()) {
      const size_t slash = std::min(rel.find('/', from), rel.size());
      if (rel.compare(from, slash - from, "..") == 0 && slash - from == 2) {
        refuse("climbs out of the document's directory through \"..\"");
      }
      from = slash + 1;
    }
    const std::string& dir = directory.path();
    // Named as the run finds it from the directory attn ran in: messages
    // and a program that loads it again (--emit-pytorch) use this.
    const std::string full = (dir == "." ? rel : dir + rel);
    const OpenedFile file = open_below(directory, rel, full, place, quoted);
    MatrixData m = read_matrix(TensorReference{full, ref.tensor, file}, kind, {},
                               req.max_input_bytes, req.max_elements);
    return Input{std::move(m.values), place, std::move(m.origin)};
  };
}

}  // namespace

// The document a run starts from: a JSON document, a matrix file taken as
// X, a built-in example, or nothing (everything from flags).
InputDocument load_document(const RunRequest& req) {
  refuse_double_stdin(req);
  if (!req.example.empty()) {
    if (!req.input.empty()) {
      throw_usage("give either an input file or --example, not both");
    }
    const Example* ex = find_example(req.example);
    if (!ex) {
      std::string near = closest_name(req.example, example_names());
      throw_usage("--example: no example called '" + req.example + "'" +
                  (near.empty() ? "" : "; did you mean '" + near + "'?") +
                  " (attn examples lists them)");
    }
    return read_document(ex->text(), "example " + ex->name);
  }
  if (req.input.empty()) {
    const auto files = req.matrices.sequences();
    if (std::all_of(files.begin(), files.end(), [](const auto& f) { return f.second->empty(); }) &&
        !req.checkpoint.from_tokens()) {
      if (!req.checkpoint.path.empty()) {
        throw_usage("--checkpoint " + req.checkpoint.path + " --layer " +
                    std::to_string(req.checkpoint.layer) +
                    ": no input; give --text TEXT or --ids I,J,... (the layers before it run "
                    "first), or the hidden states entering the layer with --x FILE");
      }
      // Nothing to compute is a mistake in the command line, not in data.
      throw_usage(
          "no input; usage: attn run FILE... | --example NAME | --x FILE [--y FILE] | "
          "--q FILE --k FILE [--v FILE] [options] (attn run --help lists the options)");
    }
    InputDocument doc;
    // Messages about the numbers name the files they came from
    // ("--x big.npy: the score of ... overflows"); settings stay "<flags>".
    for (const auto& [role, path] : files) {
      if (path->empty()) continue;
      std::string flag = std::string("--") + role;
      flag[2] = static_cast<char>(std::tolower(static_cast<unsigned char>(flag[2])));
      doc.source += (doc.source.empty() ? "" : ", ") + flag + " " + display_name(*path);
    }
    if (doc.source.empty()) doc.source = display_name(req.checkpoint.path);
    doc.settings_place = "<flags>";
    return doc;
  }
  const std::string name = display_name(req.input);
  refuse_pickle(req.input);
  MatrixData m;
  // Binary files are mapped and checked from their header, not read whole.
  if (mapped_format(req.input)) {
    m = read_input_matrix(req, req.input, CellKind::kFinite);
  } else {
    const std::optional<DocumentFile> opened = open_document(req.input);
    const std::string text = opened ? read_input(req, opened->file) : read_input(req, req.input);
    if (matrix_format(req.input, text) == MatrixFormat::kJson) {
      // Only a document in a regular file has a directory to name files
      // in: stdin, /dev/stdin or a pipe has none.
      struct stat st {};
      const bool regular = opened && ::fstat(opened->file.fd(), &st) == 0 && S_ISREG(st.st_mode);
      if (!regular) return read_document(text, name);
      return read_document(text, name, document_files(req, opened->dir));
    }
    m = parse_matrix(text, req.input, CellKind::kFinite, req.max_elements);
  }
  // A matrix file is the X of a self-attention run.
  InputDocument doc;
  doc.source = name;
  doc.settings_place = name;
  doc.X = Input{std::move(m.values), name, std::move(m.origin)};
  if (!m.row_labels.empty()) {
    doc.labels = LabelSet{m.row_labels, m.row_labels, true, name};
  }
  return doc;
}

std::optional<Tokenizer> run_tokenizer(const RunRequest& req, bool needed) {
  const CheckpointFlags& c = req.checkpoint;
  if (!c.tokenizer.empty()) return Tokenizer::load(c.tokenizer);
  // A model by name, or a GGUF file, which carries its own tokenizer.
  if (model::is_store_name(c.path) || model::checkpoint_is_gguf(c.path)) {
    if (needed) return model::checkpoint_tokenizer(c.path);
    return model::checkpoint_tokenizer_if_any(c.path);
  }
  const path::Kind kind = path::kind_of(c.path);
  if (kind != path::Kind::kNone && kind != path::Kind::kDirectory) {
    // One file of weights has no tokenizer beside it to trust: reading the
    // weights as tokenizer.json would only fail with a parse error.
    if (!needed) return std::nullopt;
    throw_usage("--checkpoint " + c.path +
                " is a file of weights, without a tokenizer: give the model's directory "
                "(--checkpoint DIR) or --tokenizer FILE|DIR");
  }
  const std::string tj = path::join(c.path, "tokenizer.json");
  if (path::is_regular_file(tj)) return Tokenizer::load(tj);
  if (!needed) return std::nullopt;
  throw_file(display_name(c.path),
             "no tokenizer.json in this directory; give --tokenizer FILE|DIR (the model's own "
             "tokenizer.json), or the token ids with --ids");
}

CheckpointTokens checkpoint_tokens(const RunRequest& req) {
  const CheckpointFlags& c = req.checkpoint;
  CheckpointTokens out;
  if (c.text) {
    const Tokenizer t = *run_tokenizer(req, true);
    const Encoding e = t.encode(*c.text, !c.no_special, "--text");
    if (e.ids.empty()) throw_usage("--text: the text has no tokens");
    out.ids = e.ids;
    out.source = "--text (tokenized by " + t.name() + ")";
    for (const std::string& tk : e.tokens) out.labels.push_back(t.readable(tk));
    return out;
  }
  out.ids = c.ids;
  // Tokens as labels where the checkpoint has its tokenizer (a GGUF file
  // may carry its own), else the ids.
  const std::optional<Tokenizer> t = run_tokenizer(req, false);
  for (int64_t id : c.ids) {
    const std::string tk = t ? t->token(id) : "";
    out.labels.push_back(tk.empty() ? std::to_string(id) : t->readable(tk));
  }
  return out;
}

ForwardRequest forward_request(const RunRequest& req, const CheckpointTokens& t) {
  ForwardRequest fr;
  fr.checkpoint = req.checkpoint.path;
  fr.arch = req.checkpoint.arch;
  fr.layer = req.checkpoint.layer;
  fr.ids = t.ids;
  fr.ids_source = t.source;
  fr.max_bytes = req.max_input_bytes;
  fr.max_elements = req.max_elements;
  fr.threads = req.threads;
  fr.dtype = req.dtype;
  fr.progress = progress_task(req.progress, "running the model (layers)");
  return fr;
}

std::vector<TraceStep> model_input_steps(const RunRequest& req) {
  const CheckpointTokens t = checkpoint_tokens(req);
  const LayerInput in = layer_input(forward_request(req, t));
  const auto q = static_cast<Eigen::Index>(t.ids.size());
  auto matrix = [&](const Tensor<double>& m) {
    return MatrixR(Eigen::Map<const MatrixR>(m.data(), m.dim(0), m.dim(1)));
  };
  std::vector<TraceStep> steps;
  auto add = [&](StepId id, MatrixR values, std::string detail) {
    TraceStep s;
    s.id = id;
    s.facts.detail = std::move(detail);
    s.facts.layer = req.checkpoint.layer;
    s.values = std::move(values);
    if (s.values.size() > 0) s.row_labels = t.labels;
    steps.push_back(std::move(s));
  };
  MatrixR ids(q, 1);
  for (Eigen::Index i = 0; i < q; ++i)
    ids(i, 0) = static_cast<double>(t.ids[static_cast<size_t>(i)]);
  add(StepId::kTokenIds, ids,
      req.checkpoint.text.has_value()
          ? "the text through " + display_name(req.checkpoint.path) +
                (model::checkpoint_is_gguf(req.checkpoint.path) ? "'s tokenizer"
                                                                : "'s tokenizer.json")
          : "as given by --ids");
  steps.back().col_labels = {"id"};
  add(StepId::kEmbeddings, matrix(in.embeddings), in.embedding);
  if (req.checkpoint.layer > 0) add(StepId::kHiddenIn, matrix(in.hidden), "");
  if (!in.norm.empty()) add(StepId::kInputNorm, MatrixR(), in.norm + ", w = " + in.norm_tensor);
  return steps;
}

// A checkpoint's layer replaces the document's params and its settings
// come before the flags' (which win).
void apply_checkpoint(const RunRequest& req, InputDocument& doc) {
  const CheckpointFlags& c = req.checkpoint;
  if (c.path.empty()) {
    if (!c.arch.empty()) throw_usage("--arch needs --checkpoint");
    return;
  }
  LayerRequest lr;
  lr.checkpoint = c.path;
  lr.layer = c.layer;
  lr.arch = c.arch;
  lr.max_bytes = req.max_input_bytes;
  lr.max_elements = req.max_elements;
  CheckpointLayer layer = load_checkpoint_layer(lr);
  if (c.from_tokens()) {
    if (doc.X || doc.Q || doc.Y) {
      throw_usage(std::string(c.text ? "--text" : "--ids") +
                  " computes the layer's input; give it or --x (or a document), not both");
    }
    const CheckpointTokens t = checkpoint_tokens(req);
    doc.X = Input{attention_input(forward_request(req, t)),
                  display_name(c.path) + " layer " + std::to_string(c.layer) + " input"};
    if (!doc.labels) doc.labels = LabelSet{t.labels, t.labels, true, c.text ? "--text" : "--ids"};
  }
  if (layer.heads_from_x) {
    // The layer's own projections make its heads (latent attention, clipped
    // or LayerNorm-ed Q and K): the attention starts from them.
    if (!doc.X) {
      throw_usage("--checkpoint " + c.path + " --layer " + std::to_string(c.layer) +
                  ": this layer's heads are computed from the hidden states; give --x FILE, "
                  "--text TEXT or --ids I,J,...");
    }
    if (doc.Y || doc.Q) {
      throw_usage("--checkpoint " + c.path + " --layer " + std::to_string(c.layer) +
                  " is self-attention of --x: Y, Q, K and V are its own");
    }
    LayerHeads heads = checkpoint_layer_heads(lr, doc.X->tensor);
    doc.Q = std::move(heads.Q);
    doc.K = std::move(heads.K);
    doc.V = std::move(heads.V);
    doc.X.reset();
    layer.settings.mode = Mode::kQkv;
  }
  doc.params = std::move(layer.params);
  doc.settings.merge(layer.settings);
  if (doc.settings_place == "<flags>") doc.settings_place = display_name(c.path);
  if (doc.title.empty()) doc.title = layer.title;
  if (doc.description.empty()) doc.description = layer.description;
}

// Flags replace the document's inputs and settings.
void apply_flags(const RunRequest& req, InputDocument& doc) {
  struct Slot {
    const std::string* path;
    std::optional<Input>* target;
    CellKind kind;
    bool query_side;  // its row labels name queries (else keys)
  };
  const MatrixFiles& m = req.matrices;
  std::optional<Input> kpm;
  const Slot slots[] = {
      {&m.x, &doc.X, CellKind::kFinite, true},
      {&m.y, &doc.Y, CellKind::kFinite, false},
      {&m.q, &doc.Q, CellKind::kFinite, true},
      {&m.k, &doc.K, CellKind::kFinite, false},
      {&m.v, &doc.V, CellKind::kFinite, false},
      {&m.mask, &doc.mask, CellKind::kBool, true},
      {&m.bias, &doc.attn_bias, CellKind::kExtended, true},
      {&m.key_padding_mask, &doc.key_padding_mask, CellKind::kBool, false},
  };
  std::vector<std::string> query_labels, key_labels;
  for (const Slot& s : slots) {
    if (s.path->empty()) continue;
    MatrixData md = read_input_matrix(req, *s.path, s.kind);
    *s.target = Input{std::move(md.values), display_name(*s.path), std::move(md.origin)};
    if (!md.row_labels.empty()) (s.query_side ? query_labels : key_labels) = md.row_labels;
    if (s.target == &doc.mask || s.target == &doc.attn_bias) {
      if (!md.column_labels.empty()) key_labels = md.column_labels;
    }
  }
  if (!req.valid_lens.empty()) {
    const std::string& t = req.valid_lens;
    Tensor<double> lens;
    if (t.find('[') != std::string::npos) {
      try {
        lens =
            json_to_tensor(json::parse(t, "--valid-lens"), "--valid-lens", "", CellKind::kCount, 2);
      } catch (const Error& e) {
        throw_usage(e.what());  // a flag's value: a usage error, whatever its form
      }
    } else {
      std::vector<std::string> parts = split_list(t);
      Values<double> v;
      for (const std::string& p : parts) {
        const auto n = parse_unsigned_text(p);
        if (!n) {
          if (!p.empty() && p.find_first_not_of("0123456789") == std::string::npos) {
            throw_usage("--valid-lens: " + message_text(p) +
                        " is too large; a valid length is at most " + std::to_string(kMaxCount) +
                        " (any length >= the key count masks nothing)");
          }
          throw_usage("--valid-lens: expected non-negative integers such as 2,6, got '" +
                      message_text(t) + "'");
        }
        if (*n > kMaxCount) {
          throw_usage("--valid-lens: " + p + " is too large; a valid length is at most " +
                      std::to_string(kMaxCount) + " (any length >= the key count masks nothing)");
        }
        v.push_back(static_cast<double>(*n));
      }
      if (v.size() == 1 && t.find(',') == std::string::npos) {
        lens = Tensor<double>(Shape{}, std::move(v));
      } else {
        // The shape first: function arguments are evaluated in no fixed
        // order, and std::move(v) may run before v.size().
        const Shape shape{static_cast<int64_t>(v.size())};
        lens = Tensor<double>(shape, std::move(v));
      }
    }
    doc.valid_lens = Input{std::move(lens), "--valid-lens"};
  }
  apply_checkpoint(req, doc);
  // Labels: flags, then the document, then labels found in matrix files.
  if (!req.tokens.empty()) {
    if (!req.labels.empty()) throw_usage("give --tokens or --labels, not both");
    LabelSet l;
    l.place = "--tokens " + display_name(req.tokens);
    l.queries = read_tokens(req.tokens, req.max_input_bytes);
    if (!req.key_labels.empty()) {
      l.keys = split_list(req.key_labels);
    } else {
      l.keys = l.queries;
      l.shared = true;
    }
    doc.labels = l;
  } else if (!req.labels.empty() || !req.key_labels.empty()) {
    LabelSet l;
    l.place = !req.labels.empty() ? "--labels" : "--key-labels";
    for (const auto& [flag, text] :
         {std::pair{"--labels", &req.labels}, {"--key-labels", &req.key_labels}}) {
      const size_t bad = invalid_utf8_offset(*text);
      if (bad != std::string::npos) {
        throw_usage(std::string(flag) + ": byte " + std::to_string(bad) +
                    " is not UTF-8; labels must be UTF-8 text");
      }
    }
    if (!req.labels.empty()) l.queries = split_list(req.labels);
    if (!req.key_labels.empty()) {
      l.keys = split_list(req.key_labels);
    } else if (doc.labels && !doc.labels->keys.empty() && !doc.labels->shared) {
      l.keys = doc.labels->keys;
    } else {
      l.keys = l.queries;
      l.shared = true;
    }
    doc.labels = l;
  } else if (!doc.labels && (!query_labels.empty() || !key_labels.empty())) {
    LabelSet l;
    l.place = "labels from matrix files";
    l.queries = query_labels;
    l.keys = key_labels;
    const bool self = !doc.Y && !doc.Q;
    if (self && l.keys.empty()) l.keys = l.queries;
    doc.labels = l;
  }
  if (req.title) doc.title = *req.title;
  if (req.description) doc.description = *req.description;
  doc.settings.merge(req.settings);
  if (req.settings.mode || req.settings.variant || req.settings.heads || req.settings.scale ||
      req.settings.any_modern()) {
    // Settings now mix two sources; messages about them name both.
    if (doc.settings_place != "<flags>") doc.settings_place = doc.source + " and flags";
  }
}

}  // namespace attn::detail
