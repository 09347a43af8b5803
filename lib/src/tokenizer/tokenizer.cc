// tokenizer.json read into the pipeline of the tokenizers library and run:
// added tokens, normalizer, pre-tokenizer, model, post-processor.
#include "attn/tokenizer.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "base/path.h"
#include "base/utf8.h"
#include "io/gguf.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/model.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/unicode.h"

namespace attn {

using tok::to_u32;
using tok::to_utf8;

namespace {

// One part of the post-processor's template: special tokens, or the text.
struct TemplatePart {
  bool sequence = false;
  std::vector<int64_t> ids;
  std::vector<std::string> tokens;
};

}  // namespace

struct detail::TokenizerState {
  std::string name;
  TokenizerLimits limits;
  enum class Model { kBpe, kWordPiece, kWordLevel } model = Model::kBpe;
  tok::Vocab vocab;
  tok::Bpe bpe;
  tok::WordPiece wordpiece;
  std::optional<int64_t> wordlevel_unk;
  std::vector<tok::Normalizer> normalizers;
  std::vector<tok::PreTokenizer> pre_tokenizers;
  std::vector<tok::AddedToken> added;
  // The added tokens in two sets: matched on the text as given, and on
  // the normalized text.
  tok::AddedTokenSet raw_set, normalized_set;
  std::vector<TemplatePart> post;  // empty: no special tokens are added
  bool byte_level = false;         // tokens are in GPT-2's byte alphabet
  char32_t metaspace = 0;          // SentencePiece's ▁ (or the file's), when used
  // A GGUF file's tokenizer, which does the encoding when set.
  std::unique_ptr<tok::GgufVocab> gguf;

  std::string token_of(int64_t id) const {
    if (gguf) return gguf->token(id);
    if (id >= 0 && static_cast<size_t>(id) < vocab.tokens.size()) {
      return vocab.tokens[static_cast<size_t>(id)];
    }
    return "";
  }

