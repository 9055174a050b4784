#pragma once
// The command-line path: no window, no Qt event loop.
#include <filesystem>
#include <iosfwd>
#include <string>

#include "app/cli_options.h"
#include <optional>

#include "core/errorsim/errorsim_request.h"
#include "core/hardware/calibration.h"
#include "core/plan/plan.h"

namespace quantplan::app {

// The bundled engine profiles with their fit (assets/engines/profiles/, assets/engines/fit/),
// loaded once. Throws Error for a malformed profile or fit file.
const engine::EngineCatalog& engine_catalog();

// The serving fit a run applies (docs/capacity.md, "Fitted to serving runs under load"): the
// bundled assets/engines/fit/serving-fit.json by default, --serving-fit FILE's, or none with
// --serving-fit none (or when the bundled file is absent).
std::optional<std::filesystem::path> serving_fit_path(const CliOptions& options);

// `base` with the serving fit of serving_fit_path applied; nullopt when there is none (use `base`).
// Throws Error("--serving-fit") for a file that cannot be read or parsed.
std::optional<engine::EngineCatalog> with_serving_fit(const CliOptions& options, const engine::EngineCatalog& base);

// Builds the plan request an options set describes (model, GPU, schemes, workload, profile).
// Throws Error naming the option at fault.
PlanRequest plan_request_from_options(const CliOptions& options);

// The bundled speculative-decoding data (assets/engines/speculative/, the acceptance defaults of
// assets/measurements/speculative/), read once.
const engine::SpecCatalog& spec_catalog();

// The calibration file of --calibration FILE, or nullopt without it. Throws Error("--calibration")
// for a file that cannot be read or parsed.
std::optional<Calibration> calibration_from_options(const CliOptions& options);

// The error-lab request of the --errorsim-* options (seed 003's default ladders otherwise); a bad
// value throws Error naming its option. Shared by the headless JSON and the report.
errorsim::ErrorsimRequest errorsim_request_from_options(const CliOptions& options);

// Writes `text` (a JSON document) to stdout for "-" or atomically to `path`. Returns 0, or 2 with
// one line on `err` when the file cannot be written.
int write_json_text(const std::string& text, const std::string& path, std::ostream& out, std::ostream& err);

// Runs the headless plan: a table on `out`, or JSON to --json FILE|-. Returns the exit code;
// errors are reported as one line on `err`.
int run_headless(const CliOptions& options, std::ostream& out, std::ostream& err);

}  // namespace quantplan::app
