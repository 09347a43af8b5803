// A GGUF vocabulary read as llama_vocab::impl::load reads it: the model's
// defaults, the metadata over them, the token attributes llama.cpp
// derives from token types and from the tokens' text, and the special
// tokens in its order of trial.
#include "tokenizer/gguf_vocab.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "attn/error.h"
#include "io/gguf.h"

namespace attn::tok {

namespace {

// llama_token_attr's bits, and llama_token_type's values.
enum Attr : uint32_t {
  kUnknown = 1 << 0,
  kUnused = 1 << 1,
  kNormal = 1 << 2,
  kControl = 1 << 3,
  kUserDefined = 1 << 4,
  kByte = 1 << 5,
  kLstrip = 1 << 7,
  kRstrip = 1 << 8,
};

uint32_t attr_of_type(int64_t type) {
  switch (type) {
    case 1:
      return kNormal;
    case 2:
      return kUnknown;
    case 3:
      return kControl;
    case 4:
      return kUserDefined;
    case 5:
      return kUnused;
    case 6:
      return kByte;
    default:
      return 0;  // undefined
  }
}

// Texts llama.cpp takes for end-of-turn, fill-in-the-middle and
// end-of-generation tokens, and marks as control tokens (one list per
// id it looks for when the metadata gives none; the last is the
// end-of-generation list, which it always applies).
struct Detected {
  std::vector<const char*> keys;  // the metadata keys that name the id instead
  std::vector<const char*> texts;
};
const std::vector<Detected>& detected() {
  static const std::vector<Detected> table = {
      {{"tokenizer.ggml.eot_token_id"},
       {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
        "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}},
      {{"tokenizer.ggml.eom_token_id"}, {"<|eom_id|>"}},
      {{"tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.prefix_token_id"},
       {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
        "<|code_prefix|>", "<|prefix|>"}},
      {{"tokenizer.ggml.fim_suf_token_id", "tokenizer.ggml.suffix_token_id"},
       {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
        "<|code_suffix|>", "<|suffix|>"}},
      {{"tokenizer.ggml.fim_mid_token_id", "tokenizer.ggml.middle_token_id"},
       {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
        "<|code_middle|>", "<|middle|>"}},
      {{"tokenizer.ggml.fim_pad_token_id"},
       {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}},
      {{"tokenizer.ggml.fim_rep_token_id"},
       {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}},
      {{"tokenizer.ggml.fim_sep_token_id"}, {"<|file_sep|>"}},
      {{},
       {"<|eot_id|>",
        "<|im_end|>",
        "<|end|>",
        "<|return|>",
        "<|call|>",
        "<|flush|>",
        "<|calls|>",
        "<end_of_turn>",
        "<|endoftext|>",
        "</s>",
        "<|eom_id|>",
        "<EOT>",
        "_<EOT>",
        "[EOT]",
        "[EOS]",
        "<|end_of_text|>",
        "<end_of_utterance>",
        "<eos>",
        "<turn|>",
        "<|tool_response>",
        "<｜end▁of▁sentence｜>",
        "[e~["}},
  };
  return table;
}

bool contains_any(const std::string& s, std::initializer_list<const char*> parts) {
  for (const char* p : parts) {
    if (s.find(p) != std::string::npos) return true;
  }
  return false;
}

class Reader {
 public:
  Reader(const GgufFile& f) : f_(f) {}

  const GgufValue* find(const char* key) const { return f_.find(key); }

  std::string text(const char* key, const std::string& fallback) const {
    const GgufValue* v = f_.find(key);
    return v ? v->as_string() : fallback;
  }
  bool flag(const char* key, bool fallback) const {
    const GgufValue* v = f_.find(key);
    return v ? v->as_bool() : fallback;
  }
  // An id the metadata gives, which must name a token.
  void id(const char* key, int64_t n, int64_t& out) const {
    const GgufValue* v = f_.find(key);
    if (!v) return;
    const int64_t id = v->as_int();
    if (id < 0 || id >= n) {
      throw_input(f_.name() + ": " + key, "token " + std::to_string(id) +
                                              " is not in the vocabulary (" + std::to_string(n) +
                                              " tokens)");
    }
    out = id;
  }
  // An array of at least n numbers.
  const std::vector<double>* numbers(const char* key, size_t n) const {
    const GgufValue* v = f_.find(key);
    if (!v) return nullptr;
    const std::vector<double>& x = v->numbers();
    if (x.size() < n) {
      throw_input(f_.name() + ": " + key,
                  std::to_string(x.size()) + " values for " + std::to_string(n) + " tokens");
    }
    return &x;
  }

 private:
  const GgufFile& f_;
};

}  // namespace

std::unique_ptr<GgufVocab> GgufVocab::read(const GgufFile& file, int64_t max_vocab) {
  const Reader r(file);
  const std::string& name = file.name();
  auto at = [&](const std::string& key) { return name + ": " + key; };
  std::unique_ptr<GgufVocab> v(new GgufVocab());
  v->name_ = name;
  const std::string model = file.get("tokenizer.ggml.model").as_string();
  if (model == "llama") {
    v->kind_ = Kind::kSpm;
    v->bos_ = 1, v->eos_ = 2, v->unk_ = 0;
    v->add_bos_ = true, v->add_space_prefix_ = true;
  } else if (model == "gpt2") {
    v->kind_ = Kind::kBpe;
    v->bos_ = 11, v->eos_ = 11;
    const std::string pre = r.text("tokenizer.ggml.pre", "default");
    v->pre_ = gguf_pre(pre, at("tokenizer.ggml.pre"));
    v->add_bos_ = v->pre_.add_bos;
    if (v->pre_.no_bos) v->bos_ = -1;
  } else if (model == "bert") {
    v->kind_ = Kind::kWpm;
    v->bos_ = 101, v->unk_ = 100, v->sep_ = 102;
    v->add_bos_ = true;
  } else if (model == "none" || model == "no_vocab") {
    throw_input(at("tokenizer.ggml.model"),
                "\"" + model + "\": the file carries no tokenizer (give token ids with --ids)");
  } else {
    throw_input(at("tokenizer.ggml.model"),
                "\"" + message_text(model) +
                    "\" is not a tokenizer attn reads from GGUF (llama, gpt2, bert)");
  }

  // The tokens, their scores and types.
  const std::vector<std::string>& tokens = file.get("tokenizer.ggml.tokens").strings();
  if (static_cast<int64_t>(tokens.size()) > max_vocab) {
    throw_input(at("tokenizer.ggml.tokens"), std::to_string(tokens.size()) +
                                                 " tokens, more than attn reads (" +
                                                 std::to_string(max_vocab) + ")");
  }
  const size_t n = tokens.size();
  const auto count = static_cast<int64_t>(n);
  const std::vector<double>* scores = r.numbers("tokenizer.ggml.scores", n);
  const std::vector<double>* types = r.numbers("tokenizer.ggml.token_type", n);
  v->tokens_.reserve(n);
  v->ids_.reserve(n);
  v->scores_.assign(n, 0.0f);
  std::vector<uint32_t> attrs(n, kNormal);
  for (size_t i = 0; i < n; ++i) {
    // An empty token gets the name llama.cpp gives it.
    std::string t = tokens[i].empty() ? "[EMPTY_" + std::to_string(i) + "]" : tokens[i];
    const auto [it, fresh] = v->ids_.emplace(t, static_cast<int64_t>(i));
    if (!fresh) {
      throw_input(at("tokenizer.ggml.tokens[" + std::to_string(i) + "]"),
                  "\"" + message_text(t) + "\" is token " + std::to_string(it->second) +
                      " too (llama.cpp refuses a vocabulary with a token twice)");
    }
    v->max_token_bytes_ = std::max(v->max_token_bytes_, t.size());
    v->tokens_.push_back(std::move(t));
    if (scores) v->scores_[i] = static_cast<float>((*scores)[i]);
    if (types) attrs[i] = attr_of_type(static_cast<int64_t>((*types)[i]));
  }

  // Merges: "left right", split at the first space after the first byte;
  // both halves and their concatenation must be tokens.
  if (v->kind_ == Kind::kBpe) {
    const std::vector<std::string>& merges = file.get("tokenizer.ggml.merges").strings();
    v->merges_.reserve(merges.size());
    for (size_t i = 0; i < merges.size(); ++i) {
      const std::string& m = merges[i];
      // Made only for a message: 280,000 merges (Llama 3) each building
      // their place took a fifth of the vocabulary's reading.
      auto place = [&] { return at("tokenizer.ggml.merges[" + std::to_string(i) + "]"); };
      const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
      if (space == std::string::npos) {
        throw_input(place(), "\"" + message_text(m) + "\" is not two tokens and a space");
      }
      std::string a = m.substr(0, space), b = m.substr(space + 1);
      const auto ia = v->find_token(a), ib = v->find_token(b);
      a += b;  // the merged token
      const auto iab = v->find_token(a);
      if (!ia || !ib || !iab) {
        const std::string missing = !ia ? m.substr(0, space) : !ib ? b : a;
        throw_input(place(), "\"" + message_text(missing) + "\" is not a token");
      }
      const uint64_t key = (static_cast<uint64_t>(*ia) << 32) | static_cast<uint64_t>(*ib);
      v->merges_.emplace(key, Merge{static_cast<int64_t>(i), *iab});  // the first rank stays
    }
  }

  // Special ids: the model's defaults, dropped when out of range, then the
  // metadata's.
  for (int64_t* id : {&v->bos_, &v->eos_, &v->unk_, &v->sep_}) {
    if (*id >= count) *id = -1;
  }
  r.id("tokenizer.ggml.bos_token_id", count, v->bos_);
  r.id("tokenizer.ggml.eos_token_id", count, v->eos_);
  r.id("tokenizer.ggml.unknown_token_id", count, v->unk_);
  r.id("tokenizer.ggml.seperator_token_id", count, v->sep_);
  v->add_bos_ = r.flag("tokenizer.ggml.add_bos_token", v->add_bos_);
  v->add_eos_ = r.flag("tokenizer.ggml.add_eos_token", v->add_eos_);
  if (v->kind_ == Kind::kBpe && v->pre_.name == "gemma4") v->add_bos_ = true;
  v->add_space_prefix_ = r.flag("tokenizer.ggml.add_space_prefix", v->add_space_prefix_);
  if (v->kind_ == Kind::kBpe && v->pre_.name == "whitespace") v->lowercase_ = false;
  v->lowercase_ = r.flag("tokenizer.ggml.normalizer.lowercase", v->lowercase_);
  v->strip_accents_ = v->lowercase_;
  v->strip_accents_ = r.flag("tokenizer.ggml.normalizer.strip_accents", v->strip_accents_);
  if (v->kind_ == Kind::kWpm && (v->bos_ < 0 || v->sep_ < 0 || v->unk_ < 0)) {
    throw_input(at("tokenizer.ggml.tokens"),
                "a bert vocabulary needs [CLS], [SEP] and [UNK] tokens (tokenizer.ggml."
                "bos_token_id, seperator_token_id, unknown_token_id)");
  }

  // Tokens llama.cpp makes control tokens by their text. Where it looks
  // for one id among several texts it marks the first it meets in a hash
  // table's order; attn marks each that the vocabulary has.
  for (const Detected& d : detected()) {
    bool given = false;
    for (const char* key : d.keys) {
      int64_t id = -1;
      r.id(key, count, id);
      given = given || id >= 0;
    }
    if (given) continue;
    for (const char* t : d.texts) {
      if (const auto id = v->find(t)) attrs[static_cast<size_t>(*id)] |= kControl;
    }
  }
  // gpt-oss's tokens that are always shown, o200k_harmony's and Solar
  // Open's <|end|>, Gemma 4's </s>.
  for (const char* t : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}) {
    if (const auto id = v->find(t)) attrs[static_cast<size_t>(*id)] = kUserDefined;
  }
  auto has = [&](const char* t) { return v->find(t).has_value(); };
  const bool call = has("<|call|>") || has("<|calls|>");
  if (has("<|end|>") && call && (has("<|return|>") || has("<|flush|>"))) {
    attrs[static_cast<size_t>(*v->find("<|end|>"))] = kUserDefined;
  }
  if (has("<|tool_response>") && has("</s>"))
    attrs[static_cast<size_t>(*v->find("</s>"))] = kNormal;

  // The special tokens, longest first, in the order std::sort leaves them
  // as llama.cpp sorts them (the order of equal lengths is its sort's).
  std::vector<int64_t> cache;
  for (size_t i = 0; i < n; ++i) {
    if (attrs[i] & (kControl | kUserDefined | kUnknown)) cache.push_back(static_cast<int64_t>(i));
  }
  std::sort(cache.begin(), cache.end(), [&](int64_t a, int64_t b) {
    return v->tokens_[static_cast<size_t>(a)].size() > v->tokens_[static_cast<size_t>(b)].size();
  });

  // Attributes llama.cpp sets by the model's name.
  std::string model_name = r.text("general.name", "");
  for (char& c : model_name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string pre_name = r.text("tokenizer.ggml.pre", "");
  const std::string arch = r.text("general.architecture", "");
  auto set = [&](const char* t, uint32_t bit, bool on) {
    if (const auto id = v->find(t)) {
      uint32_t& a = attrs[static_cast<size_t>(*id)];
      a = on ? (a | bit) : (a & ~bit);
    }
  };
  if (contains_any(pre_name, {"jina-v2-de", "jina-v2-es", "jina-v2-code"}) ||
      contains_any(arch, {"nomic-bert-moe", "jina-bert-v3"})) {
    set("<mask>", kLstrip, true);
  } else if (contains_any(model_name, {"phi-3", "phi3"})) {
    for (int64_t id : cache) attrs[static_cast<size_t>(id)] |= kRstrip;
    set("</s>", kRstrip, true);
    for (const char* t : {"<unk>", "<s>", "<|endoftext|>"}) set(t, kRstrip, false);
  } else if (contains_any(model_name, {"modern-bert"})) {
    set("[MASK]", kLstrip, true);
  }

  std::vector<SpecialToken> all, user;
  for (int64_t id : cache) {
    const uint32_t a = attrs[static_cast<size_t>(id)];
    SpecialToken s{id, v->tokens_[static_cast<size_t>(id)], (a & kLstrip) != 0, (a & kRstrip) != 0};
    if (!(a & (kControl | kUnknown))) user.push_back(s);
    all.push_back(std::move(s));
  }
  v->all_specials_ = std::make_unique<SpecialSplitter>(std::move(all));
  v->user_specials_ = std::make_unique<SpecialSplitter>(std::move(user));
  return v;
}

std::optional<int64_t> GgufVocab::find(std::string_view text) const {
  return find_token(std::string(text));
}

std::optional<int64_t> GgufVocab::find_token(const std::string& text) const {
  const auto it = ids_.find(text);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

const std::string& GgufVocab::token(int64_t id) const {
  static const std::string none;
  if (id < 0 || id >= size()) return none;
  return tokens_[static_cast<size_t>(id)];
}

int64_t GgufVocab::byte_token(unsigned char byte, bool hex_form) const {
  if (hex_form) {
    static const char* hex = "0123456789ABCDEF";
    const char name[7] = {'<', '0', 'x', hex[byte >> 4], hex[byte & 15], '>', 0};
    if (const auto id = find(name)) return *id;
    return -1;
  }
  const auto id = find(std::string(1, static_cast<char>(byte)));
  return id ? *id : -1;
}

std::vector<int64_t> GgufVocab::encode(std::string_view text, bool add_special, bool parse_special,
                                       const std::string& source) const {
  const std::vector<Fragment> fragments =
      (parse_special ? all_specials_ : user_specials_)->split(text);
  auto need = [&](int64_t id, const char* what, const char* key) {
    if (id < 0) {
      throw_input(name_ + ": " + key,
                  std::string("the vocabulary asks for a ") + what + " token and has none");
    }
    return id;
  };
  std::vector<int64_t> out;
  switch (kind_) {
    case Kind::kSpm: {
      if (add_special && add_bos_) out.push_back(need(bos_, "BOS", "tokenizer.ggml.bos_token_id"));
      bool after_special = true;  // a space before the first text
      for (const Fragment& f : fragments) {
        if (f.id >= 0) {
          out.push_back(f.id);
          after_special = true;
          continue;
        }
        std::string s = add_space_prefix_ && after_special ? " " : "";
        s.append(text.substr(f.begin, f.end - f.begin));
        spm(s, out, source);
        after_special = false;
      }
      if (add_special && add_eos_) out.push_back(need(eos_, "EOS", "tokenizer.ggml.eos_token_id"));
      break;
    }
    case Kind::kBpe:
      if (add_special && add_bos_) out.push_back(need(bos_, "BOS", "tokenizer.ggml.bos_token_id"));
      for (const Fragment& f : fragments) {
        if (f.id >= 0) {
          out.push_back(f.id);
        } else {
          bpe(std::string(text.substr(f.begin, f.end - f.begin)), out);
        }
      }
      if (add_special && add_eos_) out.push_back(need(eos_, "EOS", "tokenizer.ggml.eos_token_id"));
      break;
    case Kind::kWpm:
      if (add_special) out.push_back(bos_);
      for (const Fragment& f : fragments) {
        if (f.id >= 0) {
          out.push_back(f.id);
        } else {
          wpm(std::string(text.substr(f.begin, f.end - f.begin)), out);
        }
      }
      if (add_special) out.push_back(sep_);
      break;
  }
  return out;
}

}  // namespace attn::tok
