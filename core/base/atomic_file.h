#pragma once
// Writing files so that a reader never sees half of one: write a temporary file beside the
// target, flush it, then rename it into place.
#include <filesystem>
#include <string_view>

namespace quantplan {

// Writes `content` to `path` atomically. Throws Error naming the path on failure; the target is
// then untouched and the temporary removed. A link to a regular file has that file replaced (the
// link stays); an existing file that is not a regular one (/dev/null, /dev/stdout, a FIFO) is
// written straight through, since renaming over it would replace the device node itself.
// A folder is an error.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace quantplan
