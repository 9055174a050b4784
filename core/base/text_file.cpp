#include "core/base/text_file.h"

#include <fstream>

#include "core/base/error.h"

namespace quantplan {

std::string read_text_file(const std::filesystem::path& path, const std::string& field, std::uint64_t max_bytes) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(field, "cannot read " + path.string());
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 0) throw Error(field, "cannot read " + path.string());
    if (static_cast<std::uint64_t>(size) > max_bytes)
        throw Error(field, path.string() + " is larger than " + std::to_string(max_bytes >> 20) + " MiB");
    in.seekg(0);
    std::string text(static_cast<std::size_t>(size), '\0');
    in.read(text.data(), size);
    if (in.gcount() != size) throw Error(field, "cannot read " + path.string());
    return text;
}

}  // namespace quantplan
