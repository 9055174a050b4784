#pragma once
// The serving fit (docs/capacity.md, "Fitted to serving runs under load"): published serving
// benchmark runs under load (assets/serving-runs/*.json, one run = the records that share
// `setup.run`) are replayed through the capacity simulator (core/serve) with the engine profile's
// fitted step model, and the serving terms the step fit cannot see (engine::ServingTerms: the
// host's time per running and per prefilling sequence, the frontend latency) are fitted to them,
// per engine generation. Leave-one-out (per run) and leave-one-source-out (per source repository) refit those
// terms without the runs held out; the bands are p10-p90 of the leave-one-source-out residuals.
//
// In: the runs' JSON texts, the engine catalog with the step fit applied, the bundled models and
// GPUs. Out: a ServingFitReport. Pure: the same inputs give the same report.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/engine_profile.h"
#include "core/hardware/gpu.h"

namespace quantplan::fidelity {

// One published figure of a run: `figure` ("ttft_s", "tpot_s", "itl_s", "e2e_s",
// "requests_per_s", "output_tokens_per_s", "total_tokens_per_s": input and output tokens over the
// run's duration), `stat` ("mean", "p50"; "" for a rate), in SI units.
struct ServingFigure {
    std::string figure;
    std::string stat;
    double measured = 0;
    std::string record_id;
};

// One run as read (the reader at the edge: nothing past it sees JSON).
struct ServingRunRecord {
    std::string run;                 // setup.run
    std::string file;                // the corpus file
    // The source, for leave-one-source-out: the file's source.repository (one lab's pages, one
    // repository's result files, are one source and are held out together), else the file.
    std::string source;
    std::string engine, engine_version;
    bool vllm_v0 = false;            // vLLM run with VLLM_USE_V1=0 (its V0 engine at a V1-era version)
    std::string gpu, model, scheme;
    std::int64_t tp = 1;
    std::optional<double> request_rate;        // null: every request at once or a closed loop
    std::optional<double> burstiness;          // gamma shape (1: Poisson)
    std::optional<std::int64_t> concurrency;   // closed loop
    std::int64_t requests = 0;                 // completed (else num_prompts)
    std::optional<std::int64_t> input_tokens, output_tokens;       // fixed lengths
    std::string input_len_spec, output_len_spec;                   // serve::LengthSpec text
    std::optional<std::int64_t> total_input_tokens, total_output_tokens;
    std::vector<std::int64_t> input_lens, output_lens;             // from lengths_file
    std::string dataset;                                           // setup.dataset ("sharegpt", "random", ...)
    std::optional<bool> gpu_p2p;                                   // setup.gpu_p2p: false where the engine log says the GPUs lack P2P
    // The dataset's reference sample (lengths/dataset-<dataset>.csv) for a run without lengths of
    // its own: the shape of its per-request lengths, scaled to the run's stated means when replayed.
    std::vector<std::int64_t> shape_input_lens, shape_output_lens;
    std::optional<double> gpu_memory_utilization, mem_fraction_static;
    std::optional<std::int64_t> max_model_len, max_num_seqs, max_num_batched_tokens;
    std::optional<bool> chunked_prefill, cuda_graphs;
    std::string kv_cache_dtype;                                    // setup.kv_cache_dtype ("" or "auto": the model's dtype)
    // What the replay does not model, so a run that states it is not replayed: pipeline parallelism
    // (setup.pipeline_parallel), data parallelism or SGLang's DP attention (data_parallel,
    // dp_attention), experts spread over the ranks (expert_parallel), speculative decoding
    // (speculative_decoding); vLLM V0's multi-step scheduling (num_scheduler_steps > 1) is replayed
    // with its windows (serve::EngineLimits::multi_steps) since 2026-12-06.
    std::optional<std::int64_t> pipeline_parallel, data_parallel, num_scheduler_steps;
    std::optional<bool> dp_attention, expert_parallel, speculative_decoding;
    // setup.not_replayed_because: the corpus keeps the run as published and sets it apart, with the
    // reason (a client whose figures the replay cannot reproduce by its definitions, e.g.).
    std::string not_replayed_because;
    std::vector<ServingFigure> figures;
};

// Reads every *.json of `dir` (format quantplan-measurements/1, records grouped by setup.run;
// lengths files relative to the folder). Throws Error naming the file and field at fault.
std::vector<ServingRunRecord> load_serving_runs(const std::filesystem::path& dir, std::string* checksum = nullptr);

// Inputs of the fit.
struct ServingFitInputs {
    std::filesystem::path models_dir;
    std::vector<GpuProfile> gpus;
    const engine::EngineCatalog* catalog = nullptr;  // with the step fit applied
    std::int64_t max_requests = 6000;                // runs with more are not replayed (time)
    std::int64_t max_output_tokens = 400'000;        // nor runs that generate more in all (time)
    // A file fits its group's terms with at most this many runs (the first in file order), so a
    // file of a hundred near-twins does not outweigh the others; its other runs are predicted
    // (and count in the errors) with terms they were not fitted on.
    std::int64_t max_fit_runs_per_file = 8;
};

// One figure predicted: with every run fitted, with its run left out, and with its source left out.
struct ServingPoint {
    std::string run, file, engine, group, figure, stat, record_id, gpu, model, scheme, engine_version;
    std::string load;           // "rate 4", "concurrency 32", "1000 at once"
    double measured = 0, fitted = 0, loo = 0, loso = 0;
    bool in_fit = false;        // its run is one the terms were fitted on (at most max_fit_runs_per_file of its file)
    // predicted / measured - 1
    double error_fitted() const { return fitted / measured - 1; }
    double error_loo() const { return loo / measured - 1; }
    double error_loso() const { return loso / measured - 1; }
};

// Median |error|, median signed error and p90 |error| of one figure class over a set of points.
struct ServingSummary {
    std::string engine;   // "vllm", "sglang" or "*"
    std::string figure;   // "ttft_s", "ttft_s:mean", "ttft_s:p50", "tpot_s", "itl_s", "requests_per_s", ...
    std::int64_t points = 0;
    double median_abs_fitted = 0, median_abs_loo = 0, median_abs_loso = 0;
    double median_signed_loo = 0, median_signed_loso = 0;
    double p90_abs_loo = 0, p90_abs_loso = 0;
    // The same with the serving terms off (the step model and the simulator alone): the baseline.
    double median_abs_unfitted = 0, median_signed_unfitted = 0;
};

// A run that sent every prompt at once and whose published mean TTFT is below what its prompts'
// block linears alone take at the GPUs' peak (the k-th first token needs k prompts' compute, so
// the mean is at least the mean of those prefix sums): its prompts did not all run their prefill
// (a warm prefix cache, or a setup other than the one stated). Listed, not left out.
struct BeatsPeak {
    std::string run, file;
    double measured_ttft_mean_s = 0;
    double floor_s = 0;
};

struct ServingFitReport {
    engine::ServingFit fit;                      // terms per profile id, bands
    std::vector<BeatsPeak> beats_peak;
    std::vector<ServingPoint> points;
    std::vector<ServingSummary> summaries;
    std::map<std::string, std::int64_t> skipped;  // reason -> runs
    std::int64_t runs_used = 0;
};

// The engine generation a profile's serving terms are shared by: "vllm-v0", "vllm-v1", "sglang".
std::string serving_group(const engine::EngineProfile& profile);

// The longest serial frontend time per request that `runs` allow: a stage every request passes one
// at a time caps a replica at 1 / serial requests/s, so the highest requests/s any run measured
// bounds it (infinity when none states a rate). The fit searches the serial time below this bound
// of the runs it fits on.
double frontend_serial_bound_s(const std::vector<const ServingRunRecord*>& runs);

// Fits, predicts every figure fitted / leave-one-out / leave-one-source-out, and summarises.
// `evaluate` false: the fit alone (no held-out refits; points carry fitted predictions only).
ServingFitReport fit_serving(const std::vector<ServingRunRecord>& runs, const ServingFitInputs& in, bool evaluate = true);

}  // namespace quantplan::fidelity
