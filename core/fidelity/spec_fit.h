#pragma once
// The fit of speculative decoding's per-step costs to published speed-ups, and its leave-one-out
// test (docs/speculative.md).
//
// In: the speculative-decoding corpus (assets/measurements/speculative/speculative-decoding.json,
// format quantplan-spec-measurements/1), the fitted engine catalog, the bundled models and GPUs.
// A run is usable when its speed-up is published (a `speedup` record, or a speculative figure
// beside its `baseline_record`), its acceptance length was measured in the same run (a record
// of the same id stem), and its model, GPU, method, K and batch are stated and bundled; a run with
// a draft tree (topk above 1) is not modelled. Each run is priced once with the engine step model
// (engine::engine_spec_step, terms 0), so its predicted speed-up under terms (a, h) is
//   plain x L / (verify + draft kernels + forwards x a + batch x h)
// with L the measured acceptance length: the fit is a grid search per engine for the (a, h) that
// minimise the median |error| of the speed-up. An engine with fewer than 4 usable runs takes the
// fit over every engine's runs.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/engine/engine_profile.h"
#include "core/engine/speculative.h"
#include "core/hardware/gpu.h"

namespace quantplan::fidelity {

struct SpecRun {
    std::string id;
    std::string source_key;       // repository + file, or the URL: a source's runs are held out together
    std::string engine;
    std::string model, gpu, method;
    std::int64_t k = 0, batch = 0, tp = 0;
    bool tp_stated = false;
    double acceptance_length = 0; // measured in the run
    double measured_speedup = 0;
    bool usable = false;
    std::string skip_reason;
    // Priced once: the plain step, the speculative step with terms 0, and how the terms enter.
    double plain_s = 0, base_s = 0;
    std::int64_t forwards = 0;
    double fitted = 0, loo = 0, loso = 0;  // predicted speed-ups (loso 0: not available)
    double predict(const engine::SpecTerms& t) const;
};

struct SpecFitInputs {
    std::filesystem::path models_dir;
    std::vector<GpuProfile> gpus;
    const engine::EngineCatalog* catalog = nullptr;  // the fitted engine catalog
};

// Reads and prices the corpus file's runs (every speculative figure with a speed-up; the unusable
// ones with their reason). Throws Error naming the file for a malformed one.
std::vector<SpecRun> spec_runs(const std::filesystem::path& corpus_file, const SpecFitInputs& in);

// Terms per engine ("vllm", "sglang"), fitted on the usable runs not excluded (excluded[i] true
// leaves run i out; empty: none).
std::map<std::string, engine::SpecTerms> fit_spec_terms(const std::vector<SpecRun>& runs, const std::vector<bool>& excluded = {});

struct SpecFidelity {
    std::vector<SpecRun> runs;                     // with fitted / loo / loso
    std::map<std::string, engine::SpecTerms> terms;  // the full fit
    std::size_t usable = 0, sources = 0;
    double median_abs_fitted = 0, median_abs_loo = 0, median_signed_loo = 0, p90_abs_loo = 0;
    double p10_loo = 0, p90_loo = 0;               // the band: p10 and p90 of the loo residuals
    double median_abs_loso = -1;                   // -1: one source only (nothing to hold out against)
};

// Fits on every usable run, then predicts each leave-one-out and leave-one-source-out.
SpecFidelity evaluate_spec_fidelity(const std::vector<SpecRun>& runs);

// The fit file (format quantplan-spec-fit/1: engines.<engine>.{draft_forward_s,
// host_per_sequence_s, ngram_per_sequence_s}, with the fidelity figures beside them).
std::string spec_fit_json(const SpecFidelity& f);

}  // namespace quantplan::fidelity
