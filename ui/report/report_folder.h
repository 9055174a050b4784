#pragma once
// Writing a report folder safely: the whole report is built in a temporary folder beside DIR and
// renamed into place, so a reader (or a failure) never sees half a report; an existing DIR is
// replaced only when it is a quantplan report (or empty), never when it holds anything else.
#include <filesystem>
#include <vector>

#include "core/base/error.h"
#include "ui/report/report.h"

namespace quantplan::report {

// DIR exists and is not a quantplan report: refused, nothing written (exit code 3).
class ReportFolderRefused : public Error {
public:
    using Error::Error;
};

// Writing failed (disk full, permissions, a rename refused): nothing of the new report is left
// behind and an existing report is untouched (exit code 2).
class ReportWriteFailed : public Error {
public:
    using Error::Error;
};

// What is at a would-be report folder.
enum class FolderState {
    Missing,    // nothing: the report creates it
    Empty,      // an empty folder: replaced
    Report,     // a quantplan report (marker file, or a report.json with report_version): replaced
    NotReport,  // anything else (a file, a link, a folder with other contents): refused
};

// Classifies `dir`. Reads at most the marker file's existence and a bounded report.json.
FolderState folder_state(const std::filesystem::path& dir);

// Writes `files` (relative paths, no "..") as the folder `dir`: into a temporary folder beside it,
// each file through core's write_file_atomically, then renamed into place in one step
// (renameat2 RENAME_EXCHANGE on Linux, so an old report is swapped out, then removed). Creates
// missing parent folders. Throws ReportFolderRefused when folder_state(dir) is NotReport, and
// ReportWriteFailed when writing or renaming fails; in both cases no new file is left.
void write_report_folder(const std::filesystem::path& dir, const std::vector<ReportFile>& files);

}  // namespace quantplan::report
