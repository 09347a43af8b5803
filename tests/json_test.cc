#include "attn/json.h"

#include <gtest/gtest.h>

TEST(Json, ParsesNumbers) {
  auto v = attn::json::parse("[1, 2.5]", "t");
  ASSERT_TRUE(v.packed());
}
