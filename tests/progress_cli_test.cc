// Progress reports: the bar line the terminal shows
// (commands/progress_text.h). The reports the engine and the file reader
// make: progress_test.cc.
#include "attn/progress.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "attn/attention.h"
#include "attn/file_io.h"
#include "commands/progress_text.h"
#include "test_util.h"

namespace attn {
namespace {

TEST(ProgressLine, BarPercentRateAndEtaForBytes) {
  // 35 MiB of 100 MiB in 2 s: 17.5 MiB/s, 65 MiB left: 3.7 s, shown as 0:04.
  // The line fills the 80 columns: a bar of 80 - 16 (name) - 3 - 2 - 26
  // (tail) = 33 cells, 35% of them (11) filled.
  const int64_t mib = 1 << 20;
  EXPECT_EQ(
      format_progress_line("reading big.json", 35 * mib, 100 * mib, ProgressUnit::kBytes, 2.0, 80),
      "reading big.json [###########......................]   35%  17.5 MiB/s  ETA 0:04");
}

TEST(ProgressLine, ItemsShowDoneOfTotal) {
  EXPECT_EQ(format_progress_line("computing", 3, 8, ProgressUnit::kItems, 2.0, 60),
            "computing [#########.................]  3/8  1.5/s  ETA 0:04");
}

TEST(ProgressLine, UnknownTotalShowsAmountAndRate) {
  EXPECT_EQ(format_progress_line("reading <stdin>", 12 << 20, -1, ProgressUnit::kBytes, 2.0, 80),
            "reading <stdin>  12.0 MiB  6.0 MiB/s");
}

TEST(ProgressLine, NothingDoneYetHasNoRateAndUnknownEta) {
  EXPECT_EQ(format_progress_line("computing", 0, 4, ProgressUnit::kItems, 1.5, 60),
            "computing [................................]  0/4  ETA --:--");
}

TEST(ProgressLine, FitsTheWidthByDroppingTheBarThenCuttingTheName) {
  const std::string wide = format_progress_line("reading data/very/long/name/input.json", 1, 2,
                                                ProgressUnit::kItems, 1.0, 200);
  EXPECT_NE(wide.find('['), std::string::npos);
  const std::string narrow = format_progress_line("reading data/very/long/name/input.json", 1, 2,
                                                  ProgressUnit::kItems, 1.0, 40);
  EXPECT_EQ(narrow, "...name/input.json  1/2  1.0/s  ETA 0:01");
  EXPECT_LE(narrow.size(), 40u);
  for (int width : {0, 5, 20, 30, 50, 79, 120}) {
    EXPECT_LE(format_progress_line("computing", 5, 9, ProgressUnit::kItems, 3.0, width).size(),
              static_cast<size_t>(std::max(width, 0)))
        << "width " << width;
  }
}

TEST(ProgressLine, DurationsAndSizes) {
  EXPECT_EQ(format_duration(0), "0:00");
  EXPECT_EQ(format_duration(6.2), "0:07");
  EXPECT_EQ(format_duration(750), "12:30");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(-1), "--:--");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(3072), "3.0 KiB");
  EXPECT_EQ(format_bytes(1.5 * (1 << 30)), "1.5 GiB");
}

}  // namespace
}  // namespace attn
