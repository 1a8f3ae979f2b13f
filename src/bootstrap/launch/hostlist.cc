#include "bootstrap/launch/hostlist.h"

#include <charconv>
#include <cstdint>

#include "util/format.h"

namespace braid {

namespace {

// A bound on what a malformed or hostile variable can make us allocate; real allocations
// are many orders of magnitude smaller.
constexpr uint64_t kMaxEntries = uint64_t{1} << 20;

// One numeric range inside brackets: "08-10" is {8, 10, width 2}. Slurm pads every number
// of a range to the width of its lower bound, which is how "n[08-10]" keeps its zeros.
struct Range {
  uint64_t lo = 0;
  uint64_t hi = 0;
  size_t width = 0;
  uint64_t count() const { return hi - lo + 1; }
};

// A piece of a host pattern: literal text, or (when `ranges` is non-empty) one bracket.
struct Segment {
  std::string literal;
  std::vector<Range> ranges;
};

Status hostListError(std::string_view list, const std::string& what) {
  return BRAID_ERROR(ncclInvalidArgument, "invalid Slurm host list \"%.*s\": %s", static_cast<int>(list.size()),
                     list.data(), what.c_str());
}

Status tasksError(std::string_view spec, const std::string& what) {
  return BRAID_ERROR(ncclInvalidArgument, "invalid Slurm tasks-per-node list \"%.*s\" (expected e.g. \"2(x3),1\"): %s",
                     static_cast<int>(spec.size()), spec.data(), what.c_str());
}

// Splits on commas outside brackets, checking that brackets balance and do not nest.
Status splitTopLevel(std::string_view list, std::vector<std::string_view>* items) {
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    char c = list[i];
    if (c == '[' && depth++ > 0) return hostListError(list, "nested '['");
    if (c == ']' && --depth < 0) return hostListError(list, "']' without a matching '['");
    if (c == ',' && depth == 0) {
      items->push_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) return hostListError(list, "'[' without a matching ']'");
  items->push_back(list.substr(start));
  return okStatus();
}

Status parseRange(std::string_view list, std::string_view piece, Range* range) {
  if (piece.empty()) return hostListError(list, "empty range inside brackets");
  size_t dash = piece.find('-');
  std::string_view loText = piece.substr(0, dash);
  std::string_view hiText = dash == std::string_view::npos ? loText : piece.substr(dash + 1);
  if (!parseDecimal(loText, &range->lo) || !parseDecimal(hiText, &range->hi)) {
    return hostListError(list, "\"" + std::string(piece) + "\" is not a number or a range of numbers like 1-4");
  }
  if (range->hi < range->lo) return hostListError(list, "range \"" + std::string(piece) + "\" is reversed");
  if (range->hi - range->lo >= kMaxEntries) {
    return hostListError(list, "range \"" + std::string(piece) + "\" expands to too many hosts");
  }
  range->width = loText.size();
  return okStatus();
}

Status parseBracket(std::string_view list, std::string_view body, std::vector<Range>* ranges) {
  size_t start = 0;
  while (true) {
    size_t comma = body.find(',', start);
    Range range;
    BRAID_CHECK(parseRange(list, body.substr(start, comma - start), &range));
    ranges->push_back(range);
    if (comma == std::string_view::npos) return okStatus();
    start = comma + 1;
  }
}

// `item` is one top-level entry with balanced, non-nested brackets.
Status parseItem(std::string_view list, std::string_view item, std::vector<Segment>* segments) {
  if (item.empty()) return hostListError(list, "empty host name");
  size_t pos = 0;
  while (pos < item.size()) {
    size_t open = item.find('[', pos);
    if (open != pos) {
      segments->push_back(Segment{std::string(item.substr(pos, open - pos)), {}});
      if (open == std::string_view::npos) break;
    }
    size_t close = item.find(']', open);
    Segment bracket;
    BRAID_CHECK(parseBracket(list, item.substr(open + 1, close - open - 1), &bracket.ranges));
    segments->push_back(std::move(bracket));
    pos = close + 1;
  }
  return okStatus();
}

// Counts the hosts of one item without building them, saturating at kMaxEntries + 1.
uint64_t countHosts(const std::vector<Segment>& segments) {
  uint64_t total = 1;
  for (const Segment& segment : segments) {
    uint64_t alternatives = segment.ranges.empty() ? 1 : 0;
    for (const Range& range : segment.ranges) alternatives += range.count();
    if (alternatives > kMaxEntries || total * alternatives > kMaxEntries) return kMaxEntries + 1;
    total *= alternatives;
  }
  return total;
}

std::string padded(uint64_t value, size_t width) {
  std::string text = std::to_string(value);
  if (text.size() < width) text.insert(0, width - text.size(), '0');
  return text;
}

// The product of the segments, earlier brackets varying slowest (Slurm's order).
void appendHosts(const std::vector<Segment>& segments, std::vector<std::string>* hosts) {
  std::vector<std::string> partial{""};
  for (const Segment& segment : segments) {
    if (segment.ranges.empty()) {
      for (std::string& prefix : partial) prefix += segment.literal;
      continue;
    }
    std::vector<std::string> next;
    for (const std::string& prefix : partial) {
      for (const Range& range : segment.ranges) {
        // Counting, not comparing against hi, so that a range ending at UINT64_MAX ends.
        for (uint64_t i = 0; i < range.count(); ++i) next.push_back(prefix + padded(range.lo + i, range.width));
      }
    }
    partial = std::move(next);
  }
  for (std::string& host : partial) hosts->push_back(std::move(host));
}

// One entry of a tasks-per-node list: "4" or "2(x3)".
Status parseTasksEntry(std::string_view spec, std::string_view entry, int* count, uint64_t* repeat) {
  std::string_view countText = entry;
  *repeat = 1;
  size_t open = entry.find('(');
  if (open != std::string_view::npos) {
    countText = entry.substr(0, open);
    std::string_view suffix = entry.substr(open);
    if (suffix.size() < 4 || suffix[1] != 'x' || suffix.back() != ')' ||
        !parseDecimal(suffix.substr(2, suffix.size() - 3), repeat)) {
      return tasksError(spec, "\"" + std::string(entry) + "\" is not of the form COUNT(xREPEAT)");
    }
    if (*repeat == 0) return tasksError(spec, "\"" + std::string(entry) + "\" repeats zero times");
  }
  if (!parseDecimal(countText, count) || *count < 1) {
    return tasksError(spec, "\"" + std::string(countText) + "\" is not a positive task count");
  }
  return okStatus();
}

}  // namespace

Status expandSlurmHostList(std::string_view list, std::vector<std::string>* hosts) {
  if (trim(list).empty()) return hostListError(list, "the list is empty");
  std::vector<std::string_view> items;
  BRAID_CHECK(splitTopLevel(list, &items));
  std::vector<std::vector<Segment>> parsed(items.size());
  uint64_t total = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    BRAID_CHECK(parseItem(list, trim(items[i]), &parsed[i]));
    total += countHosts(parsed[i]);
    if (total > kMaxEntries) {
      return hostListError(list,
                           strFormat("expands to more than %llu hosts", static_cast<unsigned long long>(kMaxEntries)));
    }
  }
  std::vector<std::string> expanded;
  expanded.reserve(total);
  for (const std::vector<Segment>& segments : parsed) appendHosts(segments, &expanded);
  *hosts = std::move(expanded);
  return okStatus();
}

Status expandSlurmTasksPerNode(std::string_view spec, std::vector<int>* counts) {
  if (trim(spec).empty()) return tasksError(spec, "the list is empty");
  std::vector<int> expanded;
  size_t start = 0;
  while (true) {
    size_t comma = spec.find(',', start);
    int count = 0;
    uint64_t repeat = 0;
    BRAID_CHECK(parseTasksEntry(spec, trim(spec.substr(start, comma - start)), &count, &repeat));
    if (repeat > kMaxEntries - expanded.size()) return tasksError(spec, "it describes too many nodes");
    expanded.insert(expanded.end(), repeat, count);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  *counts = std::move(expanded);
  return okStatus();
}

}  // namespace braid
