#pragma once
// Writing files so that a reader never sees half of one: write a temporary file beside the
// target, flush it, then rename it into place.
#include <filesystem>
#include <string_view>

namespace quantplan {

// Writes `content` to `path` atomically. Throws Error naming the path on failure; the target is
// then untouched and the temporary removed.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace quantplan
