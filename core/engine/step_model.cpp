#include "core/engine/step_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

namespace quantplan::engine {
namespace {

double d(std::uint64_t v) { return static_cast<double>(v); }
double d(std::int64_t v) { return static_cast<double>(v); }

// The rows each expert's GEMM sees when `tokens` tokens pick `experts_per_token` of `num_experts`
// under balanced routing (at least one).
std::int64_t rows_per_expert(std::int64_t tokens, std::int64_t experts_per_token, std::int64_t num_experts) {
    return std::max<std::int64_t>(1, std::llround(d(tokens) * d(experts_per_token) / d(num_experts)));
}

// The realistic profile's constants price what the kernel corpus does not cover (seed 003).
const EfficiencyProfile& fallback_efficiency() {
    static const EfficiencyProfile p = builtin_efficiency_profile("realistic");
    return p;
}

// The ideal profile: the roofline's bytes and FLOPs of a step without its times' efficiencies.
const EfficiencyProfile& ideal_efficiency() {
    static const EfficiencyProfile p = builtin_efficiency_profile("ideal");
    return p;
}

std::uint64_t role_bytes(const CheckpointBudget& b, TensorRole role) {
    for (const RoleBudget& r : b.by_role)
        if (r.role == role) return r.total_bytes();
    return 0;
}

// Seconds for a kernel group of `family` moving `bytes` and doing `flop` at M = rows, in `calls`
// launches, on the curve `found` (StepLookups).
double kernel_time_s(double bytes, double flop, std::int64_t rows, KernelFamily family, const GpuProfile& gpu, const CurveLookup& found,
                     std::int64_t calls = 1) {
    const double peak = matmul_peak_flop_per_s(gpu, family_matmul(family));
    if (found.curve) {
        const double roofline = std::max(bytes / gpu.memory_bandwidth_bytes_per_s, peak > 0 ? flop / peak : 0.0);
        return d(calls) * found.curve->per_call_s + roofline / found.curve->at(std::max<std::int64_t>(rows, 1));
    }
    const EfficiencyProfile& r = fallback_efficiency();
    double rate = peak * r.compute_efficiency_for(family_matmul(family));
    if (family == KernelFamily::W4A16 || family == KernelFamily::W8A16) rate *= r.fused_kernel_efficiency;
    if (family == KernelFamily::GenericDequant) rate *= r.generic_kernel_efficiency;
    return std::max(bytes / (gpu.memory_bandwidth_bytes_per_s * r.bandwidth_efficiency), rate > 0 ? flop / rate : 0.0);
}

// A budget in bytes from a difference computed in doubles, kept inside int64 (the terms are each
// below 2^63; their difference can leave it only for absurd inputs).
std::int64_t clamped_budget(double bytes) { return static_cast<std::int64_t>(std::clamp(bytes, -9.0e18, 9.0e18)); }

KernelFamily attention_family(const KvFormat& kv) {
    return dtype_bits(kv.quant.storage) <= 8 ? KernelFamily::AttentionFp8 : KernelFamily::AttentionBf16;
}

// Bytes and FLOPs of the lm_head (or the tied embedding read as one) per GPU for `rows` tokens.
struct HeadCost {
    double bytes = 0;
    double flop = 0;
};
HeadCost lm_head_cost(const SchemeCosts& c, const ModelConfig& m, std::int64_t rows, std::int64_t tp) {
    const std::uint64_t head = m.tie_word_embeddings ? role_bytes(c.budget, TensorRole::Embedding) : role_bytes(c.budget, TensorRole::LmHead);
    return {d(head) / d(tp), 2.0 * d(rows) * d(m.vocab_size) * d(m.hidden_size) / d(tp)};
}

}  // namespace

double engine_kernel_time_s(double bytes, double flop, std::int64_t rows, KernelFamily family, const GpuProfile& gpu, const CurveLookup& curve,
                            std::int64_t calls) {
    return kernel_time_s(bytes, flop, rows, family, gpu, curve, calls);
}

KernelFamily weight_kernel_family(const Scheme& scheme, const GpuProfile& gpu, KernelQuality kernel) {
    const KernelFamily f = linear_family(scheme, matmul_peak_flop_per_s(gpu, scheme.matmul_type()) > 0);
    return (f == KernelFamily::W4A16 || f == KernelFamily::W8A16) && kernel == KernelQuality::Generic ? KernelFamily::GenericDequant : f;
}

LinearKernel linear_kernel(const SchemeCosts& c, const ModelConfig& m, const GpuProfile& gpu, const EngineSetup& setup, KernelFamily family,
                           std::int64_t rows) {
    // vLLM's own kernel only: the curve is vLLM's Marlin MoE, and SGLang's GPTQ MoE path is not
    // known to be it (its 4bit-moe scale, fitted on H20 points, stays on the dense curve).
    // Integer 4-bit weights only: FP4 experts (gpt-oss's MXFP4) run triton_kernels on Hopper.
    if (family == KernelFamily::W4A16 && c.scheme.weights.storage != DType::Fp4E2M1 && c.num_experts > 0 && m.experts_per_token > 0 &&
        setup.profile.engine == "vllm") {
        const CurveLookup moe = find_curve(setup.kernels, gpu.id, gpu.compute_capability, KernelFamily::W4A16Moe);
        if (moe.curve && (moe.coverage == "gpu" || moe.coverage == "architecture")) {
            return {KernelFamily::W4A16Moe, rows_per_expert(rows, m.experts_per_token, c.num_experts), true};
        }
    }
    if (family != KernelFamily::W4A16) return {family, rows, false, false};
    // MXFP4 experts (gpt-oss) under vLLM: its fused MXFP4 MoE where a curve of this GPU or its
    // architecture times it (aiconfigurator's vLLM triton_kernels MoE on H100 and H200; vLLM
    // runs it on sm_90 from 0.10.1 unless FlashInfer's is asked for), at the rows each expert sees.
    const bool mxfp4 = c.scheme.weights.storage == DType::Fp4E2M1 && c.scheme.weights.scale && c.scheme.weights.scale->dtype == DType::Fp8E8M0;
    if (mxfp4 && c.num_experts > 0 && m.experts_per_token > 0 && setup.profile.engine == "vllm") {
        const CurveLookup moe = find_curve(setup.kernels, gpu.id, gpu.compute_capability, KernelFamily::Mxfp4Moe);
        if (moe.curve && (moe.coverage == "gpu" || moe.coverage == "architecture"))
            return {KernelFamily::Mxfp4Moe, rows_per_expert(rows, m.experts_per_token, c.num_experts), true};
    }
    // Other FP4 weights: no FP4 kernel is measured anywhere.
    if (c.scheme.weights.storage == DType::Fp4E2M1) return {family, rows, false, true};
    // vLLM runs dense W4A16 on Hopper with Machete where it can (choose_mp_linear_kernel tries
    // MacheteLinearKernel before MarlinLinearKernel; Machete needs sm_90), which no source times:
    // not the Hopper GPUs' Marlin curve, then, unless a calibration file measured this GPU (its
    // curve times what runs here).
    if (setup.profile.engine != "vllm" || gpu.compute_capability != "sm_90") return {family, rows, false, false};
    if (!setup.kernels.calibrated) return {family, rows, false, true};
    const CurveLookup own = find_curve(setup.kernels, gpu.id, gpu.compute_capability, family);
    return {family, rows, false, !(own.curve && own.curve->calibrated)};
}

CurveLookup find_linear_curve(const KernelEfficiencies& kernels, const GpuProfile& gpu, const LinearKernel& kernel) {
    return kernel.all_gpus ? find_all_gpus_curve(kernels, kernel.family) : find_curve(kernels, gpu.id, gpu.compute_capability, kernel.family);
}

SchemeCosts costs_as_served(SchemeCosts c, const ModelConfig& m, const EngineProfile& p) {
    if (p.defaults.model_wide_sliding_window || !m.sliding_window_model_wide || c.sliding_layers == 0) return c;
    // kv_bytes_per_token and the attention FLOPs already count every layer; only the sliding
    // share and the grouping go.
    c.full_layers += c.sliding_layers;
    c.sliding_layers = 0;
    c.sliding_window = 0;
    c.sliding_kv_bytes_per_token = 0;
    c.sliding_attention_flop_per_token_per_context = 0;
    return c;
}

EngineSetup make_engine_setup(const EngineCatalog& catalog, std::string_view argument, bool price_steps) {
    EngineSetup s;
    s.choice = resolve_engine_profile(catalog, argument);
    s.profile = *s.choice.profile;
    s.choice.profile = nullptr;
    s.kernels = catalog.kernels;
    s.bands = catalog.bands;
    s.points = catalog.points;
    s.serving_bands = catalog.serving_bands;
    s.corpus_checksum = catalog.corpus_checksum;
    s.price_steps = price_steps;
    return s;
}

StepLookups resolve_step_lookups(const SchemeCosts& c, const ModelConfig& m, const GpuProfile& gpu, const EngineSetup& setup, const Workload& w) {
    StepLookups k;
    k.family = weight_kernel_family(c.scheme, gpu, w.kernel);
    // linear_kernel's choice does not depend on the rows; a measured MoE kernel's rows are the
    // tokens each expert sees.
    k.linear = linear_kernel(c, m, gpu, setup, k.family, 1);
    if (k.linear.measured_moe) k.experts_per_token = m.experts_per_token, k.num_experts = c.num_experts;
    k.linear_curve = find_linear_curve(setup.kernels, gpu, k.linear);
    k.head_curve = find_curve(setup.kernels, gpu.id, gpu.compute_capability, KernelFamily::Bf16Gemm);
    k.attention_family = attention_family(c.kv);
    k.attention_curve = find_curve(setup.kernels, gpu.id, gpu.compute_capability, k.attention_family);
    // The profile's end-to-end kernel scales for this scheme family (1 when not fitted).
    const std::string key = kernel_scale_key(c.scheme, c.num_experts > 0, k.family == KernelFamily::GenericDequant);
    k.decode_scale = setup.profile.step.kernel_scale(key);
    k.decode_linear_scale = k.linear.measured_moe ? setup.profile.step.kernel_scale_fitted_or(key, 1.0) : k.decode_scale;
    k.prefill_scale = setup.profile.step.kernel_scale(key + "/prefill");
    k.prefill_linear_scale = k.linear.measured_moe ? setup.profile.step.kernel_scale_fitted_or(key + "/prefill", 1.0) : k.prefill_scale;
    k.graph_max_batch = engine::cuda_graph_max_batch_for(setup.profile.defaults, gpu.memory_usable_bytes, w.tensor_parallel,
                                                         setup.choice.version_asked, w.engine.max_num_batched_tokens);
    return k;
}

std::int64_t StepLookups::linear_rows(std::int64_t tokens) const {
    return linear.measured_moe ? rows_per_expert(tokens, experts_per_token, num_experts) : tokens;
}

EngineStep engine_decode_step(const SchemeCosts& c, const ModelConfig& m, const GpuProfile& gpu, const EngineSetup& setup,
                              const Workload& w, std::int64_t batch, std::int64_t context) {
    return engine_decode_step(resolve_step_lookups(c, m, gpu, setup, w), c, m, gpu, setup, w, batch, context);
}

EngineStep engine_decode_step(const StepLookups& k, const SchemeCosts& c, const ModelConfig& m, const GpuProfile& gpu, const EngineSetup& setup,
                              const Workload& w, std::int64_t batch, std::int64_t context, std::int64_t query_tokens) {
    assert(batch > 0 && context > 0 && query_tokens > 0);
    EngineStep s;
    s.roofline = verify_step(c, gpu, ideal_efficiency(), w, batch, query_tokens, context);
    const std::int64_t tp = w.tensor_parallel;
    const std::int64_t rows = batch * query_tokens;  // every query token is sampled (a verify step scores each)
    const HeadCost head = lm_head_cost(c, m, rows, tp);
    s.family = k.family;
    // A batch the engine captured runs at the next captured size (the padding rows go through the
    // linears); a larger one runs eager (vLLM V1 above min(2 x max_num_seqs, 512) tokens, V0 above
    // 256 sequences, SGLang above its cuda_graph_max_bs: docs/engine-sources-load.md).
    const EngineDefaults& defaults = setup.profile.defaults;
    // A verify step's graph is captured by tokens under vLLM V1 (batch x query tokens rows) and
    // by sequences under SGLang and vLLM V0 (docs/speculative-sources.md).
    const std::int64_t graph_units = defaults.cuda_graph_sizes_in_tokens ? rows : batch;
    const bool graphs = engine::decode_uses_cuda_graphs(defaults, context) && graph_units <= k.graph_max_batch;
    s.graph_batch = graphs ? engine::cuda_graph_padded_batch(defaults, graph_units, k.graph_max_batch) : graph_units;
    s.eager = !graphs;
    const double padding = d(s.graph_batch) / d(graph_units);
    const double linear_bytes = std::max(0.0, d(s.roofline.weight_bytes) - head.bytes) + d(s.roofline.activation_bytes) * padding;
    const double linear_flop = std::max(0.0, s.roofline.linear_flop - head.flop) * padding;
    const std::int64_t padded_rows = std::max<std::int64_t>(1, std::llround(d(rows) * padding));
    s.linear_s = kernel_time_s(linear_bytes, linear_flop, k.linear_rows(padded_rows), k.linear.family, gpu, k.linear_curve);
    s.linear_coverage = k.linear_curve.coverage;
    s.lm_head_s = kernel_time_s(head.bytes, head.flop, rows, KernelFamily::Bf16Gemm, gpu, k.head_curve);
    s.attention_s = kernel_time_s(d(s.roofline.kv_bytes), s.roofline.attention_flop, batch, k.attention_family, gpu, k.attention_curve,
                                  m.token_mixer_layers());
    s.attention_coverage = k.attention_curve.coverage;
    s.communication_s = s.roofline.communication_time_s;
    s.linear_s *= k.decode_linear_scale;
    s.lm_head_s *= k.decode_scale;
    s.attention_s *= k.decode_scale;
    s.fixed_s = setup.profile.step.fixed_step_s;
    const StepTerms& terms = setup.profile.step;
    s.layers_s = d(m.per_layer_cost_layers()) * (terms.per_layer_s + (graphs ? 0.0 : terms.eager_per_layer_s));
    s.gpu_s = s.fixed_s + s.layers_s + s.linear_s + s.lm_head_s + s.attention_s + s.communication_s;
    s.time_s = s.gpu_s;
    if (!graphs)
        if (const EagerHostCost* host = terms.eager_host_for(setup.choice.version_asked)) {
            s.host_s = d(m.per_layer_cost_layers()) * host->per_layer_s;
            s.time_s = eager_step_s(s.gpu_s, s.host_s, terms.eager_blend_exponent);
        }
    return s;
}

PrefillResult engine_prefill_step(const SchemeCosts& c, const ModelConfig& m, const GpuProfile& gpu, const EngineSetup& setup,
                                  const Workload& w, const std::vector<PrefillChunk>& chunks) {
    return engine_prefill_step(resolve_step_lookups(c, m, gpu, setup, w), c, m, gpu, setup, w, chunks);
}

PrefillResult engine_prefill_step(const StepLookups& k, const SchemeCosts& c, const ModelConfig& m, const GpuProfile& gpu, const EngineSetup& setup,
                                  const Workload& w, const std::vector<PrefillChunk>& chunks) {
    assert(!chunks.empty());
    PrefillResult r;
    std::int64_t n = 0, context = 1;
    double attention_flop = 0, kv_bytes = 0;
    const std::int64_t tp = w.tensor_parallel;
    for (const PrefillChunk& k : chunks) {
        assert(k.tokens > 0 && k.start_tokens >= 0);
        n += k.tokens;
        context = std::max(context, k.start_tokens + k.tokens);
        attention_flop += prefill_attention_flop(c, k.start_tokens, k.tokens) / d(tp);
        kv_bytes += kv_read_bytes_per_sequence(c, tp, k.start_tokens + k.tokens);
    }
    r.prompt_tokens = n;
    r.chunk_tokens = n;
    r.chunks = 1;
    // The roofline's bytes and FLOPs of the step's linears: a decode step of n rows prices the
    // weights once and n tokens' linears (its attention terms are not used).
    const DecodeStep rows = decode_step(c, gpu, ideal_efficiency(), w, n, context);
    const HeadCost head = lm_head_cost(c, m, static_cast<std::int64_t>(chunks.size()), tp);  // one sampled row per sequence
    const HeadCost all_rows = lm_head_cost(c, m, n, tp);
    const double linear_bytes = std::max(0.0, d(rows.weight_bytes) - head.bytes) + d(rows.activation_bytes);
    const double linear_flop = std::max(0.0, rows.linear_flop - all_rows.flop);
    const double linear_s = kernel_time_s(linear_bytes, linear_flop, k.linear_rows(n), k.linear.family, gpu, k.linear_curve);
    const double head_s = kernel_time_s(head.bytes, head.flop, static_cast<std::int64_t>(chunks.size()), KernelFamily::Bf16Gemm, gpu, k.head_curve);
    // Prefill attention is priced as dense attention at the bf16 GEMM curve.
    const double attention_s = kernel_time_s(kv_bytes, attention_flop, n, KernelFamily::Bf16Gemm, gpu, k.head_curve);
    const double scaled_kernels = k.prefill_linear_scale * linear_s + k.prefill_scale * (head_s + attention_s);
    r.time_s = setup.profile.step.fixed_step_s + d(m.per_layer_cost_layers()) * setup.profile.step.per_layer_s + scaled_kernels +
               tp_allreduce_time_s(c, d(n), w, gpu) +
               (w.data_parallel > 1 ? moe_all_to_all(c, gpu, w, n).time_s : 0.0);
    r.flop = linear_flop + attention_flop + head.flop;
    r.bytes = static_cast<std::uint64_t>(linear_bytes + head.bytes + kv_bytes);
    r.bound = linear_flop / std::max(1.0, matmul_peak_flop_per_s(gpu, c.matmul)) > linear_bytes / gpu.memory_bandwidth_bytes_per_s
                  ? Bound::Compute
                  : Bound::Memory;
    return r;
}

PrefillResult engine_prefill(const SchemeCosts& c, const ModelConfig& m, const GpuProfile& gpu, const EngineSetup& setup,
                             const Workload& w, std::int64_t prompt_tokens) {
    assert(prompt_tokens > 0);
    PrefillResult r;
    r.prompt_tokens = prompt_tokens;
    // A chunk of at least one token (a zero from a malformed corpus record would never end).
    r.chunk_tokens = std::max<std::int64_t>(1, std::min(prompt_tokens, w.engine.max_num_batched_tokens));
    std::vector<PrefillChunk> chunk(1);
    for (std::int64_t start = 0; start < prompt_tokens; start += r.chunk_tokens) {
        chunk[0] = {start, std::min(r.chunk_tokens, prompt_tokens - start)};
        const PrefillResult step = engine_prefill_step(c, m, gpu, setup, w, chunk);
        r.flop += step.flop;
        r.bytes += step.bytes;
        r.time_s += step.time_s;
        r.bound = step.bound;
        ++r.chunks;
    }
    r.time_s += setup.profile.step.ttft_overhead_s;
    return r;
}

double sglang_mem_fraction_static(const EngineProfile& p, std::uint64_t memory, std::int64_t tp) {
    const EngineDefaults& d = p.defaults;
    if (d.mem_fraction_static > 0) return d.mem_fraction_static;
    const double mem = static_cast<double>(memory);
    if (!d.reserve_tiers.empty()) {
        for (const EngineDefaults::ReserveTier& t : d.reserve_tiers)
            if (memory < t.below_bytes || &t == &d.reserve_tiers.back()) {
                const double reserve = std::max(static_cast<double>(t.base_bytes + t.per_tp_bytes * static_cast<std::uint64_t>(tp)),
                                                static_cast<double>(t.min_bytes));
                if (!(mem > reserve)) return 0.0;  // a GPU smaller than its tier's reserve: no KV pool
                return std::round((mem - reserve) / mem * 1000.0) / 1000.0;  // server_args rounds to 3 places
            }
    }
    if (d.by_tp_max_memory_bytes == 0 || memory <= d.by_tp_max_memory_bytes) {
        for (const auto& [min_tp, fraction] : d.mem_fraction_static_by_tp)
            if (tp >= min_tp) return fraction;
    }
    if (d.above_reserve_bytes > 0 && mem > static_cast<double>(d.above_reserve_bytes)) return (mem - static_cast<double>(d.above_reserve_bytes)) / mem;
    return 0.88;
}

bool kv_groups_priced(const SchemeCosts& c, const EngineProfile& p, std::string_view version) {
    if (!has_hybrid_kv_groups(c) || p.engine != "vllm" || p.defaults.hybrid_allocator_from_version.empty()) return false;
    return hybrid_allocator_at(p.defaults, version) || (c.full_layers == 0 && c.state_layers == 0);
}

Admission engine_admission(const SchemeCosts& c, const ModelConfig& m, const GpuProfile& gpu, const EngineSetup& setup,
                           const Workload& w, std::int64_t max_model_len) {
    const EngineProfile& p = setup.profile;
    Admission a;
    const std::int64_t tp = w.tensor_parallel;
    if (max_model_len <= 0) max_model_len = w.context_tokens;
    a.usable_memory_bytes = gpu.memory_usable_bytes;
    a.weight_bytes = resident_weight_bytes_per_gpu(c, w) + w.engine.draft_weight_bytes_per_gpu;
    a.runtime_overhead_bytes = p.memory.non_torch_bytes + static_cast<std::uint64_t>(tp - 1) * p.memory.non_torch_bytes_per_extra_rank;
    if (p.memory.cuda_graph_counted && p.defaults.cuda_graphs) a.runtime_overhead_bytes += p.memory.cuda_graph_bytes;
    std::int64_t budget = 0;
    std::string too_big;  // kv_cache_memory_bytes past the GPU's memory: priced as asked, then refused
    if (p.memory.rule == BudgetRule::UtilizationOfTotal) {
        a.gpu_memory_utilization = std::clamp(w.engine.gpu_memory_utilization, 0.0, 1.0);
        a.engine_memory_bytes = static_cast<std::uint64_t>(a.gpu_memory_utilization * d(gpu.memory_usable_bytes));
        std::int64_t profiled_tokens = w.engine.max_num_batched_tokens;
        if (p.memory.profile_covers_max_model_len_without_chunking && !p.defaults.chunked_prefill)
            profiled_tokens = std::max(profiled_tokens, max_model_len);
        a.activation_workspace_bytes = static_cast<std::uint64_t>(
            std::clamp(p.memory.activation_scale * d(profiled_tokens) * profile_activation_bytes_per_token(c, m, tp), 0.0, 9.0e18));
        if (p.memory.sampler_in_profile) {
            const double logits = static_cast<double>(w.engine.max_num_seqs) * static_cast<double>(m.vocab_size);
            if (native_sampler_in_profile(p.memory, setup.choice.version_asked)) {
                // The forward's activations are freed before the sampler runs: the peak is the larger.
                const double sampler = std::clamp(p.memory.native_sampler_bytes_per_logit * logits, 0.0, 9.0e18);
                a.sampler_workspace_bytes = static_cast<std::uint64_t>(std::max(0.0, sampler - d(a.activation_workspace_bytes)));
            } else {
                a.sampler_workspace_bytes = static_cast<std::uint64_t>(logits * 4);
            }
        }
        budget = clamped_budget(d(a.engine_memory_bytes) - d(a.weight_bytes) -
                                d(a.activation_workspace_bytes) - d(a.sampler_workspace_bytes) - d(a.runtime_overhead_bytes));
        if (w.engine.kv_cache_memory_bytes > 0) {
            // --kv-cache-memory-bytes: the cache is the size asked, whatever the utilization leaves;
            // the engine allocates it beside the weights, so a size past the GPU's memory fails at
            // start (a CUDA out-of-memory), which is what the admission says.
            budget = clamped_budget(d(w.engine.kv_cache_memory_bytes));
            const double need = d(a.weight_bytes) + d(a.activation_workspace_bytes) + d(a.sampler_workspace_bytes) + d(a.runtime_overhead_bytes) +
                                d(w.engine.kv_cache_memory_bytes);
            if (need > d(gpu.memory_usable_bytes)) {
                const double gib = 1024.0 * 1024.0 * 1024.0;
                char why[200];
                std::snprintf(why, sizeof why, "kv_cache_memory_bytes %.2f GiB with %.2f GiB of weights and %.2f GiB of workspace is more than the GPU's %.2f GiB",
                              d(w.engine.kv_cache_memory_bytes) / gib, d(a.weight_bytes) / gib,
                              (d(a.activation_workspace_bytes) + d(a.sampler_workspace_bytes) + d(a.runtime_overhead_bytes)) / gib,
                              d(gpu.memory_usable_bytes) / gib);
                too_big = why;
            }
        }
    } else {
        const double fraction = std::clamp(sglang_mem_fraction_static(p, gpu.memory_usable_bytes, tp), 0.0, 1.0);
        a.gpu_memory_utilization = fraction;
        a.engine_memory_bytes = static_cast<std::uint64_t>(fraction * d(gpu.memory_usable_bytes));
        budget = clamped_budget(d(a.engine_memory_bytes) - d(a.weight_bytes) - d(a.runtime_overhead_bytes));
    }
    a.budget_bytes = budget;
    a.kv_bytes_per_token = kv_bytes_per_token_per_gpu(c, tp) + w.engine.draft_kv_bytes_per_token_per_gpu;
    const double gib = 1024.0 * 1024.0 * 1024.0;
    char buf[160];
    if (budget <= 0) {
        std::snprintf(buf, sizeof buf, "weights need %.2f GiB per GPU but the %s leaves %.2f GiB for weights and KV cache",
                      d(a.weight_bytes) / gib, p.title.c_str(),
                      (d(a.engine_memory_bytes) - d(a.activation_workspace_bytes + a.sampler_workspace_bytes + a.runtime_overhead_bytes)) / gib);
        a.reason = buf;
        return a;
    }
    // vLLM pages an MLA cache in blocks of 64 (kv_block_tokens_for); SGLang keeps its own page size.
    const std::int64_t block = p.engine == "vllm" ? kv_block_tokens_for(c, p.defaults.block_size_tokens)
                                                  : std::max<std::int64_t>(p.defaults.block_size_tokens, 1);
    divide_kv_budget(a, c, block, w.context_tokens + w.engine.lookahead_tokens, w.engine.max_num_batched_tokens,
                     kv_groups_priced(c, p, setup.choice.version_asked), tp);
    a.fits = a.max_sequences >= 1 && too_big.empty();
    if (!too_big.empty()) {
        a.reason = too_big;  // the blocks and tokens above are what the size asked would hold
    } else if (!a.fits) {
        std::snprintf(buf, sizeof buf, "one sequence of %lld tokens needs %.2f GiB of KV cache but the budget is %.2f GiB",
                      static_cast<long long>(w.context_tokens), d(a.kv_bytes_per_token) * d(w.context_tokens) / gib, d(budget) / gib);
        a.reason = buf;
    }
    return a;
}

}  // namespace quantplan::engine
