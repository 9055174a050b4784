// core/'s layout holds: every file in a folder of core/README.md's map, every `#include "core/..."`
// running to its own folder or a lower level, no cycle between two files, and each header opening
// with the sentence that says what it is for.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kSource(QUANTPLAN_SOURCE_DIR);

std::string read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The map's table: folder -> level, from the rows "| 3 | `hardware/` | ... |".
std::map<std::string, int> map_levels(const std::string& readme) {
    std::map<std::string, int> out;
    const std::regex row(R"(^\|\s*(\d+)\s*\|\s*`([a-z_]+)/`\s*\|)");
    std::istringstream in(readme);
    std::string line;
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_search(line, m, row)) out[m[2]] = std::stoi(m[1]);
    }
    return out;
}

// core/'s source files, relative to the source folder ("core/plan/plan.h").
std::vector<std::string> core_files(const fs::path& core_dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(core_dir)) {
        if (!e.is_regular_file()) continue;
        const std::string ext = e.path().extension().string();
        if (ext == ".h" || ext == ".cpp" || ext == ".in") out.push_back(fs::relative(e.path(), core_dir.parent_path()).generic_string());
    }
    return out;
}

// The folder a core path is in ("core/plan/plan.h" -> "plan"), or "" for a file at core/'s root.
std::string folder_of(const std::string& path) {
    const std::size_t a = path.find('/'), b = path.find('/', a + 1);
    return b == std::string::npos ? std::string() : path.substr(a + 1, b - a - 1);
}

std::vector<std::string> core_includes(const std::string& text) {
    std::vector<std::string> out;
    const std::regex inc(R"re(^\s*#\s*include\s+"(core/[^"]+)")re");
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_search(line, m, inc)) out.push_back(m[1]);
    }
    return out;
}

// Violations of the map's order among `includes` (file -> the core paths it includes).
std::vector<std::string> order_violations(const std::map<std::string, std::vector<std::string>>& includes, const std::map<std::string, int>& levels) {
    std::vector<std::string> out;
    for (const auto& [file, incs] : includes) {
        const std::string from = folder_of(file);
        for (const std::string& to_path : incs) {
            const std::string to = folder_of(to_path);
            if (to == from) continue;
            const auto lf = levels.find(from), lt = levels.find(to);
            if (lf == levels.end() || lt == levels.end()) {
                out.push_back(file + " includes " + to_path + ": a folder not in core/README.md's map");
            } else if (lt->second >= lf->second) {
                out.push_back(file + " (level " + std::to_string(lf->second) + ") includes " + to_path + " (level " + std::to_string(lt->second) + ")");
            }
        }
    }
    return out;
}

// A cycle between files through their includes (header or source), as "a -> b -> a"; "" if none.
std::string include_cycle(const std::map<std::string, std::vector<std::string>>& includes) {
    std::map<std::string, int> state;  // 1 on the path, 2 done
    std::vector<std::string> path;
    std::string found;
    std::function<void(const std::string&)> visit = [&](const std::string& f) {
        if (!found.empty()) return;
        state[f] = 1;
        path.push_back(f);
        const auto it = includes.find(f);
        if (it != includes.end())
            for (const std::string& g : it->second) {
                if (state[g] == 1) {
                    for (const std::string& p : path) found += p + " -> ";
                    found += g;
                    return;
                }
                if (state[g] == 0) visit(g);
                if (!found.empty()) return;
            }
        path.pop_back();
        state[f] = 2;
    };
    for (const auto& [f, incs] : includes)
        if (state[f] == 0) visit(f);
    return found;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(layout)

BOOST_AUTO_TEST_CASE(every_include_runs_down_the_maps_levels) {
    const std::map<std::string, int> levels = map_levels(read_all(kSource / "core/README.md"));
    BOOST_REQUIRE_GE(levels.size(), 12u);
    std::map<std::string, std::vector<std::string>> includes;
    std::set<std::string> folders;
    for (const std::string& f : core_files(kSource / "core")) {
        const std::string folder = folder_of(f);
        BOOST_CHECK_MESSAGE(!folder.empty(), f + " sits at core/'s root: every file belongs in a folder of the map");
        BOOST_CHECK_MESSAGE(folder.empty() || levels.count(folder), f + ": folder " + folder + "/ is not in core/README.md's map");
        folders.insert(folder);
        includes[f] = core_includes(read_all(kSource / f));
        for (const std::string& inc : includes[f]) BOOST_CHECK_MESSAGE(fs::exists(kSource / inc), f + " includes " + inc + ", which does not exist");
    }
    for (const auto& [folder, level] : levels) BOOST_CHECK_MESSAGE(folders.count(folder), "core/README.md maps " + folder + "/, which does not exist");
    for (const std::string& v : order_violations(includes, levels)) BOOST_ERROR("against the map's order: " + v);
    const std::string cycle = include_cycle(includes);
    BOOST_CHECK_MESSAGE(cycle.empty(), "an include cycle: " + cycle);
}

BOOST_AUTO_TEST_CASE(every_header_opens_with_what_it_is_for) {
    for (const std::string& f : core_files(kSource / "core")) {
        if (fs::path(f).extension() != ".h") continue;
        std::istringstream in(read_all(kSource / f));
        std::string first, second;
        std::getline(in, first);
        std::getline(in, second);
        BOOST_CHECK_MESSAGE(first == "#pragma once" && second.rfind("// ", 0) == 0 && second.size() > 12,
                            f + ": a header opens with #pragma once and a comment saying what it is for");
    }
}

// The checks themselves catch what they are for (a check that cannot fail is a defect).
BOOST_AUTO_TEST_CASE(the_checks_catch_an_upward_include_and_a_cycle) {
    const std::map<std::string, int> levels{{"base", 0}, {"model", 1}, {"roofline", 6}, {"errorsim", 6}, {"engine", 7}};
    const std::map<std::string, std::vector<std::string>> fine{{"core/engine/a.h", {"core/roofline/b.h", "core/base/c.h"}},
                                                               {"core/roofline/b.h", {"core/model/d.h"}}};
    BOOST_CHECK(order_violations(fine, levels).empty());
    BOOST_CHECK(include_cycle(fine).empty());
    const std::map<std::string, std::vector<std::string>> upward{{"core/roofline/b.h", {"core/engine/a.h"}}};
    BOOST_CHECK_EQUAL(order_violations(upward, levels).size(), 1u);
    const std::map<std::string, std::vector<std::string>> sideways{{"core/errorsim/e.h", {"core/roofline/b.h"}}};
    BOOST_CHECK_EQUAL(order_violations(sideways, levels).size(), 1u);
    const std::map<std::string, std::vector<std::string>> unmapped{{"core/engine/a.h", {"core/engines/x.h"}}};
    BOOST_CHECK_EQUAL(order_violations(unmapped, levels).size(), 1u);
    const std::map<std::string, std::vector<std::string>> circle{{"core/model/a.h", {"core/model/b.h"}}, {"core/model/b.h", {"core/model/a.h"}}};
    BOOST_CHECK(!include_cycle(circle).empty());
    BOOST_CHECK_EQUAL(folder_of("core/plan/plan.h"), "plan");
    BOOST_CHECK_EQUAL(folder_of("core/error.h"), "");
    const auto parsed = map_levels("| 3 | `hardware/` | GPUs |\n| x | `no/` | |\n| 10 | `check/` | logs |\n");
    BOOST_CHECK_EQUAL(parsed.size(), 2u);
    BOOST_CHECK_EQUAL(parsed.at("check"), 10);
}

BOOST_AUTO_TEST_SUITE_END()
