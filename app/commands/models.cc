#include "commands/models.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "attn/error.h"
#include "attn/escape.h"
#include "io/json_writer.h"

namespace attn::detail {

namespace {

// Three significant digits of n / 1000^k, then `unit`.
std::string scaled(int64_t n, const char* const units[], int count, const char* space) {
  if (n < 0) return "-";
  if (n < 1000) return std::to_string(n) + (*units[0] ? space : "") + units[0];
  double v = static_cast<double>(n);
  int k = 0;
  while (v >= 999.5 && k + 1 < count) {
    v /= 1000;
    ++k;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 9.995 ? "%.2f" : v < 99.95 ? "%.1f" : "%.0f", v);
  return std::string(buf) + space + units[k];
}

// A cell on one line, whatever a file put in it: newlines and tabs
// written out, other controls made harmless for the terminal.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  return terminal_text(out);
}

std::string or_dash(const std::string& s) { return s.empty() ? "-" : cell(s); }

// "no models: no Ollama store at A or B; the Hugging Face cache C holds none".
std::string empty_note(const model::StoreListing& l) {
  std::string note;
  for (const char* store : {"ollama", "hf"}) {
    const char* title = *store == 'o' ? "Ollama store" : "Hugging Face cache";
    std::string missing, empty;
    for (const auto& s : l.searched) {
      if (s.store != store) continue;
      std::string& list = s.exists ? empty : missing;
      list += (list.empty() ? "" : " or ") + cell(s.path);
    }
    if (!missing.empty())
      note += (note.empty() ? "" : "; ") + ("no " + std::string(title) + " at " + missing);
    if (!empty.empty())
      note +=
          (note.empty() ? "" : "; ") + ("the " + std::string(title) + " " + empty + " holds none");
  }
  return "no models: " + note + "\n";
}

}  // namespace

std::string count_text(int64_t n) {
  static const char* const units[] = {"", "K", "M", "B", "T"};
  return scaled(n, units, 5, "");
}

std::string bytes_text(int64_t n) {
  static const char* const units[] = {"B", "KB", "MB", "GB", "TB"};
  return scaled(n, units, 5, " ");
}

std::string models_table(const model::StoreListing& listing) {
  if (listing.models.empty()) return empty_note(listing);
  std::vector<std::vector<std::string>> rows = {
      {"name", "architecture", "reads", "parameters", "quantization", "size", "path"}};
  for (const model::StoreEntry& e : listing.models) {
    rows.push_back({cell(e.name), or_dash(e.architecture), e.reads ? "yes" : "no",
                    count_text(e.parameters), or_dash(e.quantization), bytes_text(e.bytes),
                    cell(e.path)});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) {
      out += r[i];
      if (i + 1 < r.size()) out += std::string(width[i] - r[i].size() + 2, ' ');
    }
    out += "\n";
  }
  bool first = true;
  for (const model::StoreEntry& e : listing.models) {
    if (e.problem.empty()) continue;
    out += (first ? "\n" : "") + cell(e.name) + ": " + cell(e.problem) + "\n";
    first = false;
  }
  return out;
}

std::string models_json(const model::StoreListing& listing) {
  if (listing.models.empty()) return "[]\n";
  std::string out;
  JsonWriter w(out);
  w.begin_array(JsonLayout::kBlock);
  auto text_or_null = [&w](const std::string& s) {
    if (s.empty()) {
      w.null();
    } else {
      w.string(s);
    }
  };
  auto count_or_null = [&w](int64_t n) {
    if (n < 0) {
      w.null();
    } else {
      w.integer(n);
    }
  };
  for (const model::StoreEntry& e : listing.models) {
    w.begin_object(JsonLayout::kInline);
    w.key("name").string(e.name);
    w.key("store").string(e.store);
    w.key("architecture");
    text_or_null(e.architecture);
    w.key("reads").boolean(e.reads);
    w.key("parameters");
    count_or_null(e.parameters);
    w.key("size_label");
    text_or_null(e.size_label);
    w.key("quantization");
    text_or_null(e.quantization);
    w.key("bytes");
    count_or_null(e.bytes);
    w.key("path").string(e.path);
    w.key("problem");
    text_or_null(e.problem);
    w.end_object();
  }
  w.end_array();
  return out + "\n";
}

}  // namespace attn::detail
