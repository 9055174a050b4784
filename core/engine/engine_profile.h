#pragma once
// Engine profiles: how one serving engine over a range of versions budgets GPU memory and what a
// step costs beyond the roofline (docs/fidelity.md).
//
// In: a profile document (assets/engines/profiles/*.json, hand-written from the engine's source,
// each rule citing file, function and version) and the fitted parameter file
// (assets/engines/fit/engine-fit.json, written by `quantplan --fit-engines` from the measurement
// corpus). Out: an EngineProfile value that the step model (core/engine/step_model.h) prices with.
// Prediction only reads these values; the fit (core/fidelity/) is the only thing that writes them.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "core/roofline/evidence.h"
#include "core/scheme/scheme.h"

namespace quantplan::engine {

// A dotted engine version ("0.6.3", "0.4.6.post1", "0.10.1.1"), compared part by part as numbers;
// a ".postN" suffix counts as one more part, "rcN"/"devN" suffixes are ignored.
struct EngineVersion {
    std::vector<std::int64_t> parts;
    std::string text;
};

// Parses a version; throws Error(field) for text that has no leading number.
EngineVersion parse_engine_version(std::string_view text, const std::string& field);

// Negative, zero or positive as a is older than, equal to or newer than b (missing parts are 0).
int compare_versions(const EngineVersion& a, const EngineVersion& b);

// One citation of the engine source a rule encodes.
struct SourceRef {
    std::string repository;  // e.g. "vllm-project/vllm"
    std::string file;        // e.g. "vllm/worker/worker.py"
    std::string function;    // e.g. "Worker.determine_num_available_blocks"
    std::string version;     // tag or commit read
    std::string what;        // which rule it backs
};

// How the KV-cache budget is derived from the GPU's memory.
enum class BudgetRule : std::uint8_t {
    // vLLM: total x gpu_memory_utilization - (weights + profiled activation peak + non-torch memory
    // [+ CUDA-graph memory where the version counts it]).
    UtilizationOfTotal,
    // SGLang: memory free after loading the weights - total x (1 - mem_fraction_static).
    StaticFraction,
};

struct EngineProfile;

// The settings an engine runs with when the user gives none (per profile).
struct EngineDefaults {
    double gpu_memory_utilization = 0.9;        // vLLM
    double mem_fraction_static = 0.0;           // SGLang's fraction when given explicitly (0: by rule)
    // SGLang's default fraction by tensor-parallel size: (minimum TP, fraction), largest TP first.
    std::vector<std::pair<std::int64_t, double>> mem_fraction_static_by_tp;
    std::int64_t max_num_seqs = 256;
    std::int64_t max_num_batched_tokens = 8192; // tokens in one forward; V0 without chunked prefill: max(this, max_model_len)
    bool chunked_prefill = true;
    bool cuda_graphs = true;
    std::int64_t block_size_tokens = 16;
    // The largest decode batch replayed from a captured CUDA graph; a larger one runs eager. A
    // profile's value, or the first of cuda_graph_max_batch_tiers that fits the GPU's memory and the
    // version (cuda_graph_max_batch_for).
    std::int64_t cuda_graph_max_batch = 512;
    // SGLang sets the largest captured batch by GPU memory and TP (server_args.py: 8 or 80 below
    // 25-35 GB, 256 or 512 above 80-90 GiB, ...; docs/engine-sources.md). A tier applies to a
    // GPU of less than below_bytes at versions from from_version on (empty: every version).
    struct GraphBatchTier {
        std::uint64_t below_bytes = 0;
        std::int64_t max_batch = 0;        // TP below 4
        std::int64_t max_batch_tp4 = 0;    // TP of 4 or more
        std::string from_version;
    };
    std::vector<GraphBatchTier> cuda_graph_max_batch_tiers;
    // SGLang's chunked_prefill_size (its max_num_batched_tokens) by GPU memory and release
    // (server_args.py: 2048 under 25-35 GB, 4096 under 60 GiB from 0.5.3, 16384 above 160 GiB;
    // docs/engine-sources.md): the first tier below whose bytes the GPU's memory lies, at versions
    // from its from_version on, replaces max_num_batched_tokens in defaults_for_run.
    struct TokensTier {
        std::uint64_t below_bytes = 0;
        std::int64_t tokens = 0;
        std::string from_version;
    };
    std::vector<TokensTier> max_num_batched_tokens_tiers;
    // vLLM V1 captures by the step's tokens and drops sizes above max_num_batched_tokens
    // (VllmConfig._set_cudagraph_sizes); V0 and SGLang capture decode batches only.
    bool cuda_graph_sizes_in_tokens = false;
    // The captured sizes, as a decode batch is padded to them: 1, 2, 4, then the multiples of `step`
    // up to `to`, segment after segment ([to, step] pairs), capped at the largest captured batch.
    std::vector<std::pair<std::int64_t, std::int64_t>> cuda_graph_size_steps{{512, 8}};
    // The host's work per step runs while the GPU computes (SGLang's overlap scheduler, on by default
    // from 0.4.0: server_args.py disable_overlap_schedule): a step takes the longer of the two.
    bool host_overlaps_gpu = false;
    std::string host_overlaps_gpu_from;         // the first version that overlaps ("" : every version the profile covers)
    // vLLM V0 replays a captured graph only for decode steps whose longest sequence is at most this
    // (max_seq_len_to_capture, 8192 by default, capped at max_model_len); longer ones run eager.
    // 0: no limit (V1 and SGLang capture by batch size only).
    std::int64_t cuda_graph_max_seq_len = 0;
    // vLLM V1 raises max_num_seqs and max_num_batched_tokens on large GPUs (EngineArgs defaults:
    // total memory >= large_gpu_min_bytes and the GPU id not containing an excluded name).
    std::uint64_t large_gpu_min_bytes = 0;      // 0: no large-GPU defaults
    std::vector<std::string> large_gpu_exclude; // e.g. "a100"
    std::int64_t large_gpu_max_num_seqs = 0;
    std::int64_t large_gpu_max_num_batched_tokens = 0;
    // SGLang's mem_fraction_static rules: the TP table applies on GPUs of at most
    // by_tp_max_memory_bytes (0: always); above, (memory - above_reserve_bytes) / memory.
    std::uint64_t by_tp_max_memory_bytes = 0;
    std::uint64_t above_reserve_bytes = 0;
    // Or a reserve by GPU-memory tier: the first tier whose below_bytes exceeds the GPU's memory
    // gives reserve = max(base_bytes + per_tp_bytes x TP, min_bytes); fraction = (memory - reserve) / memory.
    struct ReserveTier {
        std::uint64_t below_bytes = 0;
        std::uint64_t base_bytes = 0;
        std::uint64_t per_tp_bytes = 0;
        std::uint64_t min_bytes = 0;
    };
    std::vector<ReserveTier> reserve_tiers;
    // vLLM V0 turns chunked prefill on by itself when max_model_len exceeds this (0: never, the
    // profile's chunked_prefill decides). Then max_num_batched_tokens defaults to
    // chunked_prefill_tokens (chunked_prefill_tokens_before in versions below
    // chunked_prefill_tokens_from); otherwise a prompt runs in one forward of
    // max(max_model_len, max_num_batched_tokens) tokens (vllm/config.py SchedulerConfig).
    std::int64_t auto_chunked_above_max_model_len = 0;
    std::int64_t chunked_prefill_tokens = 0;
    std::int64_t chunked_prefill_tokens_before = 0;
    std::string chunked_prefill_tokens_from;
    // vLLM runs AWQ checkpoints with its Marlin kernel from this version on (awq_marlin); before
    // it, with its own AWQ GEMM kernel, priced as the generic dequant family. Empty: always Marlin.
    std::string awq_marlin_from_version;
    // From this version on, --kv-cache-dtype auto (the default) caches in the FP8 a ModelOpt
    // checkpoint declares (kv_cache_quant_algo FP8, or a float 8-bit kv_cache_scheme) instead of
    // the model dtype: vLLM's resolve_kv_cache_dtype_string (0.14.0), SGLang's
    // ModelRunner.init_memory_pool (0.5.3). Empty: never.
    std::string modelopt_kv_auto_from_version;
    // Whether the engine applies a config's model-wide sliding_window (Mistral-7B-v0.1's 4,096) to
    // every layer: vLLM does (V0 and V1); SGLang's llama.py builds RadixAttention without a window
    // and caches every token (profile key model_wide_sliding_window, false for SGLang).
    bool model_wide_sliding_window = true;
    // vLLM V1's hybrid KV allocator (layers grouped by type, sliding windows holding their window,
    // Mamba state a block) from this version on (PR #17996, v0.9.1); before it, V1 unified a model's
    // mixed sliding and full layers into full attention (every layer caches every token). "" never.
    std::string hybrid_allocator_from_version;
};

// The defaults a profile runs with on a GPU of `memory_bytes` named `gpu_id` (large-GPU values applied).
EngineDefaults defaults_for_gpu(const EngineProfile& profile, const std::string& gpu_id, std::uint64_t memory_bytes);
// `d` with vLLM V0's chunked-prefill rule applied for this max_model_len and engine version (an
// empty version: the profile's newest): chunked prefill and max_num_batched_tokens as V0 sets
// them when the user sets neither. Profiles without the rule are returned unchanged.
EngineDefaults defaults_for_max_model_len(EngineDefaults d, std::string_view version, std::int64_t max_model_len);
// Both: the defaults a run of this engine version gets on this GPU at this max_model_len.
EngineDefaults defaults_for_run(const EngineProfile& profile, const std::string& gpu_id, std::uint64_t memory_bytes, std::string_view version,
                                std::int64_t max_model_len);
// Whether a decode step over sequences of at most `seq_len` tokens replays a CUDA graph.
bool decode_uses_cuda_graphs(const EngineDefaults& d, std::int64_t seq_len);
// Of `steps` decode steps over sequences of first_seq_len, first_seq_len + 1, ... tokens, how many
// run without a CUDA graph.
std::int64_t eager_decode_steps(const EngineDefaults& d, std::int64_t first_seq_len, std::int64_t steps);

// Why vLLM's --num-scheduler-steps `steps` cannot be priced on `profile` at `version`: "" when it
// can. Multi-step scheduling is vLLM V0's (the option exists from 0.5.5 to 0.10.0,
// assets/engines/args/vllm.json; V1 has none), priced without chunked prefill (V0 turns it on above
// a 32,768-token context; the windows of a mixed batch are not modelled); 1 to 64 steps. The one
// check the command line, --check and the serving replay share.
std::string multi_step_refusal(const EngineProfile& profile, std::string_view version, std::int64_t steps);
// The largest decode batch this engine version replays from a CUDA graph on a GPU of
// `memory_bytes` at this TP (its tiers, else cuda_graph_max_batch; vLLM V1: at most
// max_num_batched_tokens). An empty version: the profile's newest.
std::int64_t cuda_graph_max_batch_for(const EngineDefaults& d, std::uint64_t memory_bytes, std::int64_t tensor_parallel,
                                      std::string_view version, std::int64_t max_num_batched_tokens);
// The batch a decode step of `batch` sequences runs at: the smallest captured size that holds it
// (the engines pad the batch to it), or `batch` itself when it is above `max_batch` (eager).
std::int64_t cuda_graph_padded_batch(const EngineDefaults& d, std::int64_t batch, std::int64_t max_batch);
// Whether this engine version runs an AWQ checkpoint without its Marlin kernel (an empty version: no).
bool awq_without_marlin(const EngineDefaults& d, std::string_view version);
// Whether this engine version resolves --kv-cache-dtype auto to a ModelOpt checkpoint's declared
// KV format (an empty version: the profile's newest).
bool kv_auto_follows_modelopt(const EngineDefaults& d, std::string_view version);

// The terms of the memory budget that the engine source fixes (rules) and the corpus fits (values).
struct MemoryRules {
    BudgetRule rule = BudgetRule::UtilizationOfTotal;
    // The profiling forward runs max(max_num_batched_tokens, max_model_len) tokens when chunked
    // prefill is off (vLLM V0); otherwise max_num_batched_tokens.
    bool profile_covers_max_model_len_without_chunking = false;
    bool sampler_in_profile = true;        // the dummy sampler run for max_num_seqs is in the peak
    bool cuda_graph_counted = false;       // CUDA-graph memory is subtracted from the KV budget
    // The dummy sampler run through PyTorch's native top-k/top-p (a sort of every logit and its
    // copies) rather than FlashInfer's kernel: its peak is native_sampler_bytes_per_logit per
    // max_num_seqs x vocab logit, and the forward's activations are freed before it runs, so the
    // profiled peak is the larger of the two. From native_sampler_from_version on (by the version
    // asked; "" never) unless `native_sampler` says which the log shows.
    double native_sampler_bytes_per_logit = 0;  // 0: not modelled (the sampler keeps one fp32 copy)
    std::string native_sampler_from_version;
    std::string native_sampler_below_version;  // "" open-ended
    std::optional<bool> native_sampler;          // set from a startup log's sampler line
    // From this version on, "GPU KV cache size: N tokens" logs int(max concurrency x max_model_len)
    // (get_kv_cache_capacity in vllm/v1/core/kv_cache_utils.py), not blocks x block size: the two
    // differ for hybrid caches. "" never.
    std::string kv_tokens_logged_as_concurrency_from;
    // Fitted: activation peak = activation_scale x tokens x (2 x hidden + 3 x MLP width / TP) x 2 bytes.
    double activation_scale = 1.0;
    std::uint64_t non_torch_bytes = 0;                 // fitted: CUDA context, allocator slack (TP 1)
    std::uint64_t non_torch_bytes_per_extra_rank = 0;  // fitted: NCCL buffers added per TP rank beyond 1
    std::uint64_t cuda_graph_bytes = 0;                // fitted: what the captured graphs hold (per GPU)
};

// Whether the profiling run's sampler is PyTorch's native top-k/top-p for this version (or as a
// log showed it): MemoryRules::native_sampler, else the versions from native_sampler_from_version
// to below native_sampler_below_version ("" for the newest counts as the newest the profile covers).
bool native_sampler_in_profile(const MemoryRules& m, std::string_view version);
// Whether this engine version pages by layer group (vLLM's hybrid allocator,
// hybrid_allocator_from_version on; an empty version: the profile's newest).
bool hybrid_allocator_at(const EngineDefaults& d, std::string_view version);
// Whether this version logs its KV token count as max concurrency x max_model_len (an empty version:
// the profile's newest).
bool kv_tokens_logged_as_concurrency(const MemoryRules& m, std::string_view version);

// Kernel families the step model prices with their own efficiency curve.
enum class KernelFamily : std::uint8_t {
    Bf16Gemm,        // bf16 x bf16 GEMM/GEMV (cuBLAS)
    W4A16,           // Marlin-class 4-bit weight-only GEMM
    W8A16,           // Marlin-class 8-bit weight-only GEMM
    Fp8W8A8,         // FP8 x FP8 GEMM with per-tensor or per-channel scales (CUTLASS scaled_mm)
    Fp8BlockW8A8,    // FP8 x FP8 GEMM with 128x128 weight blocks and 1x128 activation groups (DeepGEMM, FlashInfer, Triton)
    Int8W8A8,        // INT8 x INT8 GEMM
    GenericDequant,  // dequantize then a bf16 GEMM
    AttentionBf16,   // decode attention over a bf16/fp16 cache
    AttentionFp8,    // decode attention over an fp8 cache
    W4A16Moe,        // fused-MoE experts in 4-bit weight-only (Marlin MoE), M = rows per expert
    Mxfp4Moe,        // fused-MoE experts in MXFP4 with bf16 activations (vLLM's triton_kernels MoE on Hopper), M = rows per expert
};

// "bf16_gemm", "w4a16", "w8a16", "fp8_w8a8", "fp8_block_w8a8", "int8_w8a8", "generic_dequant", "attention_bf16",
// "attention_fp8", "w4a16_moe", "mxfp4_moe"; parse throws Error(field) on anything else.
const char* kernel_family_name(KernelFamily f);
// The tensor-core matmul a family runs (its peak FLOP rate): FP8 for both FP8 families, INT8, else bf16.
MatmulType family_matmul(KernelFamily f);
KernelFamily parse_kernel_family(std::string_view name, const std::string& field);

// The kernel family that runs a scheme's quantized linears on a GPU with `compute_capability`
// (e.g. "sm_90"): FP8 W8A8 without FP8 tensor cores runs as W8A16, as engines do.
KernelFamily linear_family(const Scheme& scheme, bool gpu_has_matmul_type);

// The scheme family a band is kept for: "bf16", "8bit", "4bit" (by weight bits).
std::string scheme_family(const Scheme& scheme);

// The key a profile's end-to-end kernel scale is kept under: the scheme family, with "-moe" for a
// mixture-of-experts model (its experts run fused-MoE kernels, not the dense GEMMs), e.g. "4bit-moe".
// `generic`: a weight-only scheme run through a generic dequant kernel instead of a Marlin-class
// one ("4bit-generic"; its scale falls back to the family's).
std::string kernel_scale_key(const Scheme& scheme, bool moe, bool generic = false);

// A kernel's achieved fraction of its roofline time as a function of M (rows of the activation:
// the batch at decode): roofline time / measured time, at the measured M values, interpolated
// linearly in log M and held flat outside. Fitted from the kernel corpus.
struct EfficiencyCurve {
    std::vector<std::int64_t> m;        // ascending
    std::vector<double> fraction;       // in (0, 1.5]: of max(bytes / bandwidth, FLOP / peak)
    // Seconds every call costs on top (decode attention: t = per_call_s + roofline / fraction,
    // fitted as a line in the bytes read; 0 for GEMMs, whose curve in M already holds it).
    double per_call_s = 0.0;
    std::int64_t measured_points = 0;   // corpus points behind the curve
    std::string basis;                  // e.g. "aiconfigurator h100-sxm vllm 0.10.1, 48 GEMMs"
    bool calibrated = false;            // measured on this GPU by a --validate calibration file
                                        // (fidelity::calibrated_kernels; never in the fit file)

