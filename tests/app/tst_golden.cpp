// The command line's output, byte for byte, against a record (tests/data/golden/cli/): the proof
// that a change meant to move code and not behaviour (the core layout issue) moved none. Each line
// of commands.txt runs the built executable from the source folder; its standard output must equal
// the recorded <name>.out. QUANTPLAN_UPDATE_GOLDEN=1 rewrites the records after a deliberate change.
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/atomic_file.h"
#include "core/base/text_file.h"

using namespace quantplan;

namespace {

struct GoldenCommand {
    std::string name;
    std::string args;
};

std::filesystem::path golden_dir() { return std::filesystem::path(QUANTPLAN_SOURCE_DIR) / "tests/data/golden/cli"; }

std::vector<GoldenCommand> golden_commands() {
    std::ifstream in(golden_dir() / "commands.txt");
    BOOST_REQUIRE_MESSAGE(in, "tests/data/golden/cli/commands.txt is missing");
    std::vector<GoldenCommand> out;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        const std::size_t colon = line.find(": ");
        BOOST_REQUIRE_MESSAGE(colon != std::string::npos, "commands.txt: no `name: arguments` in: " + line);
        out.push_back({line.substr(0, colon), line.substr(colon + 2)});
    }
    return out;
}

// Runs the executable from the source folder; (exit code, standard output). Standard error is
// dropped: the record is what a tool reading the output sees.
std::pair<int, std::string> run_from_source_dir(const std::string& args) {
    const std::string cmd = "cd '" + std::string(QUANTPLAN_SOURCE_DIR) + "' && '" + std::string(QUANTPLAN_BINARY) + "' " + args + " 2>/dev/null";
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string output;
    std::array<char, 65536> buf{};
    std::size_t n = 0;
    while (pipe && (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) output.append(buf.data(), n);
    const int status = pipe ? pclose(pipe) : -1;
    return {WEXITSTATUS(status), output};
}

// The first line at which two texts differ, for the failure message.
std::string first_difference(const std::string& a, const std::string& b) {
    std::istringstream x(a), y(b);
    std::string la, lb;
    for (int line = 1;; ++line) {
        const bool ga = static_cast<bool>(std::getline(x, la)), gb = static_cast<bool>(std::getline(y, lb));
        if (!ga && !gb) return "no line differs (a trailing byte does)";
        if (!ga || !gb || la != lb)
            return "line " + std::to_string(line) + ": recorded `" + (gb ? lb.substr(0, 160) : "<end>") + "`, now `" + (ga ? la.substr(0, 160) : "<end>") + "`";
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(golden)

BOOST_AUTO_TEST_CASE(command_line_output_is_byte_for_byte_the_record) {
    const bool update = std::getenv("QUANTPLAN_UPDATE_GOLDEN") != nullptr;
    const std::vector<GoldenCommand> commands = golden_commands();
    BOOST_REQUIRE_GE(commands.size(), 11u);  // the three scenarios and at least eight commands
    for (const GoldenCommand& c : commands) {
        BOOST_TEST_CONTEXT(c.name << ": quantplan " << c.args) {
            const auto [rc, out] = run_from_source_dir(c.args);
            BOOST_CHECK_EQUAL(rc, 0);
            BOOST_CHECK(!out.empty());
            const std::filesystem::path record = golden_dir() / (c.name + ".out");
            if (update) {
                write_file_atomically(record, out);
                continue;
            }
            BOOST_REQUIRE_MESSAGE(std::filesystem::exists(record), record.string() + " is missing (QUANTPLAN_UPDATE_GOLDEN=1 records it)");
            const std::string recorded = read_text_file(record, "golden record");
            BOOST_CHECK_MESSAGE(out == recorded, first_difference(out, recorded));
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
