#include "commands/summary_output.h"

#include <cmath>
#include <memory>

#include "attn/escape.h"
#include "base/number_text.h"

namespace attn {

namespace {

int64_t cells(const SummaryNumbers& s) {
  return static_cast<int64_t>(s.layers.size() * s.heads.size());
}

void write_grid(JsonWriter& w, const SummaryNumbers& s, const std::vector<double>& v) {
  w.begin_array(JsonLayout::kBlock);
  const auto H = static_cast<int64_t>(s.heads.size());
  for (size_t l = 0; l < s.layers.size(); ++l) {
    w.begin_array(JsonLayout::kInline);
    for (int64_t h = 0; h < H; ++h)
      w.number(v[l * static_cast<size_t>(H) + static_cast<size_t>(h)]);
    w.end_array();
  }
  w.end_array();
}

void write_ids(JsonWriter& w, const std::vector<int64_t>& ids) {
  w.begin_array(JsonLayout::kInline);
  for (int64_t i : ids) w.integer(i);
  w.end_array();
}

std::string json_text(const SummaryNumbers& s, const std::function<void(JsonWriter&)>& more) {
  std::string out;
  JsonWriter w(out);
  w.begin_object(JsonLayout::kBlock);
  w.key("summary").string(name(s.stat));
  w.key("meaning").string(std::string(head_stat_meaning(s.stat)) +
                          ", the mean over the query rows");
  w.key("source").string(s.source);
  if (s.sentences > 0) w.key("sentences").integer(s.sentences);
  write_ids(w.key("layers"), s.layers);
  write_ids(w.key("heads"), s.heads);
  w.key("left_out").string(s.left_out);
  write_grid(w.key("values"), s, s.values);
  if (!s.sd.empty()) write_grid(w.key("sd"), s, s.sd);
  bool all_counted = true;
  for (int64_t c : s.counts) all_counted = all_counted && c == s.sentences;
  if (!all_counted) {
    w.key("counts").begin_array(JsonLayout::kBlock);
    const size_t H = s.heads.size();
    for (size_t l = 0; l < s.layers.size(); ++l) {
      w.begin_array(JsonLayout::kInline);
      for (size_t h = 0; h < H; ++h) w.integer(s.counts[l * H + h]);
      w.end_array();
    }
    w.end_array();
  }
  if (s.top > 0) {
    w.key("top").begin_array(JsonLayout::kBlock);
    for (int64_t c : top_cells(s.values, s.stat, s.top)) {
      const auto H = static_cast<int64_t>(s.heads.size());
      w.begin_object(JsonLayout::kInline);
      w.key("layer").integer(s.layers[static_cast<size_t>(c / H)]);
      w.key("head").integer(s.heads[static_cast<size_t>(c % H)]);
      w.key("value").number(s.values[static_cast<size_t>(c)]);
      if (!s.sd.empty()) w.key("sd").number(s.sd[static_cast<size_t>(c)]);
      w.end_object();
    }
    w.end_array();
  }
  if (more) more(w);
  w.end_object();
  out += '\n';
  return out;
}

// layer,head,value (,sd): every head, or the --top N in their order.
std::string csv_text(const SummaryNumbers& s) {
  std::string out = s.sd.empty() ? "layer,head,value\n" : "layer,head,value,sd\n";
  std::vector<int64_t> order;
  if (s.top > 0) {
    order = top_cells(s.values, s.stat, s.top);
  } else {
    for (int64_t c = 0; c < cells(s); ++c) order.push_back(c);
  }
  const auto H = static_cast<int64_t>(s.heads.size());
  for (int64_t c : order) {
    out += std::to_string(s.layers[static_cast<size_t>(c / H)]) + "," +
           std::to_string(s.heads[static_cast<size_t>(c % H)]) + "," +
           format_shortest(s.values[static_cast<size_t>(c)]);
    if (!s.sd.empty()) out += "," + format_shortest(s.sd[static_cast<size_t>(c)]);
    out += "\n";
  }
  return out;
}

std::string cell_text(double v, int precision) {
  return std::isnan(v) ? "nan" : format_fixed(v, precision);
}

// Layers down, heads across; the --top heads below.
std::string table_text(const SummaryNumbers& s, int precision) {
  std::string out =
      "head summary: " + std::string(head_stat_meaning(s.stat)) + ", the mean over the query rows";
  if (s.sentences > 0) {
    out += " and over " + std::to_string(s.sentences) + " sentence" +
           (s.sentences == 1 ? "" : "s") + " (± numpy.std)";
  }
  out += "\n";
  if (!s.left_out.empty()) out += "left out: " + s.left_out + "\n";
  out += terminal_text(s.source) + "\n\n";
  std::vector<std::vector<std::string>> rows{{"layer"}};
  for (int64_t h : s.heads) rows[0].push_back("head " + std::to_string(h));
  const size_t H = s.heads.size();
  for (size_t l = 0; l < s.layers.size(); ++l) {
    rows.push_back({std::to_string(s.layers[l])});
    for (size_t h = 0; h < H; ++h) {
      std::string cell = cell_text(s.values[l * H + h], precision);
      if (!s.sd.empty()) cell += " ±" + cell_text(s.sd[l * H + h], precision);
      rows.back().push_back(cell);
    }
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      line += (c ? "  " : "") + std::string(width[c] - r[c].size(), ' ') + r[c];
    }
    out += line + "\n";
  }
  if (s.top > 0) {
    out += "\ntop " + std::to_string(s.top) + " (" +
           (s.stat == HeadStat::kEntropy ? "smallest" : "largest") + "):\n";
    const auto Hs = static_cast<int64_t>(H);
    for (int64_t c : top_cells(s.values, s.stat, s.top)) {
      out += "  layer " + std::to_string(s.layers[static_cast<size_t>(c / Hs)]) + " head " +
             std::to_string(s.heads[static_cast<size_t>(c % Hs)]) + "  " +
             cell_text(s.values[static_cast<size_t>(c)], precision) + "\n";
    }
  }
  return out;
}

}  // namespace

std::string format_summary(const SummaryNumbers& s, Format format, int precision,
                           const std::function<void(JsonWriter&)>& more) {
  switch (format) {
    case Format::kJson:
      return json_text(s, more);
    case Format::kCsv:
      return csv_text(s);
    default:
      return table_text(s, precision);
  }
}

HeatmapData summary_figure(const SummaryNumbers& s, const std::string& title) {
  auto values = std::make_shared<std::vector<double>>(s.values);
  HeatmapData d;
  d.owned_values = values;
  d.values = values->data();
  d.rows = static_cast<int64_t>(s.layers.size());
  d.cols = static_cast<int64_t>(s.heads.size());
  d.row_title = "layers";
  d.col_title = "heads";
  for (int64_t l : s.layers) d.row_labels.push_back(std::to_string(l));
  for (int64_t h : s.heads) d.col_labels.push_back(std::to_string(h));
  d.value_name = head_stat_meaning(s.stat);
  d.zero_based =
      s.stat == HeadStat::kFirst || s.stat == HeadStat::kPrevious || s.stat == HeadStat::kSelf;
  d.title = title;
  d.source = s.source;
  d.subtitle = "head summary: " + std::string(head_stat_meaning(s.stat)) +
               ", the mean over the query rows" +
               (s.sentences > 0 ? " and over " + std::to_string(s.sentences) + " sentences" : "") +
               (s.left_out.empty() ? "" : " (left out: " + s.left_out + ")");
  return d;
}

}  // namespace attn
