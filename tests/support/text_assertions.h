// Assertions about text that the unit tests share.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace braid::test {

// EXPECT_TRUE(contains(message, "rank 3")): on failure, prints both strings.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

}  // namespace braid::test
