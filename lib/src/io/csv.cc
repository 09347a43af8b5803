#include "attn/csv.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "attn/error.h"
#include "attn/json.h"
#include "base/number_text.h"
#include "base/utf8.h"

namespace attn {

namespace {

struct Cell {
  std::string_view text;
  bool quoted = false;
  size_t offset = 0;  // byte offset of the cell in the source
};

struct Row {
  std::vector<Cell> cells;
  size_t line_offset = 0;  // byte offset of the line start
  int64_t line = 0;
  size_t end_offset = 0;  // byte offset of the end of the line content
};

class CsvParser {
 public:
  CsvParser(std::string_view text, const std::string& source, CellKind kind)
      : text_(text), source_(source), kind_(kind) {}

  CsvMatrix run() {
    size_t pos = 0;
    if (text_.size() >= 3 && std::memcmp(text_.data(), "\xEF\xBB\xBF", 3) == 0) pos = 3;
    check_text(pos);
    // The structure (delimiter, header, label column) is read off the first
    // two content rows; the rest goes through the fast row reader.
    split_lines(pos, 2);
    if (rows_.empty()) throw_input(source_, "empty file; expected a matrix of numbers");

    CsvMatrix m;
    m.delimiter = delimiter_;
    // pandas' df.to_csv() writes the index as a first column under an empty
    // header cell: a header whose first cell is empty heads a label column,
    // whatever the labels look like (0, 1, 2, ...), and its other cells are
    // the column names, numbers included.
    const bool index_column =
        rows_.size() > 1 && rows_[0].cells.size() > 1 && rows_[0].cells[0].text.empty();
    const bool label_column = index_column || has_label_column();
    const size_t first_value = label_column ? 1 : 0;
    // A header row has a name where the values are.
    bool header = index_column;
    for (size_t i = first_value; i < rows_[0].cells.size(); ++i) {
      if (looks_like_name(rows_[0].cells[i])) header = true;
    }
    if (header && !index_column) refuse_mixed_quoted_numbers(rows_[0], first_value);
    const size_t data_begin = header ? 1 : 0;
    if (data_begin >= rows_.size()) {
      fail(rows_[0].line_offset, "a header row but no data rows");
    }
    const Row& first = rows_[data_begin];
    const size_t width = first.cells.size();
    if (width <= first_value) fail(first.end_offset, "a row with labels but no numbers");
    const size_t cols = width - first_value;

    if (header) {
      const Row& h = rows_[0];
      size_t skip;
      if (h.cells.size() == width) {
        skip = first_value;  // the header has a corner cell over the labels
      } else if (label_column && h.cells.size() == cols) {
        skip = 0;
      } else {
        fail(h.line_offset, "header has " + std::to_string(h.cells.size()) +
                                " columns but the data rows have " + std::to_string(width) +
                                " (line " + std::to_string(first.line) + ")");
      }
      for (size_t i = skip; i < h.cells.size(); ++i) {
        m.column_labels.emplace_back(unquote(h.cells[i]));
      }
    }

    Layout lay{width, first_value, first.line, label_column};
    Values<double> values;
    // A guess from the first row's length, so big files grow the vector once.
    values.reserve(
        std::min<size_t>(
            text_.size() / std::max<size_t>(1, first.end_offset - first.line_offset + 1) + 2,
            size_t(1) << 26) *
        cols);
    int64_t nrows = 0;
    for (size_t r = data_begin; r < rows_.size(); ++r) {
      careful_row(rows_[r], lay, values, m.row_labels);
      ++nrows;
    }
    nrows += fast_rows(lay, values, m.row_labels);
    m.values = Tensor<double>({nrows, static_cast<int64_t>(cols)}, std::move(values));
    return m;
  }

 private:
  struct Layout {
    size_t width;        // cells per row, labels included
    size_t first_value;  // 1 with a label column
    int64_t first_line;  // line of the first data row, for messages
    bool label_column;
  };

