// One part of rank 0's report, in both forms: the lines of the text report and the JSON
// object that --json prints in its place.
#pragma once

#include <string>
#include <vector>

#include "json.h"

namespace braid::doctor {

struct Section {
  std::string key;    // JSON member name: "launcher", "network", ...
  std::string title;  // text heading
  std::vector<std::string> lines;
  Json json = Json::object();
};

}  // namespace braid::doctor
