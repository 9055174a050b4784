#pragma once
// `quantplan --check`: a startup log read into a StartupLog (core/check/startup_log.h) is
// identified (model, GPU, engine and version, TP, utilisation, max_model_len, KV dtype,
// quantization), the same setup is priced with the engine profile the version picks, and every
// logged quantity is put beside its prediction (docs/check.md).
//
// In: the StartupLog, the bundled models, GPUs and engine catalog, and what the user's options
// settle. Out: a CheckResult value; no I/O.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/check/bench_result.h"
#include "core/check/startup_log.h"
#include "core/engine/engine_profile.h"
#include "core/engine/speculative.h"
#include "core/hardware/gpu.h"

namespace quantplan::check {

// What the user's options settle (each wins over the log).
struct CheckOptions {
    std::optional<std::string> model;    // --model NAME|PATH
    std::optional<std::string> gpu;      // --gpu ID|FILE
    std::optional<std::string> engine;   // --engine NAME[@VERSION]
    std::optional<std::string> scheme;   // the checkpoint's scheme when known (else told from the model's name)
    std::optional<std::int64_t> tp;      // --tp N: a benchmark result's tensor-parallel size (a log names its own)
    std::optional<bool> gpu_p2p;         // --gpu-p2p on|off: a benchmark result's GPUs reach each other peer-to-peer
    std::optional<std::int64_t> num_scheduler_steps;  // --num-scheduler-steps N: a benchmark result's vLLM V0 multi-step scheduling
};

// A GPU name as the runtime prints it, and the bundled profile it is (assets/gpu-device-names.json).
struct DeviceNameEntry {
    std::string name;        // "NVIDIA H100 80GB HBM3"
    std::string gpu;         // bundled profile id; "" for a GPU quantplan does not bundle
    std::string stand_in;    // for an unbundled GPU: the bundled profile of equal memory priced instead ("" none)
    std::string differs;     // what differs from the stand-in, or why none
    std::string source;
};

// Parses assets/gpu-device-names.json. Throws Error(source) on a malformed file.
std::vector<DeviceNameEntry> parse_device_names(std::string_view text, const std::string& source);

// What a check prices with.
struct CheckInputs {
    std::filesystem::path models_dir;
    std::filesystem::path gpus_dir;
    std::vector<GpuProfile> gpus;            // bundled profiles (the log's total memory is matched against them)
    std::vector<DeviceNameEntry> device_names;  // GPU names a log may print (empty: names are not matched)
    const engine::EngineCatalog* catalog = nullptr;
    // Speculative decoding (docs/speculative.md): the published acceptance defaults, version limits
    // and fitted terms. A log that ran speculation is priced with the draft in its budget, and its
    // measured acceptance priced against the default.
    const engine::SpecCatalog* spec_catalog = nullptr;
};

// The setup the check identified, and where each value came from: "log", "option", "model name",
// "engine default" or "total memory".
struct Identified {
    std::string model;
    std::string gpu;
    std::string engine;
    std::string version;
    std::string profile;
    std::int64_t tp = 1;
    double gpu_memory_utilization = 0;   // vLLM; SGLang: mem_fraction_static
    std::int64_t max_model_len = 0;
    std::string kv_cache_dtype;          // quantplan KV format ("bf16", "fp8")
    std::string quantization;            // as the log names it ("" for none)
    std::string scheme;                  // the quantplan scheme priced
    std::map<std::string, std::string> from;
    // Every setting the issue lists, by its vLLM name (SGLang's mem_fraction_static under its own):
    // the value priced and where it came from ("log (args: Namespace)", "engine default (...)").
    struct Setting {
        std::string value;
        std::string from;
    };
    std::map<std::string, Setting> settings;
    std::string device_name;                   // the GPU name the log printed, when it printed one
    std::vector<std::string> gpu_candidates;   // every bundled GPU the evidence fits (first: the one picked)
    // A benchmark run's settings as corpus setup keys ("concurrency", "input_tokens",
    // "output_tokens", "num_prompts", "request_rate"), so --add-to-corpus records can be priced.
    std::map<std::string, double> run;
};

// One logged quantity beside its prediction.
struct CheckRow {
    std::string quantity;          // "weights_bytes", "activation_peak_bytes", "kv_cache_tokens", ...
    double logged = 0;             // SI units
    std::string as_logged;         // as printed
    std::optional<double> predicted;
    std::string unit;              // "bytes", "tokens", "x"
    std::optional<double> error_fraction;  // (predicted - logged) / logged
    std::string note;
};

// The relative distance within which a logged total memory matches a bundled GPU's usable memory:
// the largest seen over the log corpus (tests/data/logs/, docs/check.md) with room above it.
inline constexpr double kMemoryMatchTolerance = 0.025;

// How far above the total that a vLLM log's budget implies (weights and KV cache over
// gpu_memory_utilization) a bundled GPU's usable memory may lie and still fit: the budget's share
// the log does not print (activation peak, non-torch memory). The largest seen over the log corpus
// is 9.3% (Qwen2-7B at TP 2 on an A100 40GB at 0.5, vLLM 0.10.1.1); 12% leaves room above it.
inline constexpr double kBudgetSlack = 0.12;

// How far a bundled GPU's predicted KV cache (the engine's budget at the log's own settings) may lie
// from the logged one and still identify that GPU, when nothing else the log holds identified one
// (no name, no total memory, no bundled GPU within kBudgetSlack of the budget it prints). Over the
// corpus's logs priced on their expected GPU the largest KV |errors| are 195% (issue 5248) and 28%
// (PR 17122, its GPU unverified), both explained in docs/check.md, then 19.0% in KV bytes
// (LMCache#1739, Qwen3-14B on an A100 40GB): 20% keeps it, by one point.
inline constexpr double kKvIdentifyTolerance = 0.20;

// The whole check.
struct CheckResult {
    Identified identified;
    std::vector<CheckRow> rows;
    std::string largest_difference;          // the memory term that differs most, with its cause
    std::vector<std::string> unresolved;     // what could not be identified, and the option that settles it
    std::vector<std::string> notes;          // the reader's and the check's remarks
};

// Checks `log` against the prediction. Throws Error("--check" or the option) only for options that
// are wrong; what the log does not settle goes into `unresolved`, and the rows it can price are kept.
CheckResult check_startup_log(const StartupLog& log, const CheckOptions& options, const CheckInputs& inputs);

// Checks a benchmark result against the engine profile's step model: TPOT and ITL as a decode step
// at the run's concurrency and mean context, TTFT as the prefill of the mean prompt (at
// concurrency 1), E2E, output tokens/s and requests/s from those: a steady-state approximation
// until the traffic simulator of the capacity-planning issue replaces it (each row says so). A run
// by request rate without a concurrency cap is listed without predictions.
CheckResult check_bench_result(const BenchResult& bench, const CheckOptions& options, const CheckInputs& inputs);

// The quantplan scheme of a checkpoint whose name and declared quantization are given
// ("Qwen2.5-7B-Instruct-AWQ", "awq" -> w4a16-g128); nullopt when it cannot tell.
std::optional<std::string> scheme_from_quantization(const std::string& model_name, const std::string& quantization);

}  // namespace quantplan::check
