#include "app/data_paths.h"

#include <cstdlib>
#include <system_error>

#include "core/base/error.h"

#if defined(__linux__)
#include <unistd.h>
#endif

namespace quantplan::app {
namespace {

bool holds_data(const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::is_regular_file(p / "models" / "catalog.json", ec) && std::filesystem::is_directory(p / "assets" / "gpus", ec);
}

std::filesystem::path executable_dir() {
#if defined(__linux__)
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) return exe.parent_path();
#endif
    return {};
}

}  // namespace

std::filesystem::path data_dir() {
    if (const char* env = std::getenv("QUANTPLAN_DATA_DIR"); env && *env) {
        if (holds_data(env)) return env;
        throw Error("QUANTPLAN_DATA_DIR", std::string("'") + env + "' holds no models/catalog.json and assets/gpus/");
    }
    const std::filesystem::path exe = executable_dir();
    if (!exe.empty()) {
        // Installed: <prefix>/bin/quantplan -> <prefix>/share/quantplan.
        if (holds_data(exe.parent_path() / "share" / "quantplan")) return exe.parent_path() / "share" / "quantplan";
    }
#ifdef QUANTPLAN_SOURCE_DIR
    if (holds_data(QUANTPLAN_SOURCE_DIR)) return QUANTPLAN_SOURCE_DIR;
#endif
    throw Error("data", "cannot find the bundled models and assets (set QUANTPLAN_DATA_DIR)");
}

}  // namespace quantplan::app
