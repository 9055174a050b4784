#pragma once
// The headless planning report (`quantplan --headless --out DIR`, docs/report.md): what goes into
// report.json, report.md, report.html and sweeps.csv, built from core's results. This part is
// Qt-free so that a build without Qt still writes a report (without charts); the charts are
// rendered by ui/report/report_charts.h and handed in as bytes.
//
// Everything here is a pure function of its inputs: the same content gives byte-identical files
// (no clock, no locale, no environment), so reports can be diffed.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errorsim/errorsim_request.h"
#include "core/hardware/calibration.h"
#include "core/plan/measured_overlay.h"
#include "core/plan/plan.h"
#include "core/plan/sweep.h"
#include "core/serve/capacity_plan.h"
#include "core/serve/disagg_plan.h"

namespace quantplan::report {

// Version of the report folder's layout and of the keys report.json adds to the plan document
// (the plan's own keys follow kReportSchemaVersion of core/report/report_json.h). Bumped when a key
// changes meaning.
inline constexpr int kReportFolderVersion = 1;

// Name of the marker file that identifies a folder as a quantplan report (see report_folder.h).
inline constexpr const char* kMarkerFileName = ".quantplan-report";

// Batches of sweeps.csv: powers of two 1..4096 (docs/report.md).
inline constexpr std::int64_t kSweepMinBatch = 1;
inline constexpr std::int64_t kSweepMaxBatch = 4096;

// Contexts of sweeps.csv: powers of two 128..131072 tokens.
inline constexpr std::int64_t kSweepMinContextTokens = 128;
inline constexpr std::int64_t kSweepMaxContextTokens = 131072;

// One rendered chart: its file stem under charts/, a title and caption for the documents, its
// size in pixels, and the SVG and PNG bytes.
struct ReportChart {
    std::string name;     // file stem: charts/<name>.svg and charts/<name>.png
    std::string title;
    std::string caption;  // one or two sentences saying what the chart shows
    int width_px = 0;
    int height_px = 0;
    std::string svg;
    std::string png;
};

// A calibration file given with --calibration: what it measured and the plan's measured steps.
struct ReportMeasured {
    std::string source;             // the file as the user named it
    Calibration calibration;
    MeasuredOverlay overlay;        // measured_step_points(calibration, plan)
};

// Everything a report is made of.
struct ReportContent {
    PlanResult plan;
    std::optional<errorsim::ErrorsimReport> errorsim;  // absent when the error lab was not run
    std::optional<ReportMeasured> measured;            // absent without --calibration
    nlohmann::json inputs = nlohmann::json::object();  // the options the report was made from
    std::optional<std::string> generated_at;           // only with --timestamp (breaks byte-identity)
    std::vector<ReportChart> charts;                   // empty without Qt
    std::string generator = "quantplan";               // program and version, e.g. "quantplan 0.1.0"
    // Capacity planning (docs/capacity.md), when the options asked for it: the plan, the
    // target rate and the traffic as JSON `serve_traffic` gives it.
    std::optional<serve::CapacityPlan> capacity;
    std::optional<double> capacity_target;
    nlohmann::json capacity_traffic;
    serve::Slo capacity_slo;
    // The launch of each ranked configuration (the first ten), as JSON `launch` (core/launch
    // launch_json), or {"refused": why} where the engine version cannot serve it.
    std::vector<nlohmann::json> capacity_launches;
    // Disaggregated serving (docs/disaggregation.md), when the options asked for it (--disagg): the
    // comparison with aggregated serving on the same GPUs, the search's answer and the sweeps when
    // asked, and JSON `disagg` as --serve --disagg gives it.
    std::optional<serve::DisaggComparison> disagg;
    std::optional<serve::DisaggSweep> disagg_by_prompt, disagg_by_tpot;
    nlohmann::json disagg_json;
};

// One file of the report folder: its path relative to the folder ("charts/memory.svg") and bytes.
struct ReportFile {
    std::string relative_path;
    std::string bytes;
};

// The sweep points behind sweeps.csv: every scheme x batch (1..4096) x context (128..131072).
std::vector<SweepPoint> report_sweep(const PlanResult& plan);

// report.json: the plan document (core's plan_json) plus the report's own keys (docs/report.md).
nlohmann::json report_json(const ReportContent& content);

// report.md: tables, the decision and its reasons, the charts as relative image links.
std::string report_markdown(const ReportContent& content);

// report.html: the same, self-contained (inline CSS, charts embedded as data: URIs; no script,
// no external reference of any kind).
std::string report_html(const ReportContent& content);

// Every file of the report folder, report.json first, the marker file included, in a fixed order.
std::vector<ReportFile> report_files(const ReportContent& content);

// Standard base64 (RFC 4648 §4, with padding) of `bytes`: the data: URIs of report.html.
std::string base64(const std::string& bytes);

}  // namespace quantplan::report
