#include "ui/report/report_folder.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/base/atomic_file.h"

namespace quantplan::report {
namespace fs = std::filesystem;

namespace {

// A report.json larger than this is not read to classify a folder (ours are well under 1 MiB;
// the bound keeps a hostile file from being loaded whole).
constexpr std::uintmax_t kMaxReportJsonBytes = 64ull << 20;

// `dir` without a trailing separator, so that its filename and parent are meaningful.
fs::path clean(const fs::path& dir) {
    fs::path p = dir.lexically_normal();
    if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
    return p;
}

bool report_json_says_report(const fs::path& file) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return false;
    const std::uintmax_t size = fs::file_size(file, ec);
    if (ec || size > kMaxReportJsonBytes) return false;
    std::ifstream in(file, std::ios::binary);
    const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    return doc.is_object() && doc.contains("report_version");
}

// Swaps two paths atomically where the kernel can; otherwise moves `current` aside first.
// Returns the path now holding the old contents (to be removed).
fs::path swap_into_place(const fs::path& staged, const fs::path& target, const fs::path& aside) {
#if defined(__linux__) && defined(RENAME_EXCHANGE)
    if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) return staged;
    if (errno != EINVAL && errno != ENOSYS)
        throw ReportWriteFailed(target.string(), std::string("cannot replace the old report: ") + std::strerror(errno));
#endif
    std::error_code ec;
    fs::rename(target, aside, ec);
    if (ec) throw ReportWriteFailed(target.string(), "cannot move the old report aside: " + ec.message());
    fs::rename(staged, target, ec);
    if (ec) {
        std::error_code back;
        fs::rename(aside, target, back);
        throw ReportWriteFailed(target.string(), "cannot rename the new report into place: " + ec.message());
    }
    return aside;
}

}  // namespace

FolderState folder_state(const fs::path& dir_in) {
    const fs::path dir = clean(dir_in);
    std::error_code ec;
    const fs::file_status link = fs::symlink_status(dir, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) return FolderState::NotReport;
    if (!fs::exists(link)) return FolderState::Missing;
    if (fs::is_symlink(link) || !fs::is_directory(link)) return FolderState::NotReport;
    if (fs::is_empty(dir, ec) && !ec) return FolderState::Empty;
    if (fs::is_regular_file(dir / kMarkerFileName, ec)) return FolderState::Report;
    if (report_json_says_report(dir / "report.json")) return FolderState::Report;
    return FolderState::NotReport;
}

void write_report_folder(const fs::path& dir_in, const std::vector<ReportFile>& files) {
    const fs::path target = clean(dir_in);
    if (target.empty() || !target.has_filename() || target.filename() == "." || target.filename() == "..")
        throw ReportFolderRefused("--out", "'" + dir_in.string() + "' does not name a folder a report can be written as");
    const FolderState state = folder_state(target);
    if (state == FolderState::NotReport)
        throw ReportFolderRefused("--out", "'" + target.string() +
                                               "' exists and is not a quantplan report (no " + kMarkerFileName +
                                               "); refusing to overwrite it: choose a new or empty folder");

    const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) throw ReportWriteFailed(parent.string(), "cannot create the folder: " + ec.message());

    // A fresh staging folder beside the target (same file system, so the final rename is atomic).
    const std::string stem = "." + target.filename().string() + ".quantplan-" + std::to_string(::getpid());
    fs::path staged;
    for (int attempt = 0; attempt < 100 && staged.empty(); ++attempt) {
        const fs::path candidate = parent / (stem + "-" + std::to_string(attempt));
        if (fs::create_directory(candidate, ec) && !ec) staged = candidate;
    }
    if (staged.empty()) throw ReportWriteFailed(parent.string(), "cannot create a temporary folder: " + ec.message());

    try {
        for (const ReportFile& f : files) {
            const fs::path rel = fs::path(f.relative_path).lexically_normal();
            if (rel.empty() || rel.is_absolute() || *rel.begin() == "..")
                throw ReportWriteFailed(f.relative_path, "not a path inside the report");
            fs::create_directories((staged / rel).parent_path(), ec);
            if (ec) throw ReportWriteFailed((staged / rel).parent_path().string(), "cannot create the folder: " + ec.message());
            try {
                write_file_atomically(staged / rel, f.bytes);
            } catch (const Error& e) {
                throw ReportWriteFailed("", e.what());
            }
        }
        if (state == FolderState::Missing) {
            fs::rename(staged, target, ec);
            if (ec) throw ReportWriteFailed(target.string(), "cannot rename the report into place: " + ec.message());
        } else {
            const fs::path old = swap_into_place(staged, target, parent / (stem + "-old"));
            fs::remove_all(old, ec);  // the old report; a failure here leaves a hidden folder, not a half report
        }
    } catch (...) {
        std::error_code ignored;
        fs::remove_all(staged, ignored);
        throw;
    }
}

}  // namespace quantplan::report
