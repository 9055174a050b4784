// The headless report (`--headless --out DIR`, issue 5): the golden report.json of a fixed
// configuration, byte-identical reruns, the folder's files (valid SVG and PNG of the right size,
// an HTML page with no external reference), the folder's safety (refusal, replacement, no half
// report after a failure), scenario files, and the real executable without any display.
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <QtCharts/QLineSeries>
#include <QtGui/QImage>
#include <QtSvg/QSvgRenderer>
#include <nlohmann/json.hpp>

#include "app/cli_options.h"
#include "app/commands.h"
#include "app/headless.h"
#include "core/checkpoint/model_config_json.h"
#include "core/errorsim/error_lab.h"
#include "core/hardware/calibration.h"
#include "core/plan/sweep.h"
#include "tests/support/synthetic_calibration.h"
#include "ui/charts/charts.h"
#include "ui/report/report.h"
#include "ui/report/report_charts.h"
#include "ui/report/report_folder.h"

using namespace quantplan;
namespace fs = std::filesystem;

namespace {

// The fixed configuration of the golden file: the default model and GPU at a batch and context
// where the KV cache matters (docs/report.md, "Tests").
const std::vector<std::string> kGoldenArgs = {"--headless", "--model", "qwen3-8b", "--gpu", "h100-sxm", "--batch", "16",
                                              "--context", "4096", "--profile", "realistic"};  // the seeds' roofline: the golden is about the report
const fs::path kGoldenFile = fs::path(QUANTPLAN_SOURCE_DIR) / "tests/data/golden/report-qwen3-8b-h100-sxm-b16-l4096.json";

// The default report must finish within this on the 2-core CI machine (issue 5: "a few seconds";
// the bound leaves room for sanitizer and debug builds).
constexpr double kDefaultReportMaxSeconds = 30.0;

// Relative tolerance for chart values that went through one unit conversion (fraction x 100).
constexpr double kConversionRelTol = 1e-12;

// A fresh folder under the test's working directory (kept after the run for inspection).
fs::path scratch(const std::string& name) {
    const fs::path dir = fs::current_path() / "report-out" / name;
    fs::remove_all(dir);
    fs::create_directories(dir.parent_path());
    return dir;
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_text(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

struct RunResult {
    int exit_code;
    std::string out;
    std::string err;
};

// Runs run_report in-process (the tests' QApplication is reused for the charts).
RunResult report(std::vector<std::string> args) {
    args.insert(args.begin(), "quantplan");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    const app::CliOptions o = app::parse_command_line(static_cast<int>(argv.size()), argv.data());
    std::ostringstream out, err;
    const int rc = app::run_report(o, out, err);
    return {rc, out.str(), err.str()};
}

RunResult report_to(const fs::path& dir, std::vector<std::string> args) {
    args.push_back("--out");
    args.push_back(dir.string());
    return report(std::move(args));
}

// Runs the built executable through the shell with `env` prefixed; (exit code, stdout + stderr).
std::pair<int, std::string> run_binary(const std::string& env, const std::string& args) {
    const std::string cmd = env + " " + std::string(QUANTPLAN_BINARY) + " " + args + " 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string output;
    std::array<char, 4096> buf{};
    while (pipe && fgets(buf.data(), buf.size(), pipe)) output += buf.data();
    const int status = pipe ? pclose(pipe) : -1;
    return {WEXITSTATUS(status), output};
}

// Names in `parent` that look like a report's staging or set-aside folder.
std::vector<std::string> leftovers(const fs::path& parent) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(parent))
        if (e.path().filename().string().find(".quantplan-") != std::string::npos) names.push_back(e.path().filename().string());
    return names;
}

// The first line where two texts differ, for a readable golden failure.
std::string first_difference(const std::string& expected, const std::string& actual) {
    std::istringstream e(expected), a(actual);
    std::string le, la;
    for (int line = 1;; ++line) {
        const bool more_e = static_cast<bool>(std::getline(e, le)), more_a = static_cast<bool>(std::getline(a, la));
        if (!more_e && !more_a) return "no difference";
        if (le != la || more_e != more_a)
            return "line " + std::to_string(line) + ":\n  expected: " + (more_e ? le : "<end>") + "\n  actual:   " + (more_a ? la : "<end>");
    }
}

bool close(double expected, double actual) {
    return std::fabs(expected - actual) <= kConversionRelTol * std::max(std::fabs(expected), 1e-300);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(report_folder)

BOOST_AUTO_TEST_CASE(golden_report_json) {
    const fs::path dir = scratch("golden");
    const RunResult r = report_to(dir, kGoldenArgs);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const std::string actual = read_file(dir / "report.json");
    if (std::getenv("QUANTPLAN_UPDATE_GOLDEN") != nullptr) {
        write_text(kGoldenFile, actual);
        BOOST_TEST_MESSAGE("golden file rewritten: " << kGoldenFile);
    }
    BOOST_REQUIRE_MESSAGE(fs::exists(kGoldenFile), "missing golden file " << kGoldenFile
                                                                          << " (run with QUANTPLAN_UPDATE_GOLDEN=1 to create it)");
    const std::string expected = read_file(kGoldenFile);
    BOOST_TEST(expected == actual, "report.json differs from " << kGoldenFile << " at " << first_difference(expected, actual)
                                                               << "\nIf core's numbers changed on purpose, review the diff and "
                                                                  "rerun with QUANTPLAN_UPDATE_GOLDEN=1 (docs/report.md).");
}

BOOST_AUTO_TEST_CASE(reruns_are_byte_identical) {
    const fs::path a = scratch("rerun-a"), b = scratch("rerun-b");
    BOOST_TEST_REQUIRE(report_to(a, {"--headless"}).exit_code == 0);
    BOOST_TEST_REQUIRE(report_to(b, {"--headless"}).exit_code == 0);
    for (const char* name : {"report.json", "sweeps.csv", "report.md", "report.html"}) {
        BOOST_TEST_INFO(name);
        BOOST_TEST((read_file(a / name) == read_file(b / name)));
    }
    // No clock in report.json unless asked; with --timestamp, an ISO 8601 UTC time.
    BOOST_TEST(!nlohmann::json::parse(read_file(a / "report.json")).contains("generated_at"));
    const fs::path t = scratch("timestamp");
    BOOST_TEST_REQUIRE(report_to(t, {"--headless", "--timestamp"}).exit_code == 0);
    const auto doc = nlohmann::json::parse(read_file(t / "report.json"));
    BOOST_REQUIRE(doc.contains("generated_at"));
    BOOST_TEST(std::regex_match(doc["generated_at"].get<std::string>(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
}

BOOST_AUTO_TEST_CASE(default_report_has_every_file) {
    const fs::path dir = scratch("default");
    const RunResult r = report_to(dir, {"--headless"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto doc = nlohmann::json::parse(read_file(dir / "report.json"));
    BOOST_TEST(doc["report_version"] == report::kReportFolderVersion);
    BOOST_TEST(doc["schema_version"] == 1);
    BOOST_TEST(doc["model"]["name"] == "qwen3-8b");
    BOOST_TEST(doc["gpu"]["id"] == "h100-sxm");
    BOOST_TEST(doc.contains("errorsim"));
    BOOST_TEST(doc.contains("decision"));
    // Every listed file exists, and nothing else is in the folder.
    std::set<std::string> listed;
    for (const auto& f : doc["files"]) {
        listed.insert(f.get<std::string>());
        BOOST_TEST_INFO(f.get<std::string>());
        BOOST_TEST(fs::is_regular_file(dir / f.get<std::string>()));
    }
    std::set<std::string> present;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file()) present.insert(fs::relative(e.path(), dir).string());
    BOOST_TEST(listed == present, "listed " << listed.size() << " files, found " << present.size());
    // The four charts of the issue (and the throughput variant), each a valid SVG and PNG of the size report.json states.
    std::set<std::string> names;
    for (const auto& c : doc["charts"]) {
        const std::string name = c["name"];
        names.insert(name);
        const int w = c["width_px"], h = c["height_px"];
        BOOST_TEST(w == report::kChartWidthPx);
        BOOST_TEST(h == report::kChartHeightPx);
        const QImage png(QString::fromStdString((dir / c["png"].get<std::string>()).string()));
        BOOST_TEST_INFO(name);
        BOOST_REQUIRE(!png.isNull());
        BOOST_TEST(png.width() == w);
        BOOST_TEST(png.height() == h);
        QSvgRenderer svg(QString::fromStdString((dir / c["svg"].get<std::string>()).string()));
        BOOST_REQUIRE(svg.isValid());
        BOOST_TEST(svg.defaultSize().width() == w);
        BOOST_TEST(svg.defaultSize().height() == h);
    }
    for (const char* required : {"crossover", "error", "checkpoint", "memory"}) {
        BOOST_TEST_INFO(required);
        BOOST_TEST(names.count(required) == 1u);
    }
    // sweeps.csv: a header and one row per scheme x batch x context, as core writes them.
    const std::string csv = read_file(dir / "sweeps.csv");
    const auto rows = static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')) - 1;
    BOOST_TEST(rows == doc["sweeps"]["rows"].get<std::size_t>());
    BOOST_TEST(rows == doc["schemes"].size() * 13u * 11u);
    BOOST_TEST(csv.rfind("scheme,batch,context,", 0) == 0u);
    BOOST_TEST(r.out.find("report written") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(html_is_self_contained) {
    const fs::path dir = scratch("html");
    BOOST_TEST_REQUIRE(report_to(dir, {"--headless", "--batch", "64", "--context", "128"}).exit_code == 0);
    std::string html = read_file(dir / "report.html");
    // The embedded charts first: each a data: URI holding a valid SVG of the chart's size.
    int images = 0;
    const std::string prefix = "data:image/svg+xml;base64,";
    for (std::size_t at = html.find(prefix); at != std::string::npos; at = html.find(prefix, at)) {
        const std::size_t end = html.find('"', at);
        BOOST_REQUIRE(end != std::string::npos);
        const QByteArray svg = QByteArray::fromBase64(QByteArray::fromStdString(html.substr(at + prefix.size(), end - at - prefix.size())));
        QSvgRenderer renderer(svg);
        BOOST_TEST(renderer.isValid());
        BOOST_TEST(renderer.defaultSize().width() == report::kChartWidthPx);
        html.erase(at + 5, end - at - 5);  // keep "data:" so that the scan below sees the attribute
        ++images;
    }
    BOOST_TEST(images == 5);
    // Every src/href is a data: URI or a fragment; no stylesheet, script, frame or CSS import.
    const std::regex reference(R"((src|href|action|poster|data|srcset)\s*=\s*["']?([^"'\s>]*))", std::regex::icase);
    int references = 0;
    for (auto it = std::sregex_iterator(html.begin(), html.end(), reference); it != std::sregex_iterator(); ++it, ++references) {
        const std::string value = (*it)[2];
        BOOST_TEST_INFO("reference " << value.substr(0, 60));
        BOOST_TEST((value.rfind("data:", 0) == 0 || value.rfind("#", 0) == 0));
    }
    BOOST_TEST(references == images);
    for (const char* banned : {"<script", "<link", "<iframe", "<object", "<embed", "@import", "url(", "http://", "https://", "//cdn"}) {
        BOOST_TEST_INFO(banned);
        BOOST_TEST(html.find(banned) == std::string::npos);
    }
    // The decision and its reasons are in the page.
    const auto doc = nlohmann::json::parse(read_file(dir / "report.json"));
    BOOST_TEST(html.find("Recommendation: " + doc["decision"]["recommendation"].get<std::string>()) != std::string::npos);
    // report.md links only files of the folder.
    const std::string md = read_file(dir / "report.md");
    const std::regex link(R"(\]\(([^)]+)\))");
    int links = 0;
    for (auto it = std::sregex_iterator(md.begin(), md.end(), link); it != std::sregex_iterator(); ++it, ++links) {
        BOOST_TEST_INFO((*it)[1].str());
        BOOST_TEST(fs::is_regular_file(dir / (*it)[1].str()));
    }
    BOOST_TEST(links == 10);
}

// --calibration FILE: report.json gains `measured`, the documents a "Predicted vs measured" section,
// and the crossover chart the measured points; without it, nothing of the kind.
BOOST_AUTO_TEST_CASE(calibration_adds_predicted_vs_measured) {
    const fs::path dir = scratch("measured");
    const fs::path file = scratch("calibration-input") / "calibration.json";
    fs::create_directories(file.parent_path());
    const ModelConfig model = resolve_model("qwen3-8b", fs::path(QUANTPLAN_SOURCE_DIR) / "models");
    const GpuProfile gpu = resolve_gpu("h100-sxm", fs::path(QUANTPLAN_SOURCE_DIR) / "assets" / "gpus");
    write_text(file, calibration_to_json(test::synthetic_calibration(model, gpu, builtin_efficiency_profile("realistic"), {{"w8a8_fp8", 1.2}})));
    const RunResult r = report_to(dir, {"--headless", "--calibration", file.string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto doc = nlohmann::json::parse(read_file(dir / "report.json"));
    BOOST_TEST_REQUIRE(doc.contains("measured"));
    BOOST_TEST(doc["inputs"]["calibration"] == file.string());
    BOOST_TEST(doc["measured"]["gpu_profile"] == "h100-sxm");
    BOOST_TEST(doc["measured"]["steps"].size() > 0u);
    const std::string md = read_file(dir / "report.md");
    BOOST_TEST(md.find("## Predicted vs measured") != std::string::npos);
    BOOST_TEST(md.find("w8a8\\_fp8") != std::string::npos);  // Markdown escapes underscores
    BOOST_TEST(md.find("Triangles are measured decode steps") != std::string::npos);
    BOOST_TEST(read_file(dir / "report.html").find("Predicted vs measured") != std::string::npos);

    const fs::path plain = scratch("unmeasured");
    BOOST_TEST_REQUIRE(report_to(plain, {"--headless"}).exit_code == 0);
    BOOST_TEST(!nlohmann::json::parse(read_file(plain / "report.json")).contains("measured"));
    BOOST_TEST(read_file(plain / "report.md").find("Predicted vs measured") == std::string::npos);
}

// Traffic options add the capacity section (docs/capacity.md): the --serve figures in report.json
// and a table in report.md and report.html; without them the report has none.
BOOST_AUTO_TEST_CASE(traffic_adds_the_capacity_section) {
    const fs::path dir = scratch("capacity");
    const RunResult r = report_to(dir, {"--headless", "--schemes", "bf16,w8a8-int8", "--rate", "2", "--requests", "100", "--slo-tpot", "0.05",
                                        "--target-rate", "8", "--price", "h100-sxm=3"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto doc = nlohmann::json::parse(read_file(dir / "report.json"));
    BOOST_TEST_REQUIRE(doc.contains("capacity"));
    BOOST_TEST(doc["capacity"]["serve"].size() == 2u);
    BOOST_TEST(doc["capacity"]["serve"][0]["max_rate_requests_per_s"].get<double>() > 2.0);
    BOOST_TEST(doc["capacity"]["traffic"]["rate_requests_per_s"] == 2.0);
    BOOST_TEST(doc["capacity"]["recommendation"]["target_rate_requests_per_s"] == 8.0);
    BOOST_TEST(!doc["capacity"]["recommendation"]["ranked"].empty());
    const std::string md = read_file(dir / "report.md");
    BOOST_TEST(md.find("## Capacity") != std::string::npos);
    BOOST_TEST(md.find("Cheapest configurations for 8.00 requests/s") != std::string::npos);
    BOOST_TEST(read_file(dir / "report.html").find("Capacity") != std::string::npos);
    // Each ranked configuration's launch command (docs/launch.md), in the JSON and as a shell block.
    const auto& launch = doc["capacity"]["recommendation"]["ranked"][0]["launch"];
    BOOST_TEST_REQUIRE(launch.contains("argv"), launch.dump());
    BOOST_TEST(launch["engine"] == "vllm");
    BOOST_TEST(md.find("Launch commands") != std::string::npos);
    BOOST_TEST(md.find("```sh\n" + launch["argv"][0].get<std::string>()) != std::string::npos);
    BOOST_TEST(md.find("--max-model-len 2500") != std::string::npos);
    BOOST_TEST(read_file(dir / "report.html").find("<pre>") != std::string::npos);
    // Each scheme's row carries the serving fit's bands (the default), the JSON's low and high.
    BOOST_TEST(md.find("p10-p90: TTFT p50 ms") != std::string::npos);
    const auto& first = doc["capacity"]["serve"][0];
    BOOST_TEST_REQUIRE(first["ttft_s_band"].is_object());
    char ttft_band[64];
    std::snprintf(ttft_band, sizeof ttft_band, "%.1f-%.1f", first["ttft_s_band"]["low"].get<double>() * 1e3, first["ttft_s_band"]["high"].get<double>() * 1e3);
    BOOST_TEST(md.find(ttft_band) != std::string::npos, ttft_band);
    // The capacity charts: latency against rate with the SLO, cost per configuration, a timeline.
    for (const char* chart : {"capacity-ttft", "capacity-tpot", "capacity-cost", "capacity-timeline"}) {
        BOOST_TEST(fs::exists(dir / "charts" / (std::string(chart) + ".png")), chart);
        BOOST_TEST(fs::exists(dir / "charts" / (std::string(chart) + ".svg")), chart);
        BOOST_TEST(md.find(std::string("charts/") + chart + ".png") != std::string::npos, chart);
    }
    BOOST_TEST(doc["capacity"]["serve"][0]["rate_sweep"].size() >= 5u);
    BOOST_TEST(!doc["capacity"]["serve"][0]["timeline"]["t_s"].empty());
    const fs::path plain = scratch("no-capacity");
    BOOST_TEST_REQUIRE(report_to(plain, {"--headless"}).exit_code == 0);
    BOOST_TEST(!nlohmann::json::parse(read_file(plain / "report.json")).contains("capacity"));
    BOOST_TEST(!fs::exists(plain / "charts" / "capacity-tpot.png"));
}

// --disagg adds the disaggregation section (docs/disaggregation.md): the comparison's JSON as
// --serve --disagg gives it, the table and the bound in report.md, the comparison chart, and with
// --disagg-sweep the sweep tables and charts.
BOOST_AUTO_TEST_CASE(disagg_adds_the_comparison_and_its_charts) {
    const fs::path dir = scratch("disagg");
    const RunResult r = report_to(dir, {"--headless", "--schemes", "w8a8-fp8", "--rate", "8", "--isl", "4000", "--osl", "200", "--requests", "200",
                                        "--slo-tpot", "0.03", "--disagg", "1:1", "--disagg-sweep"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto doc = nlohmann::json::parse(read_file(dir / "report.json"));
    BOOST_TEST_REQUIRE(doc.contains("disagg"));
    BOOST_TEST(doc["disagg"]["pools"]["prefill"]["instances"] == 1);
    BOOST_TEST(doc["disagg"]["sweeps"]["tpot_slo"]["points"].size() == 8u);
    const std::string md = read_file(dir / "report.md");
    BOOST_TEST(md.find("## Disaggregated prefill and decode") != std::string::npos);
    BOOST_TEST(md.find("| disaggregated 1P:1D | 2 |") != std::string::npos);
    BOOST_TEST(md.find("Bound: ") != std::string::npos);
    // The connector's transfer: vLLM's default (NIXL) has no published transfer times, so the line rate, over a link a GPU pair.
    BOOST_TEST(md.find("1 link a prefill instance, at the line rate (no published transfer times of this connector)") != std::string::npos);
    BOOST_TEST(md.find("Sweep over TPOT SLO: ") != std::string::npos);
    for (const char* chart : {"disagg", "disagg-prompt", "disagg-tpot"}) {
        BOOST_TEST(fs::exists(dir / "charts" / (std::string(chart) + ".svg")), chart);
        BOOST_TEST(md.find(std::string("charts/") + chart + ".png") != std::string::npos, chart);
    }
    BOOST_TEST(read_file(dir / "report.html").find("Disaggregated prefill and decode") != std::string::npos);
}

// A hybrid model's report: its inputs say what is counted, its memory section splits the cache by
// layer type (Nemotron-H's Mamba state per sequence, Llama 4's chunked layers and uncounted vision
// encoder), and report.json carries the same split.
BOOST_AUTO_TEST_CASE(hybrid_models_split_the_cache_by_layer_type) {
    const fs::path dir = scratch("nemotron");
    const RunResult r = report_to(dir, {"--headless", "--model", "nemotron-h-56b-base-8k", "--gpu", "h200", "--schemes", "w8a8-fp8"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const std::string md = read_file(dir / "report.md");
    BOOST_TEST(md.find("54 mamba\\_state (438.3 MiB per sequence)") != std::string::npos, md.substr(0, 400));
    BOOST_TEST(md.find("paged in blocks of 2080 tokens") != std::string::npos);
    const auto doc = nlohmann::json::parse(read_file(dir / "report.json"));
    const auto& types = doc["schemes"][0]["admission"]["cache_by_layer_type"];
    BOOST_TEST_REQUIRE(types.size() == 2u);
    BOOST_TEST(types[1]["type"] == "mamba_state");
    BOOST_TEST(types[1]["bytes_per_sequence"].get<std::uint64_t>() == 54u * 8'511'488u);
    const fs::path scout = scratch("scout");
    // The wheel's copy of Scout's config without vision_config (Meta's file, bundled, has it).
    const std::string text_only = (fs::path(QUANTPLAN_SOURCE_DIR) / "tests/data/configs/meta-llama--Llama-4-Scout-17B-16E-Instruct.config.json").string();
    BOOST_TEST_REQUIRE(report_to(scout, {"--headless", "--model", text_only, "--gpu", "h200", "--tp", "2", "--schemes", "w4a16-g128"}).exit_code == 0);
    const std::string smd = read_file(scout / "report.md");
    BOOST_TEST(smd.find("not counted: the vision encoder") != std::string::npos);
    BOOST_TEST(smd.find("36 chunked\\_attention") != std::string::npos);
    BOOST_TEST(nlohmann::json::parse(read_file(scout / "report.json"))["model"]["not_counted"].get<std::string>().find("vision") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(base64_matches_rfc4648_vectors) {
    const std::vector<std::pair<std::string, std::string>> vectors = {
        {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
    for (const auto& [in, expected] : vectors) BOOST_TEST(report::base64(in) == expected);
    BOOST_TEST(report::base64(std::string("\xff\x00\x80", 3)) == "/wCA");
}

BOOST_AUTO_TEST_CASE(refuses_a_folder_that_is_not_a_report) {
    const fs::path dir = scratch("foreign");
    write_text(dir / "thesis.tex", "precious");
    const RunResult r = report_to(dir, {"--headless"});
    BOOST_TEST(r.exit_code == 3);
    BOOST_TEST(r.err.find("not a quantplan report") != std::string::npos, r.err);
    BOOST_TEST(read_file(dir / "thesis.tex") == "precious");
    BOOST_TEST(!fs::exists(dir / "report.json"));
    BOOST_TEST(leftovers(dir.parent_path()).empty());
    // A plain file where the folder would go is refused too.
    const fs::path file = scratch("a-file");
    write_text(file, "x");
    BOOST_TEST(report_to(file, {"--headless"}).exit_code == 3);
    BOOST_TEST(read_file(file) == "x");
}

BOOST_AUTO_TEST_CASE(replaces_an_earlier_report_whole) {
    const fs::path dir = scratch("replace");
    BOOST_TEST_REQUIRE(report_to(dir, {"--headless", "--batch", "1"}).exit_code == 0);
    write_text(dir / "stale.txt", "from an older report");
    BOOST_TEST_REQUIRE(report_to(dir, {"--headless", "--batch", "8"}).exit_code == 0);
    BOOST_TEST(!fs::exists(dir / "stale.txt"));
    BOOST_TEST(nlohmann::json::parse(read_file(dir / "report.json"))["workload"]["batch"] == 8);
    BOOST_TEST(leftovers(dir.parent_path()).empty());
    // An empty folder (made by the user beforehand) is fine.
    const fs::path empty = scratch("empty");
    fs::create_directories(empty);
    BOOST_TEST(report_to(empty, {"--headless"}).exit_code == 0);
    BOOST_TEST(fs::exists(empty / "report.json"));
}

BOOST_AUTO_TEST_CASE(a_failure_leaves_no_half_report) {
    // A file list whose fourth entry cannot be written (it leaves the folder): the first three were
    // written into the staging folder; none of them may appear, and an earlier report stays.
    const std::vector<report::ReportFile> bad = {
        {"report.json", "{}\n"}, {"report.md", "# x\n"}, {"charts/a.svg", "<svg/>"}, {"../escape.txt", "no"}};
    const fs::path fresh = scratch("fail-fresh");
    BOOST_CHECK_THROW(report::write_report_folder(fresh, bad), report::ReportWriteFailed);
    BOOST_TEST(!fs::exists(fresh));
    BOOST_TEST(!fs::exists(fresh.parent_path() / "escape.txt"));
    BOOST_TEST(leftovers(fresh.parent_path()).empty());

    const fs::path existing = scratch("fail-existing");
    BOOST_TEST_REQUIRE(report_to(existing, {"--headless"}).exit_code == 0);
    const std::string before = read_file(existing / "report.json");
    BOOST_CHECK_THROW(report::write_report_folder(existing, bad), report::ReportWriteFailed);
    BOOST_TEST(read_file(existing / "report.json") == before);
    BOOST_TEST(leftovers(existing.parent_path()).empty());

    // Bad input fails before anything is written: exit 1, no folder.
    const fs::path bad_input = scratch("bad-input");
    const RunResult r = report_to(bad_input, {"--headless", "--model", "no-such-model"});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(r.err.find("no-such-model") != std::string::npos, r.err);
    BOOST_TEST(!fs::exists(bad_input));
}

BOOST_AUTO_TEST_CASE(scenario_files_set_the_options) {
    const fs::path dir = scratch("scenario");
    const fs::path plain = dir.parent_path() / "scenario-plain.json";
    write_text(plain, R"({"name": "short context", "batch": 256, "context": 128, "kv": "fp8", "schemes": ["bf16", "w8a8-fp8"]})");
    BOOST_TEST_REQUIRE(report_to(dir, {"--headless", "--scenario", plain.string()}).exit_code == 0);
    auto doc = nlohmann::json::parse(read_file(dir / "report.json"));
    BOOST_TEST(doc["workload"]["batch"] == 256);
    BOOST_TEST(doc["workload"]["context"] == 128);
    BOOST_TEST(doc["workload"]["kv"] == "fp8");
    BOOST_TEST(doc["schemes"].size() == 2u);
    BOOST_TEST(doc["inputs"]["scenario"] == plain.string());
    // The command line wins over the scenario.
    BOOST_TEST_REQUIRE(report_to(dir, {"--headless", "--scenario", plain.string(), "--batch", "4"}).exit_code == 0);
    doc = nlohmann::json::parse(read_file(dir / "report.json"));
    BOOST_TEST(doc["workload"]["batch"] == 4);
    BOOST_TEST(doc["workload"]["context"] == 128);
    // A lecture scenario: FILE#N merges steps 1..N.
    const fs::path lecture = dir.parent_path() / "scenario-lecture.json";
    write_text(lecture, R"({"name": "walk", "steps": [{"title": "one", "batch": 1, "context": 128, "kernel": "generic"},
                                                      {"title": "two", "batch": 1024}]})");
    BOOST_TEST_REQUIRE(report_to(dir, {"--headless", "--scenario", lecture.string() + "#2"}).exit_code == 0);
    doc = nlohmann::json::parse(read_file(dir / "report.json"));
    BOOST_TEST(doc["workload"]["batch"] == 1024);
    BOOST_TEST(doc["workload"]["context"] == 128);
    BOOST_TEST(doc["workload"]["kernel"] == "generic");
    // Mistakes are one line naming the key, exit 1.
    const fs::path typo = dir.parent_path() / "scenario-typo.json";
    write_text(typo, R"({"bacth": 8})");
    RunResult r = report_to(scratch("scenario-typo"), {"--headless", "--scenario", typo.string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(r.err.find("bacth") != std::string::npos, r.err);
    r = report_to(scratch("scenario-step"), {"--headless", "--scenario", lecture.string() + "#3"});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(r.err.find("2 steps") != std::string::npos, r.err);
    r = report_to(scratch("scenario-missing"), {"--headless", "--scenario", "/no/such/scenario.json"});
    BOOST_TEST(r.exit_code == 1);
}

BOOST_AUTO_TEST_CASE(error_chart_series_are_the_labs_ladder) {
    errorsim::ErrorLabConfig config;  // seed 003's INT4 layer
    const std::vector<errorsim::LadderRow> ladder = errorsim::granularity_ladder(config);
    BOOST_REQUIRE(ladder.size() == 5u);
    std::unique_ptr<QChart> chart(ui::make_error_chart(ladder, "INT4"));
    auto* layer = qobject_cast<QLineSeries*>(ui::find_series(chart.get(), "INT4 layer error"));
    auto* heldout = qobject_cast<QLineSeries*>(ui::find_series(chart.get(), "INT4 layer error (held-out)"));
    auto* weight = qobject_cast<QLineSeries*>(ui::find_series(chart.get(), "INT4 weight error"));
    BOOST_REQUIRE(layer != nullptr);
    BOOST_REQUIRE(heldout != nullptr);
    BOOST_REQUIRE(weight != nullptr);
    BOOST_REQUIRE(layer->count() == 5);
    for (int i = 0; i < 5; ++i) {
        const errorsim::ErrorLabResult& r = ladder[static_cast<std::size_t>(i)].result;
        BOOST_TEST(layer->at(i).x() == i);
        BOOST_TEST(close(r.layer_error_calibration * 100, layer->at(i).y()));
        BOOST_TEST(close(r.layer_error_heldout * 100, heldout->at(i).y()));
        BOOST_TEST(close(r.weight_error * 100, weight->at(i).y()));
    }
    fs::create_directories(fs::current_path() / "charts-out");
    BOOST_TEST(ui::save_chart_png(chart.get(), QString::fromStdString((fs::current_path() / "charts-out/error.png").string()),
                                  QSize(900, 560)));
}

BOOST_AUTO_TEST_CASE(executable_without_any_display) {
    const fs::path dir = scratch("executable");
    const auto start = std::chrono::steady_clock::now();
    const auto [rc, output] = run_binary("env -u QT_QPA_PLATFORM -u DISPLAY -u WAYLAND_DISPLAY", "--headless --out " + dir.string());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    BOOST_TEST_REQUIRE(rc == 0, output);
    BOOST_TEST_MESSAGE("default report: " << seconds << " s (bound " << kDefaultReportMaxSeconds << " s)");
    BOOST_TEST(seconds < kDefaultReportMaxSeconds);
    BOOST_TEST(output.find("XDG_RUNTIME_DIR") == std::string::npos, output);
    BOOST_TEST(fs::exists(dir / "charts/crossover.png"));
    // --out - with --json - keeps the stdout JSON of the other modes.
    const auto [rc_json, json_text] = run_binary("env -u DISPLAY", "--headless --out - --json - --model qwen3-8b");
    BOOST_TEST_REQUIRE(rc_json == 0, json_text);
    const auto doc = nlohmann::json::parse(json_text, nullptr, false);
    BOOST_TEST(!doc.is_discarded());
    BOOST_TEST(doc["model"]["name"] == "qwen3-8b");
    // Exit codes are in --help.
    const auto [rc_help, help] = run_binary("", "--help");
    BOOST_TEST(rc_help == 0);
    BOOST_TEST(help.find("3  --out DIR exists and is not a quantplan report") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