  void model_word(const std::string& word, std::vector<int64_t>& ids) const {
    switch (model) {
      case Model::kBpe:
        tok::bpe_word(vocab, bpe, word, ids);
        break;
      case Model::kWordPiece:
        tok::wordpiece_word(vocab, wordpiece, word, ids);
        break;
      case Model::kWordLevel:
        if (const auto id = vocab.find(word)) {
          ids.push_back(*id);
        } else if (wordlevel_unk) {
          ids.push_back(*wordlevel_unk);
        }
        break;
    }
  }
};

namespace {

using Impl = detail::TokenizerState;

[[noreturn]] void bad(const std::string& place, const std::string& what) {
  throw_input(place, what);
}

int64_t whole_number(const json::Value& v, const std::string& place, int64_t max) {
  if (!v.is_number() || !(v.as_number() >= 0) || v.as_number() != std::floor(v.as_number()) ||
      v.as_number() > static_cast<double>(max)) {
    bad(place, "expected an id from 0 to " + std::to_string(max) + ", got " + json::describe(v));
  }
  return static_cast<int64_t>(v.as_number());
}

std::optional<std::string> optional_text(const json::Value& obj, const char* key,
                                         const std::string& place) {
  const json::Value* v = obj.find(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_string())
    bad(place + "." + key, "expected a string or null, got " + json::describe(*v));
  return v->as_string();
}

bool flag(const json::Value& obj, const char* key, bool fallback, const std::string& place) {
  const json::Value* v = obj.find(key);
  if (!v || v->is_null()) return fallback;
  if (!v->is_bool()) bad(place + "." + key, "expected true or false, got " + json::describe(*v));
  return v->as_bool();
}

// The vocabulary was read while the file was parsed (VocabReader, below);
// here it only has to have been an object.
void read_vocab(Impl& t, const json::Value& model, const std::string& place, tok::Vocab& staged) {
  const json::Value* vocab = model.find("vocab");
  if (!vocab || !vocab->is_object()) bad(place + ".vocab", "expected an object of token: id");
  t.vocab = std::move(staged);
}

// A string the model adds to each character of a word (a prefix or a
// suffix), at most limits.max_affix_bytes long.
std::string affix(const json::Value& model, const char* key, const std::string& place,
                  const std::string& fallback, const TokenizerLimits& limits) {
  std::string s = optional_text(model, key, place).value_or(fallback);
  if (static_cast<int64_t>(s.size()) > limits.max_affix_bytes) {
    bad(place + "." + key, "a string of " + std::to_string(s.size()) + " bytes (at most " +
                               std::to_string(limits.max_affix_bytes) + ")");
  }
  return s;
}

int64_t vocab_id(const Impl& t, const std::string& token, const std::string& place) {
  const auto id = t.vocab.find(token);
  if (!id) bad(place, "\"" + message_text(token) + "\" is not in the vocabulary");
  return *id;
}

void read_bpe(Impl& t, const json::Value& model, const std::string& place,
              const TokenizerLimits& limits, tok::Vocab& staged) {
  read_vocab(t, model, place, staged);
  if (const json::Value* d = model.find("dropout"); d && !d->is_null()) {
    if (!d->is_number()) bad(place + ".dropout", "expected a number or null");
    if (d->as_number() > 0) {
      bad(place + ".dropout",
          "BPE dropout makes every encoding random; attn encodes as the "
          "library does without it (set it to null)");
    }
  }
  if (const auto unk = optional_text(model, "unk_token", place)) {
    t.bpe.unk = vocab_id(t, *unk, place + ".unk_token");
  }
  t.bpe.continuing_subword_prefix = affix(model, "continuing_subword_prefix", place, "", limits);
  t.bpe.end_of_word_suffix = affix(model, "end_of_word_suffix", place, "", limits);
  t.bpe.fuse_unk = flag(model, "fuse_unk", false, place);
  t.bpe.byte_fallback = flag(model, "byte_fallback", false, place);
  t.bpe.ignore_merges = flag(model, "ignore_merges", false, place);
  const json::Value* merges = model.find("merges");
  if (!merges || !merges->is_array()) bad(place + ".merges", "expected a list of merges");
  for (size_t i = 0; i < merges->size(); ++i) {
    const std::string at = place + ".merges[" + std::to_string(i) + "]";
    const json::Value m = merges->element(i);
    std::string a, b;
    if (m.is_string()) {
      // "a b": the library splits on the one space (tokens hold none).
      const std::string& s = m.as_string();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        bad(at, "expected two tokens separated by one space, got \"" + message_text(s) + "\"");
      }
      a = s.substr(0, space);
      b = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m.element(0).is_string() &&
               m.element(1).is_string()) {
      a = m.element(0).as_string();
      b = m.element(1).as_string();
    } else {
      bad(at, "expected \"a b\" or [\"a\", \"b\"], got " + json::describe(m));
    }
    const int64_t ia = vocab_id(t, a, at), ib = vocab_id(t, b, at);
    const int64_t merged = vocab_id(t, a + b, at + " (the merged token)");
    const uint64_t key = (static_cast<uint64_t>(ia) << 32) | static_cast<uint64_t>(ib);
    // A pair listed twice keeps its first (lowest) rank, as the library's map does.
    t.bpe.merges.emplace(key, std::make_pair(static_cast<int64_t>(i), merged));
  }
}

void read_model(Impl& t, const json::Value& root, const std::string& name,
                const TokenizerLimits& limits, tok::Vocab& staged) {
  const std::string place = name + ": model";
  const json::Value* model = root.find("model");
  if (!model || !model->is_object()) bad(place, "expected an object");
  std::string type;
  if (const json::Value* ty = model->find("type"); ty && ty->is_string()) {
    type = ty->as_string();
  } else if (model->find("merges")) {
    type = "BPE";  // files written before "type" was
  } else if (model->find("max_input_chars_per_word")) {
    type = "WordPiece";
  }
  if (type == "BPE") {
    t.model = Impl::Model::kBpe;
    read_bpe(t, *model, place, limits, staged);
  } else if (type == "WordPiece") {
    t.model = Impl::Model::kWordPiece;
    read_vocab(t, *model, place, staged);
    t.wordpiece.unk = vocab_id(t, optional_text(*model, "unk_token", place).value_or("[UNK]"),
                               place + ".unk_token");
    t.wordpiece.continuing_subword_prefix =
        affix(*model, "continuing_subword_prefix", place, "##", limits);
    if (const json::Value* m = model->find("max_input_chars_per_word"); m && !m->is_null()) {
      t.wordpiece.max_input_chars_per_word =
          static_cast<size_t>(whole_number(*m, place + ".max_input_chars_per_word", 1 << 20));
    }
    for (const auto& [token, id] : t.vocab.ids) {
      t.wordpiece.max_token_bytes = std::max(t.wordpiece.max_token_bytes, token.size());
    }
  } else if (type == "WordLevel") {
    t.model = Impl::Model::kWordLevel;
    read_vocab(t, *model, place, staged);
    if (const auto unk = optional_text(*model, "unk_token", place)) {
      t.wordlevel_unk = vocab_id(t, *unk, place + ".unk_token");
    }
  } else {
    bad(place + ".type", "model \"" + message_text(type) +
                             "\" is not one attn implements (BPE, WordPiece, WordLevel)");
  }
}

void read_added(Impl& t, const json::Value& root, const std::string& name,
                const TokenizerLimits& limits) {
  const json::Value* list = root.find("added_tokens");
  if (!list || list->is_null()) return;
  const std::string place = name + ": added_tokens";
  if (!list->is_array()) bad(place, "expected a list");
  int64_t total_bytes = 0;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string at = place + "[" + std::to_string(i) + "]";
    const json::Value e = list->element(i);
    if (!e.is_object()) bad(at, "expected an object");
    tok::AddedToken a;
    const json::Value* id = e.find("id");
    if (!id) bad(at, "has no \"id\"");
    a.id = whole_number(*id, at + ".id", limits.max_vocab - 1);
    const json::Value* content = e.find("content");
    if (!content || !content->is_string() || content->as_string().empty()) {
      bad(at + ".content", "expected a non-empty string");
    }
    a.text = content->as_string();
    const auto bytes = static_cast<int64_t>(a.text.size());
    if (bytes > limits.max_added_token_bytes) {
      bad(at + ".content", "a string of " + std::to_string(bytes) + " bytes (at most " +
                               std::to_string(limits.max_added_token_bytes) + ")");
    }
    if ((total_bytes += bytes) > limits.max_added_tokens_bytes) {
      bad(place, "more than " + std::to_string(limits.max_added_tokens_bytes) +
                     " bytes of content in all (the most attn reads)");
    }
    a.special = flag(e, "special", false, at);
    a.lstrip = flag(e, "lstrip", false, at);
    a.rstrip = flag(e, "rstrip", false, at);
    a.single_word = flag(e, "single_word", false, at);
    a.normalized = flag(e, "normalized", !a.special, at);
    // A token the vocabulary lacks gets its id; one it has keeps both.
    if (t.token_of(a.id).empty()) t.vocab.add(a.text, a.id);
    t.added.push_back(std::move(a));
  }
}

