// Progress reports through the library: the reports the engine and the
// file reader make (attn/progress.h). The bar line the terminal shows:
// progress_cli_test.cc.
#include "attn/progress.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "attn/attention.h"
#include "attn/file_io.h"
#include "test_util.h"

namespace attn {
namespace {

// Records every report.
struct Recorder : ProgressSink {
  std::vector<std::pair<int64_t, int64_t>> calls;
  std::string task;
  void update(std::string_view t, int64_t done, int64_t total, ProgressUnit) override {
    task = t;
    calls.emplace_back(done, total);
  }
};

TEST(Progress, EngineReportsEachBatchAndHead) {
  // batch 2, heads 2: four units (one block of queries per batch and
  // head), reported in order by one thread.
  const Problem p =
      test::problem(R"({"X": [[[1, 0, 0, 1], [0, 1, 1, 0]], [[1, 1, 0, 0], [0, 0, 1, 1]]],
                                      "heads": 2})");
  Recorder rec;
  ComputeRequest req;
  req.progress = progress_task(&rec, "computing");
  req.threads = 1;
  compute(p, req);
  EXPECT_EQ(rec.task, "computing");
  const std::vector<std::pair<int64_t, int64_t>> want = {{1, 4}, {2, 4}, {3, 4}, {4, 4}};
  EXPECT_EQ(rec.calls, want);
}

TEST(Progress, NoSinkNoFunction) { EXPECT_FALSE(progress_task(nullptr, "computing")); }

TEST(Progress, ReadingAFileReportsBytesAndEnds) {
  const std::string path = test::write_temp("progress_read.txt", std::string(200000, 'x'));
  Recorder rec;
  const std::string text = read_file(path, progress_task(&rec, "reading", ProgressUnit::kBytes));
  EXPECT_EQ(text.size(), 200000u);
  ASSERT_GE(rec.calls.size(), 2u);
  EXPECT_EQ(rec.calls.front().second, 200000);
  EXPECT_EQ(rec.calls.back(), std::make_pair(int64_t{200000}, int64_t{200000}));
}

}  // namespace
}  // namespace attn