  // One row through the cell splitter: every check, exact messages.
  void careful_row(const Row& row, const Layout& lay, Values<double>& values,
                   std::vector<std::string>& labels) {
    if (row.cells.size() != lay.width) {
      size_t where = row.cells.size() > lay.width ? row.cells[lay.width].offset : row.end_offset;
      fail(where, "row has " + std::to_string(row.cells.size()) +
                      (row.cells.size() == 1 ? " column" : " columns") + "; expected " +
                      std::to_string(lay.width) + " as in line " + std::to_string(lay.first_line) +
                      " (ragged rows)");
    }
    if (lay.label_column) labels.emplace_back(unquote(row.cells[0]));
    for (size_t c = lay.first_value; c < lay.width; ++c) values.push_back(number(row.cells[c]));
  }

  // The data rows after the first two: numbers are converted straight from
  // the text. Anything unusual on a line (quotes, a non-number, a wrong
  // count) sends that line through careful_row, which gives the message.
  int64_t fast_rows(const Layout& lay, Values<double>& values, std::vector<std::string>& labels) {
    int64_t rows = 0;
    size_t pos = rest_pos_;
    int64_t line_no = rest_line_;
    const bool plain_numbers = kind_ == CellKind::kFinite || kind_ == CellKind::kExtended;
    const size_t cols = lay.width - lay.first_value;
    while (pos < text_.size()) {
      const char* base = text_.data();
      const void* nlp = std::memchr(base + pos, '\n', text_.size() - pos);
      const size_t nl =
          nlp ? static_cast<size_t>(static_cast<const char*>(nlp) - base) : text_.size();
      ++line_no;
      size_t end = nl;
      if (end > pos && base[end - 1] == '\r') --end;
      const size_t line_start = pos;
      pos = nl + 1;
      std::string_view line(base + line_start, end - line_start);
      const bool quoted = line.find('"') != std::string_view::npos;
      line = content_of(line, quoted);
      if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
      ++rows;
      const size_t mark = values.size(), label_mark = labels.size();
      if (!quoted && plain_numbers && fast_line(line, lay, cols, values, labels)) continue;
      values.resize(mark);
      labels.resize(label_mark);
      Row row;
      row.line = line_no;
      row.line_offset = line_start;
      row.end_offset = line_start + line.size();
      split_cells(line, line_start, row);
      careful_row(row, lay, values, labels);
    }
    return rows;
  }

  // Parses one plain line; false when it needs the careful path (the caller
  // then drops what this line added to values and labels).
  bool fast_line(std::string_view line, const Layout& lay, size_t cols, Values<double>& values,
                 std::vector<std::string>& labels) {
    const char* p = line.data();
    const char* e = p + line.size();
    const bool ws = delimiter_ == ' ';
    auto skip_spaces = [&] {
      while (p < e && (*p == ' ' || (ws && *p == '\t'))) ++p;
    };
    skip_spaces();
    if (lay.label_column) {
      const char* start = p;
      while (p < e && !(ws ? (*p == ' ' || *p == '\t') : *p == delimiter_)) ++p;
      const char* stop = p;
      while (stop > start && (stop[-1] == ' ' || stop[-1] == '\t')) --stop;
      if (stop == start) return false;
      labels.emplace_back(start, static_cast<size_t>(stop - start));
      if (!ws) {
        if (p == e) return false;
        ++p;  // the delimiter
      }
    }
    size_t n = 0;
    for (;;) {
      skip_spaces();
      if (p == e) break;
      if (*p == '+') ++p;
      double v;
      auto r = std::from_chars(p, e, v);
      if (r.ec != std::errc() || !std::isfinite(v)) return false;
      values.push_back(v);
      ++n;
      p = r.ptr;
      skip_spaces();
      if (p == e) break;
      if (!ws) {
        if (*p != delimiter_) return false;
        ++p;
        skip_spaces();
        if (p == e) return false;  // a trailing delimiter: an empty cell
      }
    }
    return n == cols;
  }

  [[noreturn]] void fail(size_t offset, const std::string& what) const {
    auto [line, col] = json::line_column(text_, offset);
    throw_input(source_ + ":" + std::to_string(line) + ":" + std::to_string(col), what);
  }

  static std::string unquote(const Cell& c) {
    if (!c.quoted) return std::string(c.text);
    std::string s;
    for (size_t i = 0; i < c.text.size(); ++i) {
      s += c.text[i];
      if (c.text[i] == '"' && i + 1 < c.text.size() && c.text[i + 1] == '"') ++i;
    }
    return s;
  }

