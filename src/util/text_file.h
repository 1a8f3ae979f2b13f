// Small text files of the kernel's pseudo file systems (sysfs, procfs): one value per file.
#pragma once

#include <string>

namespace braid {

// The first line of `path`, trimmed. False when the file cannot be opened or read: sysfs
// answers EINVAL for the empty slots of sparse tables (RoCE GIDs), EISDIR for directories,
// EACCES for what needs privileges.
bool readFirstLine(const std::string& path, std::string* out);
// The same, empty when the file cannot be read.
std::string readFirstLine(const std::string& path);

}  // namespace braid
