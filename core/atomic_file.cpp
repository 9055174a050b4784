#include "core/atomic_file.h"

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "core/error.h"

namespace quantplan {

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
    const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    std::random_device rd;
    const std::filesystem::path tmp = dir / ("." + path.filename().string() + ".tmp" + std::to_string(rd()));
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw Error(path.string(), "cannot create a file in " + dir.string());
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        out.flush();
        if (!out) {
            out.close();
            std::error_code ec;
            std::filesystem::remove(tmp, ec);
            throw Error(path.string(), "write failed (disk full?)");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        throw Error(path.string(), "cannot move the finished file into place: " + ec.message());
    }
}

}  // namespace quantplan
