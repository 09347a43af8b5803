// The HTML page's fixed text, assembled from the files in heatmap/page/
// (embedded at build time, see cmake/embed_files.cmake): page.html with
// page.css and page.js put in place of their marker lines, split at the
// places the writer fills in (the title and the data). The script takes
// every string from the data block and only ever sets it as text
// (textContent, SVG text, canvas fillText), never as markup.
#include "heatmap/html_page.h"

#include <string_view>

#include "attn/error.h"

namespace attn::heatmap {

extern const unsigned char kPageHtml[];
extern const size_t kPageHtmlSize;
extern const unsigned char kPageCss[];
extern const size_t kPageCssSize;
extern const unsigned char kPageJs[];
extern const size_t kPageJsSize;

namespace {

std::string_view text(const unsigned char* bytes, size_t size) {
  return {reinterpret_cast<const char*>(bytes), size};
}

// The position of a marker line ("{{name}}\n") in page.html, which holds
// each once.
size_t marker(std::string_view page, std::string_view line) {
  const size_t at = page.find(line);
  if (at == std::string_view::npos) throw_internal("page.html has no " + std::string(line));
  return at;
}

void replace_line(std::string& page, std::string_view line, std::string_view with) {
  page.replace(marker(page, line), line.size(), with);
}

struct Parts {
  std::string start, body, end;
};

const Parts& parts() {
  static const Parts p = [] {
    std::string page(text(kPageHtml, kPageHtmlSize));
    replace_line(page, "{{page.css}}\n", text(kPageCss, kPageCssSize));
    replace_line(page, "{{page.js}}\n", text(kPageJs, kPageJsSize));
    const std::string_view title = "{{title}}\n", data = "{{data}}\n";
    const size_t t = marker(page, title), d = marker(page, data);
    return Parts{page.substr(0, t), page.substr(t + title.size(), d - t - title.size()),
                 page.substr(d + data.size())};
  }();
  return p;
}

}  // namespace

const std::string& html_page_start() { return parts().start; }

const std::string& html_page_body() { return parts().body; }

const std::string& html_page_end() { return parts().end; }

}  // namespace attn::heatmap
