#include "tokenizer/gguf_pre.h"

#include <algorithm>

#include "attn/error.h"
#include "base/utf8.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/unicode.h"

namespace attn::tok {

namespace {

// The expressions, as src/llama-vocab.cpp writes them (llm_tokenizer_bpe).
const char* const kGpt2 =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const char* const kLlama3 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kJais2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|"
    "\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|"
    "\\s{1,2}(?!\\S)|\\s{1}";
const char* const kQwen2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kQwen35 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{"
    "M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kDeepseekLlm[] = {
    "[\r\n]",
    "\\s?[A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-\u0293\u0295-"
    "\u02AF\u0370-\u0373\u0376\u0377\u037B-\u037D\u037F\u0386\u0388-\u038A\u038C\u038E-"
    "\u03A1\u03A3-\u03F5\u03F7-\u0481\u048A-\u052F\u0531-\u0556\u10A0-\u10C5\u13A0-\u13F5\u13F8-"
    "\u13FD\u1C90-\u1CBA\u1CBD-\u1CBF\u1D00-"
    "\u1D2B\u1D6B-\u1D77\u1D79-\u1D9A\u1E00-\u1F15\u1F18-"
    "\u1F1D\u1F20-\u1F45\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D\u1F5F-\u1F7D\u1F80-"
    "\u1FB4\u1FB6-\u1FBC\u1FBE\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3\u1FD6-\u1FDB\u1FE0-"
    "\u1FEC\u1FF2-\u1FF4\u1FF6-\u1FFC\u2102\u2107\u210A-\u2113\u2115\u2119-"
    "\u211D\u2124\u2126\u2128\u212A-\u212D\u212F-\u2134\u2139\u213C-\u213F\u2145-"
    "\u2149\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-\u2CE4\u2CEB-\u2CEE\u2CF2\u2CF3\uA640-"
    "\uA66D\uA680-"
    "\uA69B\uA722-"
    "\uA76F\uA771-\uA787\uA78B-\uA78E\uAB70-\uABBF\uFB00-\uFB06\uFB13-\uFB17\uFF21-\uFF3A\uFF41-"
    "\uFF5A\U00010400-\U0001044F\U000104B0-\U000104D3\U000104D8-\U000104FB\U00010C80-"
    "\U00010CB2\U00010CC0-\U00010CF2\U000118A0-\U000118DF\U0001E900-\U0001E943]"
    "+",
    "\\s?[!-/:-~\uFF01-\uFF0F\uFF1A-\uFF5E\u2018-\u201F\u3000-\u3002]+",
    "\\s+$",
    "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+",
    "\\p{N}+",
};
const char* const kDeepseek3[] = {
    "\\p{N}{1,3}",
    "[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+",
    "[!\"#$%&'()*+,\\-./"
    ":;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    "?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
};
const char* const kSpark25[] = {
    "\\p{N}{1,3}",
    "[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+",
    "[!\"#$%&'()*+,\\-./"
    ":;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    "?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+",
    "\\p{N}",
};
const char* const kYoutu[] = {
    "[\uAC00-\uD7A3\u3131-\u318E]+|["
    "\uFF01\u2026\u201C\u201D\u2018\u2019\u2014\uFF1A\uFF1B\uFF0C\u3001-\u303F\uFE30-\uFE4F]+|["
    "\u3105-\u312F]+|[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]"
    "+",
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'["
    "sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}"
    "\\p{"
    "Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL]"
    "["
    "lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
const char* const kDeepseekCoder[] = {
    "[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+", "\\p{N}",
};
const char* const kFalcon[] = {"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2, "[0-9][0-9][0-9]"};
const char* const kStarcoder[] = {"\\p{N}", kGpt2};
const char* const kBloom = " ?[^(\\s|.,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C)]+";
const char* const kViking[] = {kBloom, "\\p{N}"};
const char* const kTekken =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?(("
    "?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]"
    "+|\\s+(?!\\S)|\\s+";
const char* const kChameleon[] = {
    "<sentinel:[0-9]+>",      "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
    "([\\t\\n]|    |  )",     "\\p{N}",
    "[\\p{P}!-/:-@\\[-`{-~]", kGpt2,
};
const char* const kGpt4o =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'"
    "[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^"
    "A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{"
    "N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kGraniteEmbMulti =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]"
    "|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z])"
    ")"
    "+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{"
    "N}"
    "{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kTinyAya[] = {
    "\\d{1,3}(?=(?:\\d{3})*\\b)",
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'["
    "sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}"
    "\\p{"
    "Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL]"
    "["
    "lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
const char* const kSuperbpe[] = {"\\p{N}+", "(?=(\\d{3})+(?!\\d))"};
const char* const kBailingmoe =
    "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+";
const char* const kSeedCoder =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kUfakzeka =
    "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|"
    "\\s+";
const char* const kAfmoe[] = {
    "\\p{AFMoE_digits}",
    "[\u4E00-\u9FFF\u3400-\u4DBF\u8C48-\uFAFF\u3040-\u309F\u30A0-\u30FF\uFF65-\uFF9F\u2F00-"
    "\u2FDF\u0E40-\u0E7F\u0E80-\u0EFF\u1780-\u17FF\u1000-\u109F\uAA60-\uAA7F\uA9E0-\uA9FF\uAC00-"
    "\uD7AF\u1100-\u11FF]"
    "+",
    "[!\"#$%&'()*+,\\-./"
    ":;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]"
    "+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
const char* const kNewlines = "[^\\n]+|[\\n]+";
const char* const kLaguna[] = {kNewlines, kQwen2};
const char* const kExaoneMoe =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{"
    "M}"
    "*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+";
const char* const kMinicpm5[] = {
    "\\p{N}{1,3}",
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
const char* const kDefault[] = {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"};

enum Flag : unsigned {
  kIgnoreMerges = 1,
  kAddBos = 2,
  kNoBos = 4,
  kEscapeSpaces = 8,
  kRawBytes = 16,
  kNewlineWords = 32,
};

// One row: the names llama.cpp maps to one pre-tokenizer type (the
// if-chain of llama_vocab::impl::load), its expressions and settings.
struct PreRow {
  std::vector<const char*> names;
  std::vector<const char*> patterns;
  unsigned flags = 0;
};

template <size_t N>
std::vector<const char*> list(const char* const (&a)[N]) {
  return std::vector<const char*>(a, a + N);
}

const std::vector<PreRow>& rows() {
  static const std::vector<PreRow> table = {
      {{"default"}, list(kDefault), 0},
      {{"minicpm5"}, list(kMinicpm5), kIgnoreMerges},
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
        "jina-v5-nano"},
       {kLlama3},
       kIgnoreMerges | kAddBos},
      {{"deepseek-llm"}, list(kDeepseekLlm), 0},
      {{"deepseek-coder"}, list(kDeepseekCoder), 0},
      {{"deepseek-v3"}, list(kDeepseek3), 0},
      {{"spark2_5"}, list(kSpark25), 0},
      {{"youtu"}, list(kYoutu), kIgnoreMerges},
      {{"falcon"}, list(kFalcon), 0},
      {{"mpt"}, {kGpt2}, 0},
      {{"starcoder"}, list(kStarcoder), 0},
      {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
        "mellum", "modern-bert"},
       {kGpt2},
       0},
      {{"jais-2"}, {kJais2}, 0},
      {{"gemma4", "granite-embed-multi-311m"},
       {kNewlines},
       kEscapeSpaces | kRawBytes | kNewlineWords},
      {{"sarvam-moe"}, {kNewlines}, kEscapeSpaces | kRawBytes},
      {{"jina-v1-en", "jina-v2-code", "roberta-bpe"}, {kGpt2}, 0},
      {{"whitespace"}, {"\\S+"}, kRawBytes},
      {{"refact"}, list(kStarcoder), 0},
      {{"command-r"}, list(kStarcoder), 0},
      {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2"}, {kQwen2}, 0},
      {{"qwen35"}, {kQwen35}, 0},
      {{"stablelm2"}, {kQwen2}, 0},
      {{"olmo"}, {kGpt2}, 0},
      {{"dbrx"}, {kLlama3}, 0},
      {{"smaug-bpe"}, {kLlama3}, 0},
      {{"poro-chat"}, {kBloom}, 0},
      {{"glm4", "chatglm-bpe"}, {kLlama3}, kNoBos},
      {{"viking"}, list(kViking), 0},
      {{"jais"}, {kGpt2}, 0},
      {{"tekken"}, {kTekken}, kIgnoreMerges | kAddBos},
      {{"smollm"}, list(kStarcoder), 0},
      {{"codeshell"}, list(kStarcoder), 0},
      {{"bloom"}, {kBloom}, 0},
      {{"gpt3-finnish"}, {kBloom}, 0},
      {{"exaone"}, list(kStarcoder), 0},
      {{"exaone4"}, {kGpt2}, 0},
      {{"exaone-moe"}, {kExaoneMoe}, 0},
      {{"chameleon"}, list(kChameleon), kAddBos},
      {{"minerva-7b"}, list(kStarcoder), 0},
      {{"megrez"}, {kQwen2}, 0},
      {{"gpt-4o", "llama4", "kanana2", "talkie"}, {kGpt4o}, 0},
      {{"granite-embed-multi-97m"}, {kGraniteEmbMulti}, kIgnoreMerges},
      {{"tiny_aya", "cohere2moe"}, list(kTinyAya), 0},
      {{"superbpe"}, list(kSuperbpe), 0},
      {{"trillion"}, {kGpt2}, 0},
      {{"granite-docling"}, {kGpt2}, 0},
      {{"bailingmoe", "bailingmoe2", "llada-moe"}, {kBailingmoe}, 0},
      {{"seed-coder"}, {kSeedCoder}, 0},
      {{"hunyuan"}, {kQwen2}, 0},
      {{"hunyuan-dense"}, list(kDeepseek3), 0},
      {{"hy_v4"}, list(kDeepseek3), 0},
      {{"joyai-llm"}, list(kDeepseek3), 0},
      {{"kimi-k2"}, {"\\p{Han}+"}, 0},
      {{"ufakzeka"}, {kUfakzeka}, 0},
      {{"grok-2"}, {kQwen2}, 0},
      {{"afmoe"}, list(kAfmoe), 0},
      {{"laguna"}, list(kLaguna), 0},
      {{"minimax-m2"}, {kGpt4o}, 0},
      {{"solar-open"}, {kQwen2}, 0},
      {{"mellum2"}, list(kStarcoder), 0},
  };
  return table;
}

// The categories llama.cpp collapses (unicode_regex_split's k_ucat_enum),
// the code point standing for each in the collapsed text, and the ASCII
// characters of each (k_ucat_map), written for attn's matcher.
struct Collapsed {
  const char* property;
  char32_t marker;
  const char* ascii;
};
const Collapsed kCollapsed[] = {
    {"\\p{N}", 0xD1, "0-9"},
    {"\\p{L}", 0xD2, "A-Za-z"},
    {"\\p{P}", 0xD3, "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}"},
    {"\\p{M}", 0xD4, ""},
    {"\\p{S}", 0xD5, "\\$\\+<->^`\\|\\~"},
    {"\\p{Lu}", 0xD2, "A-Za-z"},
    {"\\p{Ll}", 0xD2, "A-Za-z"},
    {"\\p{Lt}", 0xD2, "A-Za-z"},
    {"\\p{Lm}", 0xD2, "A-Za-z"},
    {"\\p{Lo}", 0xD2, "A-Za-z"},
};
constexpr char32_t kOtherMarker = 0xD0;
constexpr char32_t kSpaceMarker = 0x0B;

const Collapsed* collapsed_property(const std::string& p) {
  for (const Collapsed& c : kCollapsed) {
    if (p == c.property) return &c;
  }
  return nullptr;
}

bool names_category(const std::string& pattern) {
  for (const Collapsed& c : kCollapsed) {
    if (pattern.find(c.property) != std::string::npos) return true;
  }
  return false;
}

// The pattern llama.cpp runs over the collapsed text: each \p{..} replaced
// by its marker and ASCII characters, bracketed outside a class. The scan
// of brackets is llama.cpp's, escapes and all.
std::u32string collapse_pattern(const std::string& re) {
  std::u32string out;
  bool inside = false;
  for (size_t i = 0; i < re.size(); ++i) {
    if (re[i] == '[' && (i == 0 || re[i - 1] != '\\')) {
      out += U'[';
      inside = true;
      continue;
    }
    if (inside && re[i] == ']' && re[i - 1] != '\\') {
      out += U']';
      inside = false;
      continue;
    }
    if (re[i] == '\\' && i + 3 < re.size() && re[i + 1] == 'p' && re[i + 2] == '{') {
      const size_t close = re.find('}', i + 3);
      if (close != std::string::npos && close <= i + 10) {
        if (const Collapsed* c = collapsed_property(re.substr(i, close - i + 1))) {
          if (!inside) out += U'[';
          out += c->marker;
          for (const char* a = c->ascii; *a; ++a) out += static_cast<char32_t>(*a);
          if (!inside) out += U']';
          i = close;
          continue;
        }
      }
    }
    out += static_cast<char32_t>(static_cast<unsigned char>(re[i]));
  }
  return out;
}

char32_t collapsed_char(char32_t c) {
  if (c < 0x80) return c;
  if (unicode::is_white_space(c)) return kSpaceMarker;
  if (unicode::is_letter(c)) return 0xD2;
  if (unicode::is_number(c)) return 0xD1;
  if (unicode::is_punctuation(c)) return 0xD3;
  if (unicode::is_mark(c)) return 0xD4;
  if (unicode::is_symbol(c)) return 0xD5;
  return kOtherMarker;
}

}  // namespace

GgufPre gguf_pre(const std::string& name, const std::string& place) {
  const std::string key = name.empty() ? "default" : name;
  const PreRow* row = nullptr;
  for (const PreRow& r : rows()) {
    if (std::find(r.names.begin(), r.names.end(), key) != r.names.end()) row = &r;
  }
  if (!row) {
    throw_input(place,
                "\"" + message_text(name) +
                    "\" is not a pre-tokenizer llama.cpp knows (docs/formats.md lists them)");
  }
  GgufPre pre;
  pre.name = key;
  pre.ignore_merges = row->flags & kIgnoreMerges;
  pre.add_bos = row->flags & kAddBos;
  pre.no_bos = row->flags & kNoBos;
  pre.escape_spaces = row->flags & kEscapeSpaces;
  pre.byte_encode = !(row->flags & kRawBytes);
  pre.newline_words = row->flags & kNewlineWords;
  const std::string at = place + " \"" + key + "\"";
  for (const char* p : row->patterns) {
    GgufPre::Pattern pattern;
    const std::string re = p;
    pattern.collapsed = names_category(re);
    const std::u32string program = pattern.collapsed ? collapse_pattern(re) : to_u32(re);
    pattern.regex = std::make_shared<const Regex>(program, at, RegexSyntax::kEcmaScript);
    pre.patterns.push_back(std::move(pattern));
  }
  return pre;
}

std::vector<std::string> gguf_pre_names() {
  std::vector<std::string> out;
  for (const PreRow& r : rows()) out.insert(out.end(), r.names.begin(), r.names.end());
  return out;
}

std::vector<std::pair<size_t, size_t>> gguf_pre_split(const GgufPre& pre,
                                                      const std::u32string& text,
                                                      RegexBudget& budget) {
  // The two views of the text llama.cpp matches against, made when needed.
  std::u32string collapsed, wide;
  bool have_collapsed = false, have_wide = false;
  std::vector<std::pair<size_t, size_t>> pieces;
  if (!text.empty()) pieces.emplace_back(0, text.size());
  for (const GgufPre::Pattern& p : pre.patterns) {
    const std::u32string* view = nullptr;
    if (p.collapsed) {
      if (!have_collapsed) {
        collapsed.resize(text.size());
        std::transform(text.begin(), text.end(), collapsed.begin(), collapsed_char);
        have_collapsed = true;
      }
      view = &collapsed;
    } else {
      if (!have_wide) {
        wide = text;
        for (char32_t& c : wide) {
          if (c > 0x7F && unicode::is_white_space(c)) c = kSpaceMarker;
        }
        have_wide = true;
      }
      view = &wide;
    }
    std::vector<std::pair<size_t, size_t>> next;
    for (const auto& [begin, end] : pieces) {
      size_t at = begin;
      for (const auto& [b, e] : p.regex->find_all(view->substr(begin, end - begin), budget)) {
        if (begin + b > at) next.emplace_back(at, begin + b);
        next.emplace_back(begin + b, begin + e);
        at = begin + e;
      }
      if (at < end) next.emplace_back(at, end);
    }
    pieces = std::move(next);
  }
  return pieces;
}

}  // namespace attn::tok