  // Refuses what is not CSV text before it is split into nonsense cells:
  // UTF-16 (Windows "Unicode" exports), JSON under a .csv name, and binary
  // data (control bytes that no text file holds).
  void check_text(size_t pos) const {
    if (text_.size() >= 2 && (std::memcmp(text_.data(), "\xFF\xFE", 2) == 0 ||
                              std::memcmp(text_.data(), "\xFE\xFF", 2) == 0)) {
      fail(0,
           "the file is UTF-16 text (it starts with a UTF-16 byte order mark); save it as "
           "UTF-8");
    }
    // A branch-free pass first (the compiler vectorizes it), so clean files
    // cost little; the exact byte is only looked for when there is one.
    unsigned bad = 0;
    for (size_t i = pos; i < text_.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(text_[i]);
      bad |= static_cast<unsigned>((c < 0x20) & (c != '\t') & (c != '\n') & (c != '\r')) |
             static_cast<unsigned>(c == 0x7F);
    }
    for (size_t i = pos; bad && i < text_.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(text_[i]);
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
        static const char* hex = "0123456789abcdef";
        fail(i, std::string("byte 0x") + hex[c >> 4] + hex[c & 15] +
                    " is not text; this does not look like a CSV file (attn reads CSV, JSON "
                    "and .npy)");
      }
    }
    const size_t bad_utf8 = invalid_utf8_offset(text_.substr(pos));
    if (bad_utf8 != std::string_view::npos) {
      const auto c = static_cast<unsigned char>(text_[pos + bad_utf8]);
      static const char* hex = "0123456789abcdef";
      fail(pos + bad_utf8, std::string("byte 0x") + hex[c >> 4] + hex[c & 15] +
                               " is not UTF-8 (a Latin-1 or Windows file?); save the file as "
                               "UTF-8");
    }
    // Classic Mac OS line endings: one long line to every other reader.
    if (text_.find('\n', pos) == std::string_view::npos) {
      const size_t cr = text_.find('\r', pos);
      if (cr != std::string_view::npos &&
          text_.find_first_not_of(" \t\r", cr) != std::string_view::npos) {
        fail(cr, "lines end with a lone CR (old Mac line endings); convert them to LF or CRLF");
      }
    }
    const size_t first = text_.find_first_not_of(" \t\r\n", pos);
    if (first != std::string_view::npos && (text_[first] == '{' || text_[first] == '[')) {
      fail(first, "this looks like JSON, not CSV; give the file a .json name");
    }
  }

  // Chooses the delimiter from the first content line: comma, then tab,
  // then semicolon; whitespace when none of them occurs.
  void choose_delimiter(std::string_view line) {
    bool in_quote = false;
    bool comma = false, tab = false, semi = false;
    for (char c : line) {
      if (c == '"') in_quote = !in_quote;
      if (in_quote) continue;
      if (c == '#') break;
      comma |= c == ',';
      tab |= c == '\t';
      semi |= c == ';';
    }
    delimiter_ = comma ? ',' : tab ? '\t' : semi ? ';' : ' ';
  }

  // Splits lines into rows_ until max_rows content rows; the rest starts at
  // rest_pos_ (line rest_line_ + 1).
  void split_lines(size_t pos, size_t max_rows) {
    int64_t line_no = 0;
    bool chosen = false;
    rest_pos_ = text_.size();
    while (pos <= text_.size()) {
      if (rows_.size() == max_rows) {
        rest_pos_ = pos;
        rest_line_ = line_no;
        return;
      }
      size_t nl = text_.find('\n', pos);
      size_t end = nl == std::string_view::npos ? text_.size() : nl;
      ++line_no;
      std::string_view line = text_.substr(pos, end - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      const std::string_view content = content_of(line, line.find('"') != std::string_view::npos);
      if (content.find_first_not_of(" \t") != std::string_view::npos) {
        if (!chosen) {
          choose_delimiter(content);
          chosen = true;
        }
        Row row;
        row.line = line_no;
        row.line_offset = pos;
        row.end_offset = pos + content.size();
        split_cells(content, pos, row);
        rows_.push_back(std::move(row));
      }
      if (nl == std::string_view::npos) break;
      pos = nl + 1;
    }
  }

  // A line up to its comment: a '#' outside quotes (NumPy's convention).
  // `quoted` says whether the line holds a '"' at all.
  static std::string_view content_of(std::string_view line, bool quoted) {
    if (!quoted) return line.substr(0, line.find('#'));
    bool in_quote = false;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '"') in_quote = !in_quote;
      if (!in_quote && line[i] == '#') return line.substr(0, i);
    }
    return line;
  }

