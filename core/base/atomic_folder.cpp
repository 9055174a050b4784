#include "core/base/atomic_folder.h"

#include <cerrno>
#include <cstring>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

#include "core/base/atomic_file.h"
#include "core/base/error.h"

namespace quantplan {
namespace fs = std::filesystem;

namespace {

// Swaps two paths atomically where the kernel can; otherwise moves `current` aside first.
// Returns the path now holding the old contents (to be removed).
fs::path swap_into_place(const fs::path& staged, const fs::path& target, const fs::path& aside) {
#if defined(__linux__) && defined(RENAME_EXCHANGE)
    if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) return staged;
    if (errno != EINVAL && errno != ENOSYS) throw Error(target.string(), std::string("cannot replace the old folder: ") + std::strerror(errno));
#endif
    std::error_code ec;
    fs::rename(target, aside, ec);
    if (ec) throw Error(target.string(), "cannot move the old folder aside: " + ec.message());
    fs::rename(staged, target, ec);
    if (ec) {
        std::error_code back;
        fs::rename(aside, target, back);
        throw Error(target.string(), "cannot rename the new folder into place: " + ec.message());
    }
    return aside;
}

}  // namespace

void write_folder_atomically(const fs::path& target, const std::vector<FolderFile>& files) {
    const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) throw Error(parent.string(), "cannot create the folder: " + ec.message());

    // A fresh staging folder beside the target (same file system, so the final rename is atomic).
    const std::string stem = "." + target.filename().string() + ".quantplan-" + std::to_string(::getpid());
    fs::path staged;
    for (int attempt = 0; attempt < 100 && staged.empty(); ++attempt) {
        const fs::path candidate = parent / (stem + "-" + std::to_string(attempt));
        if (fs::create_directory(candidate, ec) && !ec) staged = candidate;
    }
    if (staged.empty()) throw Error(parent.string(), "cannot create a temporary folder: " + ec.message());

    try {
        for (const FolderFile& f : files) {
            const fs::path rel = fs::path(f.relative_path).lexically_normal();
            if (rel.empty() || rel.is_absolute() || *rel.begin() == "..") throw Error(f.relative_path, "not a path inside the folder");
            fs::create_directories((staged / rel).parent_path(), ec);
            if (ec) throw Error((staged / rel).parent_path().string(), "cannot create the folder: " + ec.message());
            write_file_atomically(staged / rel, f.bytes);
        }
        const bool exists = fs::exists(fs::symlink_status(target, ec));
        if (!exists) {
            fs::rename(staged, target, ec);
            if (ec) throw Error(target.string(), "cannot rename the folder into place: " + ec.message());
        } else {
            const fs::path old = swap_into_place(staged, target, parent / (stem + "-old"));
            fs::remove_all(old, ec);  // the old folder; a failure here leaves a hidden folder, not a half one
        }
    } catch (...) {
        std::error_code ignored;
        fs::remove_all(staged, ignored);
        throw;
    }
}

}  // namespace quantplan
