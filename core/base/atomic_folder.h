#pragma once
// Writing a whole folder so that a reader never sees half of one: every file is written into a
// temporary folder beside the target, which is then renamed into place in one step (an old folder
// swapped out with renameat2 RENAME_EXCHANGE on Linux, then removed). The report folder (--out)
// and the launch files (--emit-out) are written this way.
#include <filesystem>
#include <string>
#include <vector>

namespace quantplan {

// One file of a folder: a relative path (no "..", not absolute) and its bytes.
struct FolderFile {
    std::string relative_path;
    std::string bytes;
};

// Writes `files` as the folder `target`, replacing what is there whole or not at all. Creates
// missing parent folders. The caller decides beforehand whether `target` may be replaced. Throws
// Error naming the path when writing or renaming fails; then no new file is left and an existing
// folder is untouched.
void write_folder_atomically(const std::filesystem::path& target, const std::vector<FolderFile>& files);

}  // namespace quantplan