    double at(std::int64_t rows) const;
    bool empty() const { return m.empty(); }
};

// Curves per GPU (id), per architecture ("sm_90") and over every GPU measured, by family. A lookup
// tries the GPU, its architecture, then the all-GPU curve; a miss is uncovered and priced with the
// realistic profile's constants.
struct KernelEfficiencies {
    std::map<std::string, std::map<KernelFamily, EfficiencyCurve>> by_gpu;
    std::map<std::string, std::map<KernelFamily, EfficiencyCurve>> by_arch;
    std::map<KernelFamily, EfficiencyCurve> any_gpu;
    bool calibrated = false;  // a --validate calibration file replaced a GPU's curves (calibrated_kernels)
};

// What a lookup found: the curve, and whether it was measured on this GPU, only on its
// architecture, or not at all.
struct CurveLookup {
    const EfficiencyCurve* curve = nullptr;  // null when uncovered
    std::string_view coverage;               // "gpu", "architecture", "other_gpus", "none" (string literals)
};
CurveLookup find_curve(const KernelEfficiencies& k, const std::string& gpu_id, const std::string& compute_capability,
                       KernelFamily family);
// The family's curve over every GPU measured ("other_gpus"), or none ("none").
CurveLookup find_all_gpus_curve(const KernelEfficiencies& k, KernelFamily family);

// The host's launch time per layer of an eager decode step, fitted on one engine version's eager points.
struct EagerHostCost {
    std::string version;        // the engine version whose points fitted it ("0.4.2")
    double per_layer_s = 0.0;   // host seconds per layer and eager decode step
    std::int64_t points = 0;    // eager points behind it
};

// An eager step of GPU time `gpu_s` whose kernels the host needs `host_s` to launch:
// (gpu^p + host^p)^(1/p); `gpu_s` when p or host_s is 0.
double eager_step_s(double gpu_s, double host_s, double exponent);

// Per-step costs the roofline does not see, fitted on end-to-end points of this profile.
struct StepTerms {
    double fixed_step_s = 0.0;   // scheduler, sampler, launch: paid once per step
    double per_layer_s = 0.0;    // norms, rotary, activation, residual adds, KV writes: per layer and step
    // With CUDA graphs off (vLLM's --enforce-eager, SGLang's --disable-cuda-graph) every kernel of a
    // decode step is launched from the host: the extra cost per layer and decode step. Fitted on
    // the engine's eager points; 0 when none.
    double eager_per_layer_s = 0.0;
    // An eager step also waits on the host: Python launches each kernel while the GPU runs the ones
    // before it, so the step takes about the longer of the GPU's time G (everything above) and the
    // host's launch time H = layers x host per layer, blended as (G^p + H^p)^(1/p) with
    // p = eager_blend_exponent (eager_step_s). H is fitted per engine version on that version's
    // eager points (the host cost fell between vLLM 0.4 and 0.6); p on every eager point.
    // Empty or p = 0: no host term.
    std::vector<EagerHostCost> eager_host;  // ascending by version
    double eager_blend_exponent = 0.0;
    // The host cost for engine `version` ("" = the newest): the fitted version at or below it,
    // else the lowest fitted; null when none.
    const EagerHostCost* eager_host_for(std::string_view version) const;
    // The kernels' time scaled per kernel_scale_key ("bf16", "8bit", "4bit", "4bit-moe", ...), and at
    // prefill per "<key>/prefill": what
    // the engine's kernels reach end to end beyond the kernel corpus (its quantized and MoE paths,
    // the GPU); 1 when not fitted (an MoE key falls back to its dense family's scale).
    std::map<std::string, double> kernel_scale_by_family;
    // A prefill key ("4bit-moe/prefill") falls back to its decode key where that one is fitted, else
    // to its family's prefill key ("4bit/prefill"): a decode scale of another kernel family is no
    // estimate of a prefill's (vLLM's "4bit" decode scale, 0.47, once priced gpt-oss's MXFP4
    // prefill above the GPU's bf16 peak). A decode key falls back to its family ("4bit-moe" to "4bit").
    // The scale fitted under exactly `key` (or its decode key for a "/prefill" one), else `fallback`:
    // for kernels priced from a curve that measured the whole operation (the fused-MoE Marlin
    // curve), which another family's scale does not describe.
    double kernel_scale_fitted_or(const std::string& key, double fallback) const {
        if (const auto it = kernel_scale_by_family.find(key); it != kernel_scale_by_family.end()) return it->second;
        if (const std::size_t slash = key.find('/'); slash != std::string::npos)
            if (const auto it = kernel_scale_by_family.find(key.substr(0, slash)); it != kernel_scale_by_family.end()) return it->second;
        return fallback;
    }
    double kernel_scale(const std::string& key) const {
        if (const auto it = kernel_scale_by_family.find(key); it != kernel_scale_by_family.end()) return it->second;
        if (const std::size_t slash = key.find('/'); slash != std::string::npos) {
            const std::string decode = key.substr(0, slash);
            if (kernel_scale_by_family.count(decode) > 0) return kernel_scale_by_family.at(decode);
            if (const std::size_t dash = decode.rfind('-'); dash != std::string::npos) return kernel_scale(decode.substr(0, dash) + key.substr(slash));
            return kernel_scale(decode);
        }
        if (const std::size_t dash = key.find('-'); dash != std::string::npos) return kernel_scale(key.substr(0, dash));
        return 1.0;
    }
    // A request run in the benchmark's own process (vLLM's AsyncLLMEngine, SGLang's Engine) still
    // pays tokenization, admission and detokenization before its first token: fitted on such TTFT
    // points (no plan uses it: a plan prices a served request).
    double ttft_overhead_in_process_s = 0.0;
    double ttft_overhead_s = 0.0;  // a served request's time to first token beyond its prefill steps
                                   // (HTTP, tokenizer, scheduling): a column of the engine's fit on
                                   // its TTFT points
    std::int64_t fitted_points = 0;
    std::string basis;           // which points the terms were fitted on
};

// What a busy engine and a served request pay beyond the step model's kernels, fitted on the
// serving corpus under load (fidelity::fit_serving, assets/engines/fit/serving-fit.json; docs/capacity.md).
//  - The host's time per step: the scheduler, the sampler's bookkeeping, output processing and
//    streaming cost per running sequence, and more per sequence whose prompt chunk runs (its
//    block tables, its prefill metadata, its first token's detokenization). Where the engine
//    overlaps the host with the GPU (EngineDefaults::host_overlaps_gpu: SGLang's overlap
//    scheduler) a step takes the longer of the two, else their sum.
//  - The frontend latency (serve::EngineLimits::frontend_latency_s): HTTP, tokenization and the
//    process hop, once per request; it replaces the step fit's ttft_overhead_s in the simulator
//    when fitted.
struct ServingTerms {
    double host_per_sequence_s = 0.0;          // per running sequence and step
    double host_per_prefill_sequence_s = 0.0;  // more per sequence prefilling in the step
    double frontend_latency_s = 0.0;           // per request, client to engine
    double frontend_serial_s = 0.0;            // per request, in the frontend's one process (queued: serve::EngineLimits)
    bool fitted = false;                       // loaded from the serving fit (else the step fit's overhead is the frontend)
    std::int64_t runs = 0;                     // serving runs fitted on
    std::string basis;                         // which runs
};

// The serving fit's residual bands per figure ("ttft_s", "tpot_s", "requests_per_s", ...): p10 and
// p90 of predicted / measured - 1, leave-one-source-out.
struct ServingBand {
    std::string engine;       // "vllm", "sglang" or "*"
    std::string figure;       // "ttft_s", "tpot_s", "itl_s", "requests_per_s", "output_tokens_per_s"
    double p10 = 0;
    double p90 = 0;
    std::int64_t points = 0;
    std::string basis;
};

// One engine over a version range.
struct EngineProfile {
    std::string id;              // e.g. "vllm-v0"
    std::string engine;          // "vllm" or "sglang"
    std::string title;           // e.g. "vLLM V0 (0.5-0.6)"
    EngineVersion min_version;   // first version covered
    std::optional<EngineVersion> below_version;  // first version no longer covered (none: newest)
    std::vector<SourceRef> sources;
    EngineDefaults defaults;
    MemoryRules memory;
    StepTerms step;
    ServingTerms serving;
    bool fitted = false;         // fitted values were loaded for this profile
    // The profile whose own end-to-end points fit this one's fixed and per-layer step costs when
    // this one has too few (the same engine core, split off for another rule, e.g. memory);
    // empty: its engine's pooled costs. `step_terms_reason` says why the two step alike.
    std::string step_terms_from;
    std::string step_terms_reason;

