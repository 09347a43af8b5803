// The heatmap flags of attn run, attn heatmap and attn diff: their text
// parsed into HeatmapOptions (the program's part of drawing).
#include "commands/heatmap_flags.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "attn/error.h"
#include "base/names.h"
#include "base/number_text.h"
#include "io/settings.h"

namespace attn {

namespace {

template <class E>
E choice(std::string_view flag, const std::string& text, const std::vector<std::string>& names,
         const std::vector<E>& values) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return values[i];
  }
  bad_flag(flag, not_one_of(text, names));
}

double finite_number(std::string_view flag, const std::string& text) {
  double v = 0;
  if (!parse_number_word(text, &v) || !std::isfinite(v)) {
    bad_flag(flag, "expected a finite number, got '" + text + "'");
  }
  return v;
}

int64_t integer(std::string_view flag, const std::string& text, int64_t lo, int64_t hi) {
  const double v = finite_number(flag, text);
  if (v != std::floor(v) || v < static_cast<double>(lo) || v > static_cast<double>(hi)) {
    bad_flag(flag, "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                       ", got '" + text + "'");
  }
  return static_cast<int64_t>(v);
}

}  // namespace

void set_heatmap_flag(HeatmapOptions& o, std::string_view flag, const std::string& text) {
  if (flag == "--colormap") {
    // matplotlib's spellings (Blues, RdBu_r) name the same maps.
    std::string lower = text;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    o.colormap =
        choice<Colormap>(flag, lower, colormap_names(),
                         {Colormap::kViridis, Colormap::kMagma, Colormap::kGray, Colormap::kBlues,
                          Colormap::kRdBu, Colormap::kViridisR, Colormap::kMagmaR, Colormap::kGrayR,
                          Colormap::kBluesR, Colormap::kRdBuR});
  } else if (flag == "--vmin") {
    o.vmin_auto = text == "auto";
    o.vmin = o.vmin_auto ? std::nullopt : std::optional<double>(finite_number(flag, text));
  } else if (flag == "--vmax") {
    o.vmax_auto = text == "auto";
    o.vmax_quantile.reset();
    if (!text.empty() && (text[0] == 'q' || text[0] == 'Q')) {
      const double q = finite_number(flag, text.substr(1));
      if (!(q > 0 && q <= 100)) {
        bad_flag(flag, "the percentile in '" + text + "' must be above 0 and at most 100 (q99)");
      }
      o.vmax_quantile = q;
      o.vmax.reset();
    } else {
      o.vmax = o.vmax_auto ? std::nullopt : std::optional<double>(finite_number(flag, text));
    }
  } else if (flag == "--color-scale") {
    o.gamma = 1;
    if (text == "linear") {
      o.color_scale = ColorScale::kLinear;
    } else if (text == "log") {
      o.color_scale = ColorScale::kLog;
    } else if (text.rfind("power:", 0) == 0) {
      const double g = finite_number(flag, text.substr(6));
      if (!(g > 0)) bad_flag(flag, "the gamma of '" + text + "' must be above 0 (power:0.5)");
      o.color_scale = ColorScale::kPower;
      o.gamma = g;
    } else {
      bad_flag(flag, "expected linear, log or power:G (G > 0, as power:0.5), got '" + text + "'");
    }
  } else if (flag == "--ignore-first") {
    o.ignore_first = text == "true";
  } else if (flag == "--normalize") {
    o.normalize = choice<Normalize>(flag, text, normalize_names(),
                                    {Normalize::kNone, Normalize::kRow, Normalize::kCol});
  } else if (flag == "--batch") {
    o.batch = integer(flag, text, 0, INT32_MAX);
  } else if (flag == "--head") {
    o.head = integer(flag, text, 0, INT32_MAX);
  } else if (flag == "--max-size") {
    o.max_size = static_cast<int>(integer(flag, text, kMinMaxSize, kLargestMaxSize));
  } else if (flag == "--fit") {
    o.fit = parse_figure_fit(text);
    o.max_size = std::max(o.fit->width, o.fit->height);
  } else if (flag == "--reduce") {
    o.reduce = choice<Reduce>(flag, text, reduce_names(), {Reduce::kMean, Reduce::kMax});
    o.reduce_given = true;
  } else if (flag == "--cell-size") {
    o.cell_size = static_cast<int>(integer(flag, text, 1, kMaxCellSize));
  } else if (flag == "--labels-every") {
    o.labels_every = integer(flag, text, 1, INT32_MAX);
  } else if (flag == "--annotate") {
    o.annotate = choice<Annotate>(flag, text, annotate_names(),
                                  {Annotate::kAuto, Annotate::kAlways, Annotate::kNever});
  } else if (flag == "--token-style") {
    o.token_style =
        choice<TokenStyle>(flag, text, token_style_names(),
                           {TokenStyle::kReadable, TokenStyle::kMarker, TokenStyle::kRaw});
  } else if (flag == "--precision") {
    o.decimals = static_cast<int>(integer(flag, text, 0, 17));
  } else if (flag == "--font") {
    o.font = load_font(text);
  } else {
    throw_internal("set_heatmap_flag: unknown flag " + std::string(flag));
  }
  if (o.vmin && o.vmax && !(*o.vmin < *o.vmax)) {
    throw_usage("--vmin " + format_shortest(*o.vmin) + " must be below --vmax " +
                format_shortest(*o.vmax));
  }
}

const std::vector<std::string>& run_of_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = heatmap_stage_names();
    n.push_back("rollout");
    n.push_back("value-norm");
    return n;
  }();
  return names;
}

void parse_run_of_flag(const std::string& text, HeatmapRequest& h) {
  if (text == "rollout" || text == "value-norm") {
    h.stack_of = text == "rollout" ? StackOf::kRollout : StackOf::kValueNorm;
    return;
  }
  if (std::find(heatmap_stage_names().begin(), heatmap_stage_names().end(), text) ==
      heatmap_stage_names().end()) {
    throw_usage("--of: " + not_one_of(text, run_of_names()));
  }
  h.stage = parse_heatmap_stage_flag(text);
}

HeatmapStage parse_heatmap_stage_flag(const std::string& text) {
  return choice<HeatmapStage>(
      "--of", text, heatmap_stage_names(),
      {HeatmapStage::kWeights, HeatmapStage::kScores, HeatmapStage::kOutput, HeatmapStage::kBias});
}

}  // namespace attn
