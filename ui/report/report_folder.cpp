#include "ui/report/report_folder.h"

#include <fstream>
#include <string>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/base/atomic_folder.h"

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

    std::vector<FolderFile> folder;
    folder.reserve(files.size());
    for (const ReportFile& f : files) folder.push_back({f.relative_path, f.bytes});
    try {
        write_folder_atomically(target, folder);
    } catch (const Error& e) {
        throw ReportWriteFailed("", e.what());
    }
}

}  // namespace quantplan::report