std::vector<TemplatePart> read_post(const Impl& t, const json::Value& v, const std::string& place) {
  std::vector<TemplatePart> parts;
  if (v.is_null()) return parts;
  const json::Value* ty = v.is_object() ? v.find("type") : nullptr;
  if (!ty || !ty->is_string()) bad(place, "expected an object with a \"type\"");
  const std::string type = ty->as_string();
  auto pair_part = [&](const char* key) {
    const json::Value* p = v.find(key);
    if (!p || !p->is_array() || p->size() != 2 || !p->element(0).is_string()) {
      bad(place + "." + key, "expected [\"token\", id]");
    }
    TemplatePart part;
    part.tokens.push_back(p->element(0).as_string());
    part.ids.push_back(whole_number(p->element(1), place + "." + key, int64_t{1} << 31));
    return part;
  };
  if (type == "ByteLevel") return parts;  // offsets only
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    parts.push_back(pair_part("cls"));
    parts.push_back(TemplatePart{true, {}, {}});
    parts.push_back(pair_part("sep"));
    return parts;
  }
  if (type == "Sequence") {
    const json::Value* list = v.find("processors");
    if (!list || !list->is_array()) bad(place + ".processors", "expected a list");
    for (size_t i = 0; i < list->size(); ++i) {
      std::vector<TemplatePart> p =
          read_post(t, list->element(i), place + ".processors[" + std::to_string(i) + "]");
      if (!p.empty()) {
        if (!parts.empty()) bad(place, "more than one processor adds special tokens");
        parts = std::move(p);
      }
    }
    return parts;
  }
  if (type != "TemplateProcessing") {
    bad(place + ".type", "post-processor \"" + message_text(type) +
                             "\" is not one attn implements (TemplateProcessing, "
                             "BertProcessing, RobertaProcessing, ByteLevel, Sequence)");
  }
  const json::Value* single = v.find("single");
  const json::Value* specials = v.find("special_tokens");
  if (!single || !single->is_array()) bad(place + ".single", "expected a list");
  for (size_t i = 0; i < single->size(); ++i) {
    const std::string at = place + ".single[" + std::to_string(i) + "]";
    const json::Value e = single->element(i);
    if (e.is_object() && e.find("Sequence")) {
      parts.push_back(TemplatePart{true, {}, {}});
      continue;
    }
    const json::Value* s = e.is_object() ? e.find("SpecialToken") : nullptr;
    const json::Value* id = s && s->is_object() ? s->find("id") : nullptr;
    if (!id || !id->is_string())
      bad(at, "expected {\"SpecialToken\": {...}} or {\"Sequence\": ...}");
    const json::Value* def =
        specials && specials->is_object() ? specials->find(id->as_string()) : nullptr;
    if (!def || !def->is_object()) {
      bad(place + ".special_tokens", "has no \"" + message_text(id->as_string()) + "\"");
    }
    const json::Value* ids = def->find("ids");
    const json::Value* tokens = def->find("tokens");
    if (!ids || !ids->is_array() || !tokens || !tokens->is_array() ||
        ids->size() != tokens->size()) {
      bad(place + ".special_tokens." + message_text(id->as_string()),
          "expected \"ids\" and \"tokens\" of one length");
    }
    TemplatePart part;
    for (size_t k = 0; k < ids->size(); ++k) {
      part.ids.push_back(whole_number(ids->element(k), at, int64_t{1} << 31));
      const json::Value tk = tokens->element(k);
      if (!tk.is_string()) bad(at, "expected token strings");
      part.tokens.push_back(tk.as_string());
    }
    parts.push_back(std::move(part));
  }
  return parts;
}