  static bool is_space(char c) { return c == ' ' || c == '\t'; }

  void split_cells(std::string_view s, size_t base, Row& row) {
    size_t i = 0;
    const size_t n = s.size();
    if (delimiter_ == ' ') {
      for (;;) {
        while (i < n && is_space(s[i])) ++i;
        if (i >= n) return;
        if (s[i] == '"') {
          row.cells.push_back(quoted_cell(s, base, i));
          continue;
        }
        size_t start = i;
        while (i < n && !is_space(s[i])) ++i;
        row.cells.push_back(Cell{s.substr(start, i - start), false, base + start});
      }
    }
    for (;;) {
      while (i < n && s[i] == ' ') ++i;
      Cell cell;
      if (i < n && s[i] == '"') {
        cell = quoted_cell(s, base, i);
        while (i < n && is_space(s[i])) ++i;
      } else {
        size_t start = i;
        while (i < n && s[i] != delimiter_) ++i;
        size_t stop = i;
        while (stop > start && is_space(s[stop - 1])) --stop;
        cell = Cell{s.substr(start, stop - start), false, base + start};
      }
      row.cells.push_back(cell);
      if (i >= n) return;
      if (s[i] != delimiter_) {
        fail(base + i, "expected '" + delimiter_name() + "' after a quoted cell");
      }
      ++i;  // the delimiter
    }
  }

  Cell quoted_cell(std::string_view s, size_t base, size_t& i) {
    size_t open = i++;
    size_t start = i;
    for (;;) {
      if (i >= s.size()) fail(base + open, "unterminated quoted cell");
      if (s[i] == '"') {
        if (i + 1 < s.size() && s[i + 1] == '"') {
          i += 2;
          continue;
        }
        break;
      }
      ++i;
    }
    Cell c{s.substr(start, i - start), true, base + open};
    ++i;  // closing quote
    return c;
  }

  std::string delimiter_name() const {
    switch (delimiter_) {
      case '\t':
        return "\\t";
      case ' ':
        return " ";
      default:
        return std::string(1, delimiter_);
    }
  }

  static bool parse_plain(std::string_view t, double* out) {
    if (t.empty()) return false;
    const char* b = t.data();
    const char* e = b + t.size();
    if (*b == '+') ++b;
    auto r = std::from_chars(b, e, *out);
    if (r.ptr != e || b == e) return false;
    if (r.ec == std::errc::result_out_of_range) {
      *out = parse_double_text(b, e);
    } else if (r.ec != std::errc()) {
      return false;
    }
    return true;
  }

  bool looks_numeric(const Cell& c) const {
    if (c.quoted) return false;
    double v;
    if (parse_plain(c.text, &v)) return true;
    if (parse_number_word(c.text, &v)) return true;
    return kind_ == CellKind::kBool && (c.text == "true" || c.text == "false");
  }

  // A header or label cell: quoted, or text that is neither a number nor
  // a broken one. An empty cell ("1,,3") or a number with a stray delimiter
  // ("5;2") is a mistake in the data, not a name, and must not silently
  // turn the first row into a header.
  bool looks_like_name(const Cell& c) const {
    if (c.quoted) return true;
    if (c.text.empty() || looks_numeric(c)) return false;
    const bool digits = c.text.find_first_of("0123456789") != std::string_view::npos;
    return !digits || c.text.find_first_not_of("0123456789+-.,;eE \t") != std::string_view::npos;
  }

  // A cell holding a number inside quotes ("1.5"): text by the CSV rules.
  bool quoted_number(const Cell& c) const {
    if (!c.quoted) return false;
    double v;
    const std::string t = unquote(c);
    return parse_plain(t, &v) || parse_number_word(t, &v);
  }

