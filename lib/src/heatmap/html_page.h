// The fixed parts of the HTML heatmap page: its head, its style sheet and
// markup, and the script that draws the panels from the page's data block
// (<script type="application/json" id="attn-data">, written by html.cc).
// They are the files heatmap/page/page.html, page.css and page.js, carried
// in the binary. The page fetches nothing: its Content-Security-Policy
// forbids every network request, and it works from file://.
#pragma once

#include <string>

namespace attn::heatmap {

// "<!DOCTYPE html>" up to and including the <meta> elements of <head>.
const std::string& html_page_start();
// The <style> element, the end of <head> and the body's markup.
const std::string& html_page_body();
// The script and the end of the document.
const std::string& html_page_end();

}  // namespace attn::heatmap