// How tokens are shown: byte-level, or with SentencePiece's ▁.
void read_display(Impl& t, const json::Value& root) {
  for (const tok::PreTokenizer& p : t.pre_tokenizers) {
    if (p.kind == tok::PreTokenizer::kByteLevel) t.byte_level = true;
    if (p.kind == tok::PreTokenizer::kMetaspace) t.metaspace = p.replacement;
  }
  const json::Value* d = root.find("decoder");
  std::vector<const json::Value*> stack;
  if (d && d->is_object()) stack.push_back(d);
  while (!stack.empty()) {
    const json::Value* v = stack.back();
    stack.pop_back();
    const json::Value* ty = v->find("type");
    const std::string type = ty && ty->is_string() ? ty->as_string() : "";
    if (type == "ByteLevel") t.byte_level = true;
    if (type == "Metaspace") t.metaspace = U'\u2581';
    if (type == "Replace") {
      const json::Value* p = v->find("pattern");
      const json::Value* s = p && p->is_object() ? p->find("String") : nullptr;
      const json::Value* c = v->find("content");
      if (s && s->is_string() && c && c->is_string() && c->as_string() == " ") {
        const std::u32string from = to_u32(s->as_string());
        if (from.size() == 1) t.metaspace = from[0];
      }
    }
    if (type == "Sequence") {
      if (const json::Value* list = v->find("decoders"); list && list->is_array()) {
        for (const json::Value& e : list->items()) stack.push_back(&e);
      }
    }
  }
}