  // A first row of numbers only, some in quotes and some not ("1.5",2): a
  // header of names quotes them all or none is a number, a data row quotes
  // none. Taking it as a header would drop a row without a word.
  void refuse_mixed_quoted_numbers(const Row& r, size_t first_value) const {
    const Cell* quoted = nullptr;
    bool bare = false;
    for (size_t i = first_value; i < r.cells.size(); ++i) {
      const Cell& c = r.cells[i];
      if (quoted_number(c)) {
        if (!quoted) quoted = &c;
      } else if (!c.quoted && looks_numeric(c)) {
        bare = true;
      } else {
        return;  // a real name: a header
      }
    }
    if (!quoted || !bare) return;
    fail(quoted->offset,
         "the first row mixes quoted and bare numbers, so it is neither a "
         "header nor data; a number in quotes is text: write data without "
         "quotes, or quote every name of a header");
  }

  // A label column has a name first in every row after the first (the
  // first may be a header); the first row then has a label too, or is a
  // header (a name among its other cells).
  bool has_label_column() const {
    auto label_first = [&](const Row& r) {
      return r.cells.size() > 1 && looks_like_name(r.cells[0]);
    };
    if (rows_.size() == 1) return label_first(rows_[0]);
    for (size_t i = 1; i < rows_.size(); ++i) {
      if (!label_first(rows_[i])) return false;
    }
    if (label_first(rows_[0])) return true;
    for (size_t i = 1; i < rows_[0].cells.size(); ++i) {
      if (looks_like_name(rows_[0].cells[i])) return true;
    }
    return false;
  }

  double number(const Cell& c) const {
    double v = 0;
    if (c.text.empty()) {
      fail(c.offset, "empty cell; expected a number");
    }
    if (!c.quoted && parse_number_word(c.text, &v)) {
      if (std::isfinite(v)) return checked(v, c);
      if (kind_ == CellKind::kExtended && is_word(c.text)) return v;
      if (!is_word(c.text)) {
        fail(c.offset, "number out of the double range: " + std::string(c.text));
      }
      fail(c.offset, "non-finite value '" + std::string(c.text) + "' is not allowed here");
    }
    if (kind_ == CellKind::kBool && !c.quoted) {
      if (c.text == "true") return 1;
      if (c.text == "false") return 0;
    }
    if (quoted_number(c)) {
      fail(c.offset, "expected a number, got the quoted text \"" + message_text(unquote(c)) +
                         "\"; a number in quotes is text in CSV: remove the quotes");
    }
    // A long cell (a whole line that failed to split) is shortened.
    const std::string shown = message_text(c.text);
    std::string what = "expected a number, got '" + shown + "'";
    if (delimiter_ == ';' && c.text.find(',') != std::string_view::npos) {
      what += " (decimal commas are not supported; write '.')";
    } else if (delimiter_ != ' ' && c.text.find_first_of(",;\t") != std::string_view::npos) {
      what += " (mixed delimiters? this file uses '" + delimiter_name() + "')";
    }
    fail(c.offset, what);
  }

  // "nan", "inf", "-Infinity", ...: a non-finite value spelled as a word.
  static bool is_word(std::string_view t) {
    return t.find_first_of("aAiInN") != std::string_view::npos;
  }

  double checked(double v, const Cell& c) const {
    if (kind_ == CellKind::kBool && v != 0.0 && v != 1.0) {
      fail(c.offset, "mask cells must be true/false or 0/1, got " + std::string(c.text));
    }
    if (kind_ == CellKind::kCount && (v < 0 || v != std::floor(v))) {
      fail(c.offset, "expected a non-negative integer, got " + std::string(c.text));
    }
    return v;
  }

  std::string_view text_;
  const std::string& source_;
  CellKind kind_;
  char delimiter_ = ',';
  std::vector<Row> rows_;
  size_t rest_pos_ = 0;
  int64_t rest_line_ = 0;
};

}  // namespace

CsvMatrix parse_csv(std::string_view text, const std::string& source, CellKind kind) {
  CsvParser p(text, source, kind);
  return p.run();
}

}  // namespace attn
