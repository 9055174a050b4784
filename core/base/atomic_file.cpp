#include "core/base/atomic_file.h"

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "core/base/error.h"

namespace quantplan {

namespace {

// Writes `content` straight into an existing file that is not a regular one (a character device
// such as /dev/null or /dev/stdout, a FIFO): renaming a temporary over it would replace the
// device node itself, which root may do.
void write_through(const std::filesystem::path& path, std::string_view content) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw Error(path.string(), "cannot open for writing");
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) throw Error(path.string(), "write failed");
}

}  // namespace

void write_file_atomically(const std::filesystem::path& requested, std::string_view content) {
    std::error_code status_ec;
    const std::filesystem::file_status st = std::filesystem::status(requested, status_ec);  // follows links
    if (!status_ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
        if (std::filesystem::is_directory(st)) throw Error(requested.string(), "is a folder, not a file");
        return write_through(requested, content);
    }
    // A link to a regular file: the file it points to is replaced, the link stays.
    std::error_code ec;
    const bool link = std::filesystem::is_symlink(std::filesystem::symlink_status(requested, ec)) && !status_ec && std::filesystem::exists(st);
    std::filesystem::path path = requested;
    if (link) {
        path = std::filesystem::canonical(requested, ec);
        if (ec) throw Error(requested.string(), "cannot resolve the link: " + ec.message());
    }
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
            std::error_code cleanup_ec;
            std::filesystem::remove(tmp, cleanup_ec);
            throw Error(path.string(), "write failed (disk full?)");
        }
    }
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        throw Error(path.string(), "cannot move the finished file into place: " + ec.message());
    }
}

}  // namespace quantplan