void index_added(Impl& t) {
  // A normalized token is matched on normalized text, so it is matched as
  // the normalizer writes it. The contents grow under the same limit as a
  // text does.
  size_t given = 0;
  for (const tok::AddedToken& a : t.added) given += a.normalized ? a.text.size() : 0;
  tok::GrowthLimit growth(given, "the added tokens");
  tok::RegexBudget budget(given);
  for (tok::AddedToken& a : t.added) {
    a.content = to_u32(a.text);
    if (a.normalized) {
      a.content = tok::normalize(t.normalizers, std::move(a.content), growth, budget);
      growth.used += a.content.size();
    }
    (a.normalized ? t.normalized_set : t.raw_set).add(&a);
  }
  t.raw_set.build();
  t.normalized_set.build();
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

namespace {

// The tokenizer an open GGUF file carries.
Impl* gguf_impl(const GgufFile& file, const TokenizerLimits& limits) {
  auto impl = std::make_unique<Impl>();
  impl->name = file.name();
  impl->limits = limits;
  impl->gguf = tok::GgufVocab::read(file, limits.max_vocab);
  impl->byte_level = impl->gguf->byte_level();
  if (!impl->byte_level) impl->metaspace = U'\u2581';
  return impl.release();
}

}  // namespace

std::optional<Tokenizer> Tokenizer::load_if_any(const std::string& path,
                                                const TokenizerLimits& limits) {
  if (path::kind_of(path) != path::Kind::kRegularFile || !is_gguf_file(path)) {
    return load(path, limits);
  }
  const GgufFile file = GgufFile::open(path);
  const GgufValue* v = file.find("tokenizer.ggml.model");
  if (!v || !v->is_string() || v->as_string() == "none" || v->as_string() == "no_vocab") {
    return std::nullopt;
  }
  return Tokenizer(std::unique_ptr<Impl>(gguf_impl(file, limits)));
}

Tokenizer Tokenizer::load(const std::string& path, const TokenizerLimits& limits) {
  std::string file = path;
  const path::Kind kind = path::kind_of(path);
  if (kind == path::Kind::kRegularFile && is_gguf_file(path)) {
    return Tokenizer(std::unique_ptr<Impl>(gguf_impl(GgufFile::open(path), limits)));
  }
  if (kind == path::Kind::kDirectory) {
    file = path::join(path, "tokenizer.json");
    if (!path::exists(file)) throw_file(path, "no tokenizer.json in this directory");
  }
  struct stat st {};
  if (::stat(file.c_str(), &st) == 0) {
    // A FIFO or a device would be waited for or read forever.
    if (!S_ISREG(st.st_mode)) {
      throw_input(file, "not a regular file; --tokenizer takes tokenizer.json or its directory");
    }
    // The limit is the tokenizer's own, not --max-input-bytes: no flag
    // raises it (the largest real files are a tenth of it).
    if (static_cast<int64_t>(st.st_size) > limits.max_file_bytes) {
      throw_input(file, std::to_string(st.st_size) + " bytes, more than attn reads of a " +
                            "tokenizer.json (" + std::to_string(limits.max_file_bytes) + ")");
    }
  }
  return from_json(read_file(file, {}, limits.max_file_bytes), file, limits);
}

Tokenizer Tokenizer::from_json(std::string_view json_text, const std::string& name,
                               const TokenizerLimits& limits) {
  json::Limits jl;
  jl.max_nodes = int64_t{1} << 24;  // merges of a million entries
  jl.max_numbers = int64_t{1} << 24;
  // The vocabulary is read as the parser meets it, not kept in the tree:
  // its tokens are counted, and a file with too many is refused before
  // the rest is read; those it keeps cost the vocabulary's memory alone.
  tok::Vocab staged;
  int64_t count = 0;
  const std::string vocab_place = name + ": model.vocab";
  json::MemberSink sink;
  sink.path = {"model", "vocab"};
  sink.take = [&](const std::string& token, const json::Value& id) {
    if (++count > limits.max_vocab) {
      bad(vocab_place, "more tokens than attn reads (" + std::to_string(limits.max_vocab) + ")");
    }
    if (staged.ids.count(token) != 0) return false;
    staged.add(token, whole_number(id, vocab_place + "[\"" + message_text(token) + "\"]",
                                   limits.max_vocab - 1));
    return true;
  };
  const json::Value root = json::parse(json_text, name, jl, sink);
  if (!root.is_object()) bad(name, "expected a tokenizer.json object");
  auto impl = std::make_unique<Impl>();
  impl->name = name;
  impl->limits = limits;
  read_model(*impl, root, name, limits, staged);
  const json::Value null_value = json::Value::null();
  auto field = [&](const char* key) -> const json::Value& {
    const json::Value* v = root.find(key);
    return v ? *v : null_value;
  };
  impl->normalizers = tok::read_normalizers(field("normalizer"), name + ": normalizer", limits);
  impl->pre_tokenizers =
      tok::read_pre_tokenizers(field("pre_tokenizer"), name + ": pre_tokenizer", limits);
  read_added(*impl, root, name, limits);
  impl->post = read_post(*impl, field("post_processor"), name + ": post_processor");
  read_display(*impl, root);
  index_added(*impl);
  return Tokenizer(std::move(impl));
}

Encoding Tokenizer::encode(std::string_view text, bool add_special_tokens,
                           const std::string& source) const {
  EncodeOptions o;
  o.add_special_tokens = add_special_tokens;
  return encode(text, o, source);
}

Encoding Tokenizer::encode(std::string_view text, const EncodeOptions& options,
                           const std::string& source) const {
  const bool add_special_tokens = options.add_special_tokens;
  const Impl& t = *impl_;
  if (static_cast<int64_t>(text.size()) > t.limits.max_text_bytes) {
    throw_input(source, std::to_string(text.size()) +
                            " bytes of text, more than attn encodes at once (" +
                            std::to_string(t.limits.max_text_bytes) + ")");
  }
  if (const size_t bad_at = invalid_utf8_offset(text); bad_at != std::string_view::npos) {
    throw_input(source, "not UTF-8 text: the byte at offset " + std::to_string(bad_at) +
                            " starts no character");
  }
  if (t.gguf) {
    Encoding e;
    e.ids = t.gguf->encode(text, add_special_tokens, options.parse_special, source);
    for (int64_t id : e.ids) e.tokens.push_back(t.token_of(id));
    return e;
  }
  // 1. Added tokens the file matches on the text as given; 2. the rest
  // normalized, then the added tokens matched on normalized text. The text
  // may grow, and the regexes take steps, within limits set by its length.
  std::u32string given = to_u32(std::string(text));
  tok::GrowthLimit normalized(given.size(), "the text");
  tok::GrowthLimit pre_tokenized(given.size(), "the text");
  tok::RegexBudget budget(given.size());
  std::vector<tok::Piece> pieces;
  for (tok::Piece& p : t.raw_set.split(tok::Piece{std::move(given), std::nullopt, true})) {
    if (p.id) {
      pieces.push_back(std::move(p));
      continue;
    }
    p.text = tok::normalize(t.normalizers, std::move(p.text), normalized, budget);
    normalized.used += p.text.size();
    for (tok::Piece& q : t.normalized_set.split(p)) pieces.push_back(std::move(q));
  }
  std::vector<int64_t> ids;
  for (const tok::Piece& p : pieces) {
    if (p.id) {
      ids.push_back(*p.id);
      continue;
    }
    if (p.text.empty()) continue;
    for (const std::u32string& word :
         tok::pre_tokenize(t.pre_tokenizers, p.text, p.starts, pre_tokenized, budget)) {
      pre_tokenized.used += word.size();
      t.model_word(to_utf8(word), ids);
    }
  }
  Encoding e;
  if (add_special_tokens && !t.post.empty()) {
    for (const TemplatePart& part : t.post) {
      if (part.sequence) {
        for (int64_t id : ids) {
          e.ids.push_back(id);
          e.tokens.push_back(t.token_of(id));
        }
      } else {
        e.ids.insert(e.ids.end(), part.ids.begin(), part.ids.end());
        e.tokens.insert(e.tokens.end(), part.tokens.begin(), part.tokens.end());
      }
    }
    return e;
  }
  e.ids = std::move(ids);
  for (int64_t id : e.ids) e.tokens.push_back(t.token_of(id));
  return e;
}

std::string Tokenizer::token(int64_t id) const { return impl_->token_of(id); }

std::string Tokenizer::readable(const std::string& token) const {
  const Impl& t = *impl_;
  std::string bytes;
  // <0xNN>: a byte-fallback piece stands for its byte.
  if (token.size() == 6 && token.compare(0, 3, "<0x") == 0 && token[5] == '>') {
    unsigned v = 0;
    if (std::sscanf(token.c_str() + 3, "%2x", &v) == 1) bytes += static_cast<char>(v);
  } else if (t.byte_level) {
    for (char32_t c : to_u32(token)) {
      const int b = tok::char_byte(c);
      if (b >= 0) {
        bytes += static_cast<char>(b);
      } else {
        append_utf8(bytes, c);
      }
    }
  } else {
    for (char32_t c : to_u32(token)) append_utf8(bytes, t.metaspace && c == t.metaspace ? U' ' : c);
  }
  // Bytes that are not whole characters are shown by value.
  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto* end = p + bytes.size();
  while (p < end) {
    const size_t n = utf8_sequence_length(p, end);
    if (n == 0) {
      append_hex_byte(out, "\\x", *p);
      ++p;
      continue;
    }
    out.append(reinterpret_cast<const char*>(p), n);
    p += n;
  }
  return out;
}

int64_t Tokenizer::vocab_size() const {
  if (impl_->gguf) return impl_->gguf->size();
  return static_cast<int64_t>(impl_->vocab.ids.size());
}

const std::string& Tokenizer::name() const { return impl_->name; }

}  // namespace attn