    // Whether `v` lies in [min_version, below_version).
    bool covers(const EngineVersion& v) const;
};

// Which class of figure a corpus point checks; error bands are kept per class.
enum class FigureClass : std::uint8_t { Step, Ttft, KvTokens, Kernel, Other };
// "step", "ttft", "kv_tokens", "kernel", "other"; parse throws Error(field) on anything else.
const char* figure_class_name(FigureClass c);
FigureClass parse_figure_class(std::string_view name, const std::string& field);

// An error band: the p10 and p90 of the leave-one-out relative errors (predicted / measured - 1)
// of one group of corpus points (engine x scheme family x figure class).
struct Band {
    std::string engine;       // "vllm", "sglang", or "*" (every engine)
    std::string family;       // "bf16", "8bit", "4bit", or "*" (every family)
    FigureClass figure = FigureClass::Step;
    double p10 = 0;
    double p90 = 0;
    std::int64_t points = 0;
    std::string basis;        // e.g. "leave-one-out p10-p90 of 34 vllm 4bit step points"
};

// The fewest points a group needs for a band of its own; smaller groups take the engine-wide band,
// then the class-wide one.
inline constexpr std::int64_t kMinBandPoints = 5;

// The band for `engine` x `family` x `figure` with those fallbacks; nullopt when the class has none.
std::optional<Band> find_band(const std::vector<Band>& bands, const std::string& engine, const std::string& family, FigureClass figure);

// EvidencePoint (a corpus point as the fit file keeps it) is defined with the plans that show it
// (core/roofline/evidence.h), so that the roofline needs nothing of the engine profiles.
using quantplan::EvidencePoint;

// The points of `points` nearest to a plan of `model` (its `model_type`) on `gpu_id` / `arch` with
// scheme family `family` and engine `engine`, at most `max_points`, nearest first: same model,
// then same model family; same GPU, then same architecture; same scheme family; same engine.
// A point that shares neither the model family nor the GPU architecture is never listed.
std::vector<EvidencePoint> nearest_points(const std::vector<EvidencePoint>& points, const std::string& model,
                                          const std::string& model_type, const std::string& gpu_id, const std::string& arch,
                                          const std::string& family, const std::string& engine, std::size_t max_points = 5);

// The fitted parameter file: per-profile memory and step terms, and the kernel curves (shared by
// every profile: a kernel's speed is the GPU's), with the checksum of the corpus they came from.
struct FittedParameters {
    std::string corpus_checksum;            // corpus_checksum() of the corpus fitted
    std::int64_t corpus_records = 0;
    std::map<std::string, StepTerms> step;  // by profile id
    std::map<std::string, MemoryRules> memory;  // fitted values by profile id (rules come from the profile)
    KernelEfficiencies kernels;
    std::vector<Band> bands;                // leave-one-out bands (evaluate_fidelity)
    std::vector<EvidencePoint> points;      // every priced end-to-end point (evaluate_fidelity)
};

// A set of profiles with their fitted parameters.
struct EngineCatalog {
    std::vector<EngineProfile> profiles;   // ordered by engine, then min_version
    KernelEfficiencies kernels;
    std::string corpus_checksum;           // of the fit loaded ("" when none)
    std::vector<Band> bands;
    std::vector<EvidencePoint> points;
    std::vector<ServingBand> serving_bands;  // of the serving fit (empty: none loaded)
    std::string serving_checksum;            // the serving fit's corpus checksum ("" when none)
};

// The serving fit's file: per profile id its ServingTerms, and the bands.
struct ServingFit {
    std::string corpus_checksum;
    std::int64_t runs = 0;
    std::map<std::string, ServingTerms> terms;  // by profile id
    std::vector<ServingBand> bands;
    // Median |error| per figure over every engine, leave-one-out and leave-one-source-out
    // ("ttft_s" -> {loo, loso}): the gate a test holds the next fit to.
    std::map<std::string, std::pair<double, double>> medians;
};
ServingFit parse_serving_fit(std::string_view json_text, const std::string& source);
std::string serving_fit_json(const ServingFit& fit);
// Puts the fit's terms into the catalog's profiles and its bands into the catalog.
void apply_serving_fit(EngineCatalog& catalog, const ServingFit& fit);
// The band of `figure` for `engine` (its own, else "*"); null when none.
const ServingBand* find_serving_band(const std::vector<ServingBand>& bands, const std::string& engine, const std::string& figure);

// Parses one profile document; throws Error naming the JSON path at fault.
EngineProfile parse_engine_profile(std::string_view json_text, const std::string& source);

// Parses a fitted parameter file; throws Error naming the JSON path at fault.
FittedParameters parse_fitted_parameters(std::string_view json_text, const std::string& source);

// Writes a fitted parameter file (stable key order, so a rerun of the fit gives the same bytes).
std::string fitted_parameters_json(const FittedParameters& p);

// Loads every profile under `profiles_dir` and overlays the fit file when it exists. The serving
// fit (serving-fit.json) is not applied here: it is opt-in (--serving-fit FILE, docs/capacity.md),
// because its terms do not yet improve the held-out serving benchmarks.
EngineCatalog load_engine_catalog(const std::filesystem::path& profiles_dir, const std::filesystem::path& fit_file);

// Applies fitted values to the catalog's profiles (the rules stay the profile's).
void apply_fit(EngineCatalog& catalog, const FittedParameters& fit);

// What `--engine NAME[@VERSION]` resolved to.
struct EngineChoice {
    std::string asked;            // the argument as given ("vllm", "vllm@0.6.3")
    std::string engine;           // "vllm"
    std::string version_asked;    // "0.6.3", or "" for the newest
    const EngineProfile* profile = nullptr;
};

// Resolves NAME[@VERSION] against the catalog: NAME alone is the engine's newest profile; a version
// picks the profile whose range covers it. Throws Error("--engine") for an unknown engine or a
// version no profile covers (naming the ranges there are).
EngineChoice resolve_engine_profile(const EngineCatalog& catalog, std::string_view argument);

}  // namespace quantplan::engine
