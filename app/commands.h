#pragma once
// The modes of the executable besides the headless plan. Each lives in its own file.
#include <iosfwd>
#include <string>

#include "app/cli_options.h"
#include "core/fidelity/fit.h"
#include "core/launch/plan_launch.h"
#include "core/serve/capacity_plan.h"
#include "core/serve/disagg_plan.h"

#include <map>
#include <nlohmann/json.hpp>

namespace quantplan::app {

// --inspect PATH: read a checkpoint's headers and compare with the prediction (inspect_command.cpp).
int run_inspect(const CliOptions& options, std::ostream& out, std::ostream& err);

// --validate: check the predictions on an NVIDIA GPU (validate_command.cpp).
int run_validate(const CliOptions& options, std::ostream& out, std::ostream& err);

// --headless --out DIR: write a report folder (report_command.cpp).
int run_report(const CliOptions& options, std::ostream& out, std::ostream& err);

// --fit-engines: fit the engine profiles to the corpus, write the fit file (fit_command.cpp).
int run_fit_engines(const CliOptions& options, std::ostream& out, std::ostream& err);
// --fit-serving: fit the serving terms to the serving runs under load (serving_fit_command.cpp).
int run_fit_serving(const CliOptions& options, std::ostream& out, std::ostream& err);
// --fit-spec: speculative decoding's terms fitted to the published speed-ups (docs/speculative.md).
int run_fit_spec(const CliOptions& options, std::ostream& out, std::ostream& err);
// --fit-disagg: the disaggregation model against its corpus (disagg_fit_command.cpp).
int run_fit_disagg(const CliOptions& options, std::ostream& out, std::ostream& err);

// The fidelity evaluation of the bundled corpus (plus --corpus files), with the unfitted profiles.
// `corpus_out` receives the corpus read. Throws Error for a malformed corpus or profile.
fidelity::FidelityReport run_fidelity(const CliOptions& options, fidelity::Corpus* corpus_out);

// The fidelity tables as Markdown (docs/fidelity.md quotes them), with the gate line the test reads.
std::string fidelity_markdown(const fidelity::FidelityReport& report, const fidelity::Corpus& corpus);

// --check FILE: a startup log against the prediction (check_command.cpp).
int run_check(const CliOptions& options, std::ostream& out, std::ostream& err);
// --check-corpus DIR: every startup log in DIR checked, summarised per quantity (check_command.cpp).
int run_check_corpus(const CliOptions& options, std::ostream& out, std::ostream& err);

// --serve: capacity planning on the simulator (serve_command.cpp, docs/capacity.md).
int run_serve(const CliOptions& options, std::ostream& out, std::ostream& err);

// Capacity planning as --serve computes it, for the report too.
struct CapacityRun {
    CliOptions options;                     // after the scenario; profile "engine"
    PlanRequest request;                    // the schemes filled in
    serve::Traffic traffic;
    serve::Slo slo;
    std::map<std::string, double> prices;   // USD per GPU-hour: the bundled defaults, then --price
    std::map<std::string, std::string> price_sources;  // where each price came from (one line)
    std::optional<double> target;           // --target-rate, else --rate
    serve::CapacityPlan plan;
    nlohmann::json traffic_json;            // JSON `serve_traffic`
};
// Throws Error naming the option for bad traffic, SLOs or prices.
CapacityRun run_capacity(const CliOptions& options);
// The traffic and SLOs of --serve's options (after the scenario). Throws Error naming the option.
void serve_inputs(const CliOptions& options, serve::Traffic& traffic, serve::Slo& slo);
// The GPU prices --serve uses: the bundled list's default per GPU, then --price (returned: the
// prices --price gave). `sources` gets one line per GPU saying where its price came from.
std::map<std::string, double> serving_prices(const CliOptions& options, std::map<std::string, double>& prices,
                                             std::map<std::string, std::string>& sources);
// The GPUs a recommendation compares beyond --gpu, each with the option that named it: every GPU
// given a --price, then --compare-gpus (all: every GPU with a price). Throws Error("--compare-gpus").
std::vector<std::pair<std::string, std::string>> compared_gpus(const CliOptions& options, const std::map<std::string, double>& given_prices,
                                                               const std::map<std::string, double>& prices);
// What --serve --disagg computes (disagg_command.cpp): the options after the scenario, the
// traffic, the comparison, the search and the sweeps when asked, and JSON `disagg`.
struct DisaggRun {
    CliOptions options;
    serve::Traffic traffic;
    serve::Slo slo;
    std::optional<serve::DisaggSearch> found;   // --disagg auto (or the given pools, for the sweeps)
    serve::DisaggComparison comparison;
    std::optional<serve::DisaggSweep> by_prompt, by_tpot;
    nlohmann::json json;
    std::string model_name;
    double offered = 0;                         // requests/s offered (0: closed loop)
};
// Throws Error naming the option. `transfer_fit`: the connectors' transfer terms to apply; nullptr
// reads the bundled assets/engines/fit/kv-transfer-fit.json (--fit-disagg passes the fit it makes).
DisaggRun compute_disagg(const CliOptions& options, const std::map<std::string, serve::TransferTerms>* transfer_fit = nullptr);
// --serve --disagg P:D: disaggregated prefill and decode beside aggregated serving on the same
// GPUs (disagg_command.cpp, docs/disaggregation.md).
int run_disagg(const CliOptions& options, std::ostream& out, std::ostream& err);
// The --serve JSON document of a run: the plan at the request's GPU and TP (or its model and GPU
// when no scheme fits there), `serve`, `serve_recommendation` and `serve_traffic`.
nlohmann::json capacity_document(const CapacityRun& run);
// True when the options ask for capacity planning (--serve or any traffic, SLO or price option).
bool capacity_asked(const CliOptions& options);

// --emit ENGINE / --emit-out DIR: the launch command, deployment and checkpoint recipe of the
// plan's chosen scheme or of each recommended configuration (emit_command.cpp, docs/launch.md).
int run_emit(const CliOptions& options, std::ostream& out, std::ostream& err);
// The launch of one ranked configuration of a capacity run at engine release `release` (its GPU,
// scheme, TP and replicas; max_model_len the traffic's longest request). Throws Error("--emit")
// when the release cannot serve it.
launch::Launch configuration_launch(const CapacityRun& run, const serve::Configuration& configuration, const launch::LaunchData& data,
                                    const std::string& release);

// True when this build has the planner window.
bool gui_available();

// Opens the planner window (gui_main.cpp); returns the exit code of the event loop.
int run_gui(int argc, char** argv, const CliOptions& options);

}  // namespace quantplan::app
