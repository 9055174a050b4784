#pragma once
// The command line: every option, parsed into one struct before anything is built.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace quantplan::app {

// Parsed command line. Unset optionals take the documented defaults.
struct CliOptions {
    bool help = false;
    bool version = false;
    bool headless = false;
    std::optional<std::string> json_path;   // --json FILE|- : write the JSON document there
    std::optional<std::string> out_dir;     // --out DIR : write a report folder (report issue)
    std::optional<std::string> inspect_path;  // --inspect PATH : checkpoint inspector
    bool validate = false;                  // --validate : kernel validation on a GPU
    std::optional<double> validate_seconds; // --validate-seconds S : cap on --validate's timing phase [300]
    std::string model = "qwen3-8b";
    bool model_given = false;               // --model was on the command line
    bool gpu_given = false;                 // --gpu was on the command line
    bool gpu_mem_util_given = false;        // --gpu-mem-util, --max-num-seqs, --max-num-batched-tokens were given
    bool max_num_seqs_given = false;
    bool max_num_batched_tokens_given = false;
    std::optional<std::string> check_path;  // --check FILE: a startup log checked against the prediction
    std::optional<std::string> add_to_corpus;  // --add-to-corpus FILE: append what --check measured to a user corpus
    std::int64_t bench_index = 1;             // --bench-index N: the N-th run of a GuideLLM benchmarks file (1-based)
    std::optional<std::string> check_corpus;   // --check-corpus DIR: every *.log in DIR checked, errors per quantity (Markdown)
    std::optional<std::string> check_corpus_out;  // --check-corpus-out FILE: write that Markdown there (atomically) [stdout]
    std::optional<std::string> schemes;     // comma-separated; default serving set
    std::string gpu = "h100-sxm";
    std::int64_t batch = 1;
    std::int64_t context = 4096;
    std::string kv = "auto";
    std::string profile = "engine";  // --profile: engine (fitted, the default), realistic, ideal or measured
    // --engine NAME[@VERSION]: the engine profile (memory rules, defaults, step terms; docs/fidelity.md).
    std::string engine = "vllm";
    bool engine_given = false;              // --engine was on the command line (or in a scenario)
    std::optional<std::string> emit_engine;      // --emit ENGINE: the launch files of the plan (docs/launch.md)
    std::optional<std::string> emit_out;    // --emit-out DIR: write them as files
    bool fit_spec = false;                  // --fit-spec: fit speculative decoding's terms to the published speed-ups
    bool fit_serving = false;               // --fit-serving: fit the serving terms to assets/serving-runs/
    std::optional<std::string> serving_fit;  // --serving-fit FILE: apply a --fit-serving file's terms and bands
    bool fit_engines = false;               // --fit-engines: fit the profiles to the corpus, write the fit file
    std::optional<std::string> fit_out;     // --fit-out FILE [assets/engines/fit/engine-fit.json]
    std::optional<std::string> fidelity_out;  // --fidelity-out FILE: the fidelity tables as Markdown
    std::vector<std::string> corpus_files;  // --corpus FILE (repeatable): a user corpus beside the bundled one
    std::optional<std::string> calibration;  // --calibration FILE : measured profile
    double gpu_mem_util = 0.9;
    std::int64_t kv_cache_memory_bytes = 0;  // --kv-cache-memory-bytes N: vLLM's KV cache per GPU as given (0: the utilization decides)
    std::int64_t tp = 1;
    std::int64_t ep = 1;                    // --ep N: expert parallelism over every GPU, N = --dp x --tp (MoE)
    std::int64_t dp = 1;                    // --dp N: data-parallel attention engines sharing the experts
    std::int64_t nodes = 1;                 // --nodes N: nodes the --dp x --tp GPUs span
    std::string kernel = "fused";
    std::string goal = "throughput";
    std::string accuracy = "moderate";
    bool reasoning = false;
    bool enforce_eager = false;  // the engine runs without CUDA graphs (vLLM --enforce-eager)
    bool mxfp4_mxfp8 = false;    // MXFP4 experts with MXFP8 activations on block-scaled tensor cores (B200, RTX 5090)
    bool per_tensor = false;                // --tensors : list every tensor's budget
    bool timestamp = false;                 // --timestamp : record the generation time in report.json
    std::int64_t max_num_batched_tokens = 8192;
    std::int64_t max_num_seqs = 256;
    std::optional<std::int64_t> num_scheduler_steps;  // --num-scheduler-steps N: vLLM V0's multi-step scheduling
    std::optional<std::string> scenario;    // --scenario FILE
    // Disaggregated prefill and decode (docs/disaggregation.md).
    std::optional<std::string> disagg;           // --disagg P:D
    std::optional<std::int64_t> prefill_tp, decode_tp;
    std::optional<std::string> prefill_scheme, decode_scheme, prefill_gpu, decode_gpu;
    std::optional<std::string> interconnect;     // --interconnect ID|FILE
    std::optional<std::int64_t> interconnect_links;  // --interconnect-links N: links a prefill instance sends over
    std::optional<std::string> kv_connector;     // --kv-connector nixl|p2p-nccl|dynamo|mooncake|sglang
    bool disagg_sweep = false;                   // --disagg-sweep: the crossovers in prompt length and TPOT SLO
    bool fit_disagg = false;                     // --fit-disagg: the disaggregation model against its corpus
    // Speculative decoding (docs/speculative.md).
    std::optional<std::string> spec;             // --spec METHOD:K | draft:MODEL:K
    std::optional<std::string> spec_acceptance;  // --spec-acceptance RATES|MEAN_LENGTH
    // Error lab (errorsim) options.
    bool errorsim = false;
    std::optional<std::string> errorsim_formats;
    std::optional<std::string> errorsim_granularities;
    std::optional<std::string> errorsim_methods;
    std::optional<std::string> errorsim_activation;
    std::optional<double> errorsim_outlier;
    std::optional<std::int64_t> errorsim_seed;
    std::optional<std::string> errorsim_tensor;   // --errorsim-tensor FILE.safetensors:NAME
    std::optional<std::string> errorsim_activation_tensor;  // --errorsim-activation-tensor FILE.safetensors:NAME
    std::optional<std::int64_t> errorsim_tokens;  // --errorsim-tokens N: calibration and held-out tokens each
    // Capacity planning (--serve; docs/capacity.md).
    bool serve = false;                     // --serve: simulate traffic through the engine profile
    std::optional<double> rate;             // --rate R: Poisson arrivals, requests/s
    std::optional<std::int64_t> concurrency;  // --concurrency N: N users in a closed loop
    std::int64_t requests = 1000;           // --requests N
    std::string isl = "2000";               // --isl SPEC
    std::string osl = "500";                // --osl SPEC
    std::optional<std::string> slo_ttft, slo_tpot, slo_e2e;  // --slo-ttft S[@pNN] ...
    std::optional<double> target_rate;      // --target-rate R: replicas for this rate
    std::vector<std::string> prices;        // --price GPU=USD_PER_HOUR (repeatable)
    std::optional<std::string> compare_gpus;  // --compare-gpus all|ID,ID: more GPUs for the recommendation
    std::int64_t seed = 1;                  // --seed N
    std::string arrival = "poisson";        // --arrival poisson|gamma:CV|burst
    std::optional<std::string> trace;       // --trace FILE: arrival, input and output tokens a line
    std::int64_t prefix = 0;                // --prefix N: a shared prompt prefix (prefix caching)
    std::optional<bool> gpu_p2p;            // --gpu-p2p on|off: peer-to-peer between the TP GPUs [the GPU's]
    std::vector<std::string> gui_args;      // arguments left for Qt
};

// Parses argv. Throws quantplan::Error naming the option for an unknown option, a missing value
// or a value of the wrong kind.
CliOptions parse_command_line(int argc, char** argv);

// The --help text, including exit codes.
std::string help_text();

// The version string ("quantplan 0.1.0").
std::string version_text();

}  // namespace quantplan::app
