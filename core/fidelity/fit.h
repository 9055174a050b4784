#pragma once
// The fit of engine profiles to the measurement corpus, its honest test, and the error bands a
// prediction carries (docs/fidelity.md).
//
// In: a Corpus (core/fidelity/corpus.h), the unfitted engine catalog (rules and defaults from the
// engine source), the bundled models and GPUs. Out: FittedParameters (written as
// assets/engines/fit/engine-fit.json) and a FidelityReport: every corpus point predicted with
// the full fit, leave-one-out and leave-one-source-out, the median and p90 |error| per metric,
// engine and scheme family, and the bands (p10-p90 of the leave-one-out residuals).
//
// The fit is a pure function of its inputs: the same corpus gives the same parameters.
//  - Kernel curves: for every kernel record (aiconfigurator GEMMs and decode attention), the
//    fraction of its roofline time the kernel reached; per GPU x family x M the median over
//    shapes, and per architecture the median over that architecture's GPUs.
//  - Step terms per engine (kernel scales per scheme family at decode and prefill, fixed_step_s,
//    per_layer_s, eager_per_layer_s, ttft_overhead_s): non-negative least squares on the relative
//    time error of the end-to-end points (decode speed, TPOT, ITL, E2E and TTFT at batch 1 or one
//    request in flight), with the kernel curves held fixed; a profile with enough points of its own
//    refits its fixed and per-layer costs. An eager decode step also waits on the host
//    (engine::eager_step_s): its host cost per layer, per engine minor version, and the blend
//    exponent are fitted in turn with the least-squares terms (fit_step in fit.cpp).
//  - Memory terms per profile: non_torch_bytes by least squares on the KV budget the logged
//    KV-cache size implies (activation_scale held at 1, the activation model's own estimate: the
//    priced logs cannot separate the two).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/engine_profile.h"
#include "core/fidelity/corpus.h"
#include "core/hardware/calibration.h"
#include "core/hardware/gpu.h"

namespace quantplan::fidelity {

// What the fit prices records with.
struct FitInputs {
    std::filesystem::path models_dir;           // bundled config.json files (models/)
    std::vector<GpuProfile> gpus;               // bundled GPU profiles
    engine::EngineCatalog catalog;              // profiles with their rules (fitted values ignored)
    // evaluate_fidelity's held-out refits (leave-one-out, leave-one-source-out: one fit per run and
    // per source). false: only the full fit, each point's loo and loso set to its fitted value (a
    // test that asks what the full fit prices, without paying for hundreds of refits).
    bool held_out = true;
};

// One record as the fit sees it.
struct PricedPoint {
    std::string id;
    std::string file;
    std::string source_key;
    Metric metric = Metric::DecodeTokensPerS;
    engine::FigureClass figure = engine::FigureClass::Other;
    std::string engine;             // "vllm", "sglang"
    std::string profile;            // engine profile id
    std::string family;             // scheme family "bf16", "8bit", "4bit"
    std::string gpu;
    std::string model;
    std::string model_type;         // of the bundled config
    std::string arch;               // the GPU's compute capability
    std::string engine_version;
    std::string scheme;
    std::int64_t batch = 1;
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;
    double measured = 0;            // SI, as the record
    double fitted = 0;              // prediction with every point in the fit
    double loo = 0;                 // prediction with this point left out
    double loso = 0;                // prediction with this point's source left out
    bool usable = false;            // priced; false: `skip_reason` says why
    std::string skip_reason;
    std::string note;               // e.g. "kernel curve from the architecture only"
    // Relative errors predicted / measured - 1 (times and token counts; speeds as their times).
    double error_fitted() const;
    double error_loo() const;
    double error_loso() const;
};

// Median and p90 of |error| over a group of points.
struct ErrorSummary {
    std::string metric;       // metric name or figure class
    std::string engine;
    std::string family;
    std::int64_t points = 0;
    double median_fitted = 0, p90_fitted = 0;
    double median_loo = 0, p90_loo = 0;
    double median_loso = 0, p90_loso = 0;
};

// The whole evaluation.
struct FidelityReport {
    engine::FittedParameters parameters;   // fitted on every usable point
    std::vector<PricedPoint> points;       // every corpus record that is not a kernel table row
    std::int64_t kernel_records = 0;       // kernel rows the curves were fitted on
    std::vector<ErrorSummary> summaries;   // per metric x engine x family, then per metric, then per class
    std::map<std::string, std::int64_t> skipped;  // reason -> records
};

// Fits the parameters on the corpus (bands are left empty: they need the leave-one-out run of
// evaluate_fidelity, which puts them into its parameters) (every usable record). Pure.
engine::FittedParameters fit_engine_parameters(const Corpus& corpus, const FitInputs& in);

// Fits, then predicts every record fitted, leave-one-out and leave-one-source-out, and summarises.
FidelityReport evaluate_fidelity(const Corpus& corpus, const FitInputs& in);

// The kernel curves with a --validate calibration file layered on top: for `gpu` (the GPU the file
// was measured on), every kernel family the file timed gets a curve made from its measurements
// the same way the corpus curves are made (roofline / measured time, median per M; attention as a
// line in the bytes read), replacing the fitted one; the other GPUs and families keep theirs.
// `replaced` (optional) receives the family names replaced.
engine::KernelEfficiencies calibrated_kernels(const engine::KernelEfficiencies& fitted, const Calibration& calibration,
                                              const GpuProfile& gpu, std::vector<std::string>* replaced = nullptr);

}  // namespace quantplan::fidelity
