#pragma once
// Reading a whole text file for a parser, bounded, with the one-line error the command line prints.
#include <cstdint>
#include <filesystem>
#include <string>

namespace quantplan {

// The bytes of `path`. Throws Error(field) "cannot read PATH" when it cannot be opened, and
// "PATH is larger than N MiB" beyond `max_bytes`, so a hostile file is never read whole.
std::string read_text_file(const std::filesystem::path& path, const std::string& field, std::uint64_t max_bytes = std::uint64_t{1} << 30);

}  // namespace quantplan
