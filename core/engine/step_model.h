#pragma once
// The step-time and memory model an engine profile parameterises (docs/fidelity.md).
//
// A decode step at batch B and context L on one GPU costs
//   fixed_step_s + layers x per_layer_s
//   + sum over linear groups of roofline(bytes, FLOP) / f_family(B)     (quantized linears, lm_head)
//   + KV bytes / bandwidth / f_attention(B)
//   + tensor-parallel all-reduce
// and, without a CUDA graph, blended with the host's launch time (StepTerms::eager_host).
// where roofline(bytes, FLOP) = max(bytes / bandwidth, FLOP / peak of the family's matmul type)
// and f is the kernel family's fitted fraction of its roofline at M = B (EfficiencyCurve). The
// kernels run one after another, so their times add, where the `realistic` roofline takes one max
// over the whole step. A prefill chunk of n tokens is priced the same way at M = n.
// The KV budget follows the profile's memory rules (BudgetRule) with fitted terms.
#include <cstdint>
#include <string>

#include "core/engine/engine_profile.h"
#include "core/engine/prefill_chunk.h"
#include "core/hardware/gpu.h"
#include "core/model/model.h"
#include "core/roofline/roofline.h"

namespace quantplan::engine {

// A profile and the kernel curves it prices with, as a plan carries them.
struct EngineSetup {
    EngineChoice choice;          // what was asked (choice.profile is cleared: `profile` is the copy)
    EngineProfile profile;
    KernelEfficiencies kernels;
    std::vector<Band> bands;      // the fit's leave-one-out bands
    std::vector<EvidencePoint> points;  // the fit's priced corpus points (nearest_points)
    std::vector<ServingBand> serving_bands;  // the serving fit's bands (capacity figures)
    std::string corpus_checksum;  // of the fit (empty: profile unfitted)
    bool price_steps = false;     // the plan's step times come from this model (profile "engine")
};

// Resolves `argument` (NAME[@VERSION]) in `catalog` into a setup that owns its profile and curves.
// Throws Error("--engine") as resolve_engine_profile does.
EngineSetup make_engine_setup(const EngineCatalog& catalog, std::string_view argument, bool price_steps);

// The kernel family a scheme's linears run on this GPU: linear_family, with a weight-only scheme
// moved to the generic dequant family when the workload asks for the generic kernel.
KernelFamily weight_kernel_family(const Scheme& scheme, const GpuProfile& gpu, KernelQuality kernel);

// The curve a step's quantized linears are priced from and the M they take it at: the scheme's
// family at the step's rows, except an MoE model's 4-bit weight-only experts under vLLM on a GPU
// (or its architecture) with a measured fused-MoE curve (W4A16Moe: aiconfigurator's vLLM Marlin
// MoE on H100 and H200; Mxfp4Moe for MXFP4 experts such as gpt-oss's: aiconfigurator's vLLM
// triton_kernels MoE there), which take that curve at the rows each expert sees, rows x experts_per_token /
// num_experts (at least 1). `measured_moe` says the MoE curve was taken: its time is the whole
// fused-MoE call, so another family's kernel scale does not apply to it (kernel_scale_fitted_or).
// `all_gpus`: the W4A16 curve over every GPU measured, not the GPU's own, where the GPU's own
// times another kernel than the one that runs: FP4 weights without their own MoE curve (SGLang's
// MXFP4 experts, vLLM's Marlin MXFP4 below sm_90; no FP4 GEMM is measured), and vLLM's dense W4A16 on Hopper (Machete, chosen
// before Marlin by vLLM's choose_mp_linear_kernel; the Hopper curves time Marlin, which SGLang runs).
struct LinearKernel {
    KernelFamily family = KernelFamily::Bf16Gemm;
    std::int64_t rows = 1;
    bool measured_moe = false;
    bool all_gpus = false;
};
LinearKernel linear_kernel(const SchemeCosts& costs, const ModelConfig& model, const GpuProfile& gpu, const EngineSetup& setup, KernelFamily family,
                           std::int64_t rows);
// The curve `kernel` is priced from on `gpu`: the family's over every GPU measured when
// kernel.all_gpus, else find_curve's (this GPU, its architecture, every GPU).
CurveLookup find_linear_curve(const KernelEfficiencies& kernels, const GpuProfile& gpu, const LinearKernel& kernel);

// Seconds for a kernel group of `family` moving `bytes` and doing `flop` at M = rows, in `calls`
// launches, on `curve` (its fitted fraction of the roofline), or on the realistic profile's
// constants when the curve is missing: what every term of the step model is priced with.
double engine_kernel_time_s(double bytes, double flop, std::int64_t rows, KernelFamily family, const GpuProfile& gpu, const CurveLookup& curve,
                            std::int64_t calls = 1);

// A decode step's terms, per GPU.
struct EngineStep {
    DecodeStep roofline;                // bytes and FLOPs as the roofline counts them (times unused)
    double fixed_s = 0;
    double layers_s = 0;
    double linear_s = 0;                // quantized block linears
    double lm_head_s = 0;               // lm_head (or the tied embedding) in bf16
    double attention_s = 0;
    double communication_s = 0;
    double gpu_s = 0;                   // the sum of the terms above
    double host_s = 0;                  // an eager step's host launch time (0 with CUDA graphs)
    double time_s = 0;                  // gpu_s, or eager_step_s(gpu_s, host_s) without a CUDA graph
    std::int64_t graph_batch = 0;       // the captured batch the step was padded to (its batch when eager)
    bool eager = false;                 // ran without a CUDA graph
    KernelFamily family = KernelFamily::Bf16Gemm;
    std::string_view linear_coverage;   // "gpu", "architecture", "other_gpus" or "none" (find_curve's literals)
    std::string_view attention_coverage;
};

// The lookups of one configuration's steps, resolved once: the kernel family, the curves and the
// kernel scales by string key. The capacity simulator prices thousands of steps of one
// configuration (serve::engine_pricing); the step functions without it resolve them per call.
struct StepLookups {
    KernelFamily family = KernelFamily::Bf16Gemm;  // weight_kernel_family
    LinearKernel linear;                           // linear_kernel's choice (rows: linear_rows)
    std::int64_t experts_per_token = 0, num_experts = 0;  // a measured MoE kernel's rows per expert
    CurveLookup linear_curve, head_curve, attention_curve;
    KernelFamily attention_family = KernelFamily::AttentionBf16;
    double decode_scale = 1, decode_linear_scale = 1, prefill_scale = 1, prefill_linear_scale = 1;
    // The largest decode batch the engine replays from a CUDA graph here (cuda_graph_max_batch_for).
    std::int64_t graph_max_batch = 0;
    // The linears' M for a step of `tokens` rows: the tokens, or the rows each expert sees.
    std::int64_t linear_rows(std::int64_t tokens) const;
};
StepLookups resolve_step_lookups(const SchemeCosts& costs, const ModelConfig& model, const GpuProfile& gpu, const EngineSetup& setup,
                                 const Workload& w);

// `costs` as the engine of `profile` serves the model: unchanged, or, for an engine that ignores a
// config's model-wide sliding window (SGLang with Mistral-7B-v0.1:
// EngineDefaults::model_wide_sliding_window), with its sliding layers turned into full-attention
// ones that attend to and cache every token. Where costs are built for an engine (the plan,
// --check, the capacity planner, the fit) they go through it once; the decode step, prefill and
// admission below take costs that already have.
SchemeCosts costs_as_served(SchemeCosts costs, const ModelConfig& model, const EngineProfile& profile);

// Prices one decode step of `costs` at (batch, context) with `setup` on `gpu`.
EngineStep engine_decode_step(const SchemeCosts& costs, const ModelConfig& model, const GpuProfile& gpu, const EngineSetup& setup,
                              const Workload& w, std::int64_t batch, std::int64_t context);
// The same with the lookups resolved already (resolve_step_lookups of the same arguments).
// `query_tokens` above 1 prices a speculative-decoding verify step (roofline verify_step): each
// sequence scores the last accepted token and K speculative ones, every row through the linears
// and the lm_head, its cache read once; vLLM V1 captures its graph by tokens (batch x query_tokens).
EngineStep engine_decode_step(const StepLookups& lookups, const SchemeCosts& costs, const ModelConfig& model, const GpuProfile& gpu,
                              const EngineSetup& setup, const Workload& w, std::int64_t batch, std::int64_t context,
                              std::int64_t query_tokens = 1);

// One engine step that prefills `chunks` (one per sequence) together: the linears run once over
// every chunk's tokens (one GEMM of M = their sum), the lm_head over one row per sequence (only a
// sequence's last token is sampled), and each chunk's attention over its own positions and the KV
// cache before it (its causal FLOPs and the KV bytes it reads). The fixed and per-layer costs are
// the step's. `chunks` is not empty and every chunk has tokens.
PrefillResult engine_prefill_step(const SchemeCosts& costs, const ModelConfig& model, const GpuProfile& gpu, const EngineSetup& setup,
                                  const Workload& w, const std::vector<PrefillChunk>& chunks);
PrefillResult engine_prefill_step(const StepLookups& lookups, const SchemeCosts& costs, const ModelConfig& model, const GpuProfile& gpu,
                                  const EngineSetup& setup, const Workload& w, const std::vector<PrefillChunk>& chunks);

// Time to first token of one prompt of `prompt_tokens` (chunks of max_num_batched_tokens, each a
// step of its own with the fixed and per-layer costs), plus the profile's per-request overhead.
PrefillResult engine_prefill(const SchemeCosts& costs, const ModelConfig& model, const GpuProfile& gpu, const EngineSetup& setup,
                             const Workload& w, std::int64_t prompt_tokens);

// Whether this engine version pages `costs`' cache by layer group (sliding windows holding their
// window, a Mamba state a block): vLLM's hybrid allocator, and before it (V1 below 0.9.1) a
// model-wide window, whose one kind of layer needs no grouping; a model of mixed sliding and full
// layers then caches every token in every layer (V1 unified its specs to full attention).
bool kv_groups_priced(const SchemeCosts& costs, const EngineProfile& profile, std::string_view version);

// The KV-cache budget by the profile's rules. `max_model_len` is the engine's (for V0's profiling
// forward); 0 means the workload's context.
Admission engine_admission(const SchemeCosts& costs, const ModelConfig& model, const GpuProfile& gpu, const EngineSetup& setup,
                           const Workload& w, std::int64_t max_model_len = 0);

// SGLang's default mem_fraction_static for a GPU of `gpu_memory_bytes` at tensor-parallel `tp`
// (the profile's explicit value when it has one).
double sglang_mem_fraction_static(const EngineProfile& profile, std::uint64_t gpu_memory_bytes, std::int64_t tp);

}  // namespace quantplan::engine
