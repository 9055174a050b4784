// --headless --out DIR: the planning report folder (docs/report.md). The plan, the error lab and
// the sweeps come from core; the charts from ui/ when this build has Qt; ui/report writes the
// folder safely. Exit codes: 0 written, 1 bad input, 2 writing failed, 3 DIR refused.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <ostream>

#include "app/commands.h"
#include "app/data_paths.h"
#include "app/headless.h"
#include "app/scenario.h"
#include "core/base/error.h"
#include "core/errorsim/errorsim_request.h"
#include "ui/report/report.h"
#include "ui/report/report_folder.h"
#ifdef QUANTPLAN_HAVE_GUI
#include "ui/report/report_charts.h"
#endif

namespace quantplan::app {
namespace {

// The options the report was made from, as report.json's `inputs` (docs/report.md).
nlohmann::json inputs_json(const CliOptions& o) {
    nlohmann::json j = {{"model", o.model},
                        {"gpu", o.gpu},
                        {"schemes", o.schemes ? nlohmann::json(*o.schemes) : nlohmann::json(nullptr)},
                        {"batch", o.batch},
                        {"context", o.context},
                        {"kv", o.kv},
                        {"kernel", o.kernel},
                        {"profile", o.profile},
                        {"engine", o.engine},
                        {"gpu_mem_util", o.gpu_mem_util},
                        {"tp", o.tp},
                        {"goal", o.goal},
                        {"accuracy", o.accuracy},
                        {"reasoning", o.reasoning},
                        {"max_num_batched_tokens", o.max_num_batched_tokens},
                        {"max_num_seqs", o.max_num_seqs},
                        {"enforce_eager", o.enforce_eager},
                        {"mxfp4_mxfp8", o.mxfp4_mxfp8},
                        {"scenario", o.scenario ? nlohmann::json(*o.scenario) : nlohmann::json(nullptr)}};
    nlohmann::json lab = nlohmann::json::object();
    if (o.errorsim_formats) lab["formats"] = *o.errorsim_formats;
    if (o.errorsim_granularities) lab["granularities"] = *o.errorsim_granularities;
    if (o.errorsim_methods) lab["methods"] = *o.errorsim_methods;
    if (o.errorsim_activation) lab["activation"] = *o.errorsim_activation;
    if (o.errorsim_outlier) lab["outlier"] = *o.errorsim_outlier;
    if (o.errorsim_seed) lab["seed"] = *o.errorsim_seed;
    if (o.errorsim_tokens) lab["tokens"] = *o.errorsim_tokens;
    if (o.errorsim_tensor) lab["tensor"] = *o.errorsim_tensor;
    if (o.errorsim_activation_tensor) lab["activation_tensor"] = *o.errorsim_activation_tensor;
    j["errorsim"] = std::move(lab);
    if (o.calibration) j["calibration"] = *o.calibration;  // only when given: reports without one keep their bytes
    return j;
}

// UTC now as ISO 8601 ("2026-01-31T12:00:00Z"), for --timestamp.
std::string utc_now() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace

int run_report(const CliOptions& given, std::ostream& out, std::ostream& err) {
    try {
        CliOptions o = given;
        if (o.scenario) apply_scenario_file(o, *o.scenario);
        report::ReportContent content;
        content.plan = plan(plan_request_from_options(o));
        content.errorsim = errorsim::run_errorsim(errorsim_request_from_options(o));
        if (std::optional<Calibration> cal = calibration_from_options(o)) {
            MeasuredOverlay overlay = measured_step_points(*cal, content.plan);
            content.measured = report::ReportMeasured{*o.calibration, std::move(*cal), std::move(overlay)};
        }
        content.inputs = inputs_json(o);
        if (capacity_asked(o)) {
            CapacityRun run = run_capacity(o);
            content.capacity = std::move(run.plan);
            content.capacity_target = run.target;
            content.capacity_traffic = std::move(run.traffic_json);
            content.capacity_slo = run.slo;
            // Each ranked configuration's launch at the engine asked (the newest release in the
            // launch data when --engine names no version); a refusal is listed, not fatal.
            const std::vector<serve::Configuration>& ranked = content.capacity->ranked;  // run.plan was moved there
            if (!ranked.empty()) {
                const auto [engine, version] = launch::split_engine_argument(run.options.engine);
                try {
                    const launch::LaunchData data = launch::load_launch_data(data_dir(), engine);
                    const std::string release = data.args.versions[launch::resolve_args_version(data.args, version)].version;
                    for (std::size_t i = 0; i < ranked.size() && i < 10; ++i) {
                        try {
                            content.capacity_launches.push_back(launch::launch_json(configuration_launch(run, ranked[i], data, release)));
                        } catch (const Error& e) {
                            content.capacity_launches.push_back({{"refused", e.what()}});
                        }
                    }
                } catch (const Error& e) {
                    content.capacity_launches.assign(std::min<std::size_t>(ranked.size(), 10), nlohmann::json{{"refused", e.what()}});
                }
            }
        }
        if (o.disagg) {
            DisaggRun run = compute_disagg(o);
            content.disagg = std::move(run.comparison);
            content.disagg_by_prompt = std::move(run.by_prompt);
            content.disagg_by_tpot = std::move(run.by_tpot);
            content.disagg_json = std::move(run.json);
        }
        content.generator = version_text();
        if (o.timestamp) content.generated_at = utc_now();
#ifdef QUANTPLAN_HAVE_GUI
        content.charts = report::render_report_charts(content.plan, content.errorsim ? &*content.errorsim : nullptr,
                                                      content.measured ? &content.measured->overlay : nullptr,
                                                      content.capacity ? &*content.capacity : nullptr, &content.capacity_slo,
                                                      content.disagg ? &*content.disagg : nullptr,
                                                      content.disagg_by_prompt ? &*content.disagg_by_prompt : nullptr,
                                                      content.disagg_by_tpot ? &*content.disagg_by_tpot : nullptr);
#endif
        const std::vector<report::ReportFile> files = report::report_files(content);
        report::write_report_folder(*o.out_dir, files);
        out << "quantplan: report written to " << *o.out_dir << " (" << files.size() << " files";
#ifndef QUANTPLAN_HAVE_GUI
        out << "; no charts: this build has no Qt";
#endif
        out << ")\n";
        return 0;
    } catch (const report::ReportFolderRefused& e) {
        err << "quantplan: " << e.what() << "\n";
        return 3;
    } catch (const report::ReportWriteFailed& e) {
        err << "quantplan: " << e.what() << "\n";
        return 2;
    } catch (const Error& e) {
        err << "quantplan: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace quantplan::app
