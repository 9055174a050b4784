#include "core/roofline/roofline.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/base/error.h"
#include "core/checkpoint/quant_config.h"

namespace quantplan {
namespace {

double d(std::uint64_t v) { return static_cast<double>(v); }
double d(std::int64_t v) { return static_cast<double>(v); }
std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::uint64_t role_bytes(const CheckpointBudget& b, TensorRole role) {
    for (const RoleBudget& r : b.by_role)
        if (r.role == role) return r.total_bytes();
    return 0;
}

// Effective rate of the linears: peak x compute efficiency x (weight-only kernel factor).
double linear_rate_flop_per_s(const SchemeCosts& c, const GpuProfile& gpu, const EfficiencyProfile& eff, KernelQuality k) {
    double rate = matmul_peak_flop_per_s(gpu, c.matmul) * eff.compute_efficiency_for(c.matmul);
    if (c.weight_only_path) rate *= (k == KernelQuality::Fused ? eff.fused_kernel_efficiency : eff.generic_kernel_efficiency);
    return rate;
}

// MXFP4 experts with MXFP8 activations (Workload::mxfp4_mxfp8 on a capable GPU): their matmuls at
// the FP8 rate, no weight-only kernel factor.
bool native_mxfp4(const SchemeCosts& c, const Workload& w) { return w.mxfp4_mxfp8 && c.mxfp4_native_capable && c.expert_flop_per_assignment > 0; }
double native_mxfp4_rate_flop_per_s(const GpuProfile& gpu, const EfficiencyProfile& eff) {
    return matmul_peak_flop_per_s(gpu, MatmulType::Fp8) * eff.compute_efficiency_for(MatmulType::Fp8);
}

// Seconds of `linear_flop` linear FLOPs of which `expert_flop` are routed experts' (the same
// rate for both but under native MXFP4).
double linear_time_s(const SchemeCosts& c, const GpuProfile& gpu, const EfficiencyProfile& eff, const Workload& w, double linear_flop,
                     double expert_flop) {
    if (!native_mxfp4(c, w)) return linear_flop / linear_rate_flop_per_s(c, gpu, eff, w.kernel);
    return (linear_flop - expert_flop) / linear_rate_flop_per_s(c, gpu, eff, w.kernel) + expert_flop / native_mxfp4_rate_flop_per_s(gpu, eff);
}

// Attention runs on bf16 tensor cores whatever the cache format: the cache is dequantized on
// the way in (kernels.md (d): no direct fp8 -> bf16 instruction, fused into attention).
double attention_rate_flop_per_s(const GpuProfile& gpu, const EfficiencyProfile& eff) {
    return matmul_peak_flop_per_s(gpu, MatmulType::Bf16) * eff.compute_efficiency_for(MatmulType::Bf16);
}

double bandwidth(const GpuProfile& gpu, const EfficiencyProfile& eff) {
    return gpu.memory_bandwidth_bytes_per_s * eff.bandwidth_efficiency;
}

// Affine pieces of a dense scheme's step time in B at fixed L: memory m0 + m1 B, compute c1 B, comm k B.
struct Pieces {
    double m0, m1, c1, k, k0;  // k0: the all-reduces' latency, paid once a step
    double at(double batch) const { return std::max(m0 + m1 * batch, c1 * batch) + k * batch + k0; }
};

Pieces pieces(const SchemeCosts& c, const GpuProfile& gpu, const EfficiencyProfile& eff, const Workload& w) {
    const double tp = d(w.tensor_parallel);
    const double bw = bandwidth(gpu, eff);
    const double per_b_bytes = d(c.embedding_row_bytes) / tp + kv_read_bytes_per_sequence(c, w.tensor_parallel, w.context_tokens) +
                               d(c.activation_bytes_per_token);
    Pieces p{};
    p.m0 = (d(c.streamed_weight_bytes) + d(c.kv_fixed_bytes)) / tp / bw;
    p.m1 = per_b_bytes / bw;
    p.c1 = linear_time_s(c, gpu, eff, w, c.linear_flop_per_token / tp, d(c.experts_per_token) * c.expert_flop_per_assignment / tp) +
           attention_flop_per_token(c, w.context_tokens) / tp / attention_rate_flop_per_s(gpu, eff);
    p.k0 = tp_allreduce_time_s(c, 0.0, w, gpu);
    p.k = tp_allreduce_time_s(c, 1.0, w, gpu) - p.k0;
    return p;
}

}  // namespace

std::uint64_t kv_bytes_per_token_per_gpu(const SchemeCosts& c, std::int64_t tp) {
    const std::int64_t heads = std::max<std::int64_t>(c.kv_split_heads, 1);
    const std::int64_t ranks = std::max<std::int64_t>(tp, 1);
    // kv_bytes_per_token is a whole number of bytes per head: exact. A rank holds ceil(heads / tp)
    // heads, one replicated head when tp exceeds the KV heads (vLLM: max(1, heads // tp)).
    return c.kv_bytes_per_token / static_cast<std::uint64_t>(heads) * static_cast<std::uint64_t>(cdiv(heads, ranks));
}

std::uint64_t RecurrentState::bytes_per_layer(std::int64_t tp) const {
    if (layers == 0) return 0;
    const std::int64_t ranks = std::max<std::int64_t>(tp, 1);
    const std::int64_t widened = groups + (groups == 0 || groups % ranks == 0 ? 0 : ranks - groups);
    const std::int64_t conv = (conv_kernel - 1) * cdiv(conv_fixed_channels + 2 * widened * group_channels, ranks);
    const std::int64_t recurrent = cdiv(heads, ranks) * values_per_head;
    return static_cast<std::uint64_t>(conv) * dtype_bytes + static_cast<std::uint64_t>(recurrent) * recurrent_dtype_bytes;
}

std::uint64_t state_bytes_per_sequence_per_gpu(const SchemeCosts& c, std::int64_t tp) {
    return c.mamba.bytes_per_layer(tp) * static_cast<std::uint64_t>(c.mamba.layers) +
           c.gdn.bytes_per_layer(tp) * static_cast<std::uint64_t>(c.gdn.layers);
}

std::uint64_t state_page_bytes(const SchemeCosts& c, std::int64_t tp) {
    return std::max(c.mamba.bytes_per_layer(tp), c.gdn.bytes_per_layer(tp));
}

std::int64_t mamba_aligned_block_tokens(const SchemeCosts& c, std::int64_t configured, std::int64_t tp) {
    const std::int64_t attention_layers = c.sliding_layers + c.full_layers;
    if (c.state_layers == 0 || attention_layers == 0) return configured;
    const std::uint64_t per_token_layer = kv_bytes_per_token_per_gpu(c, tp) / static_cast<std::uint64_t>(attention_layers);
    if (per_token_layer == 0) return configured;
    const auto state = static_cast<std::int64_t>(state_page_bytes(c, tp));
    const std::int64_t aligned = 16 * cdiv(state, 16 * static_cast<std::int64_t>(per_token_layer));
    return std::max(configured, aligned);
}

std::vector<CacheLayerType> cache_by_layer_type(const SchemeCosts& c, std::uint64_t per_gpu, std::uint64_t state_per_sequence) {
    const std::int64_t layers = c.sliding_layers + c.full_layers;
    std::vector<CacheLayerType> out;
    if (c.mla) {
        out.push_back({"mla_latent", layers, per_gpu, 0});
    } else if (c.chunked_layers > 0) {
        const std::uint64_t per_layer = per_gpu / static_cast<std::uint64_t>(std::max<std::int64_t>(layers, 1));
        const std::int64_t global = c.full_layers - c.chunked_layers;
        if (global > 0) out.push_back({"full_attention", global, per_layer * static_cast<std::uint64_t>(global), 0});
        CacheLayerType chunked{"chunked_attention", c.chunked_layers, per_layer * static_cast<std::uint64_t>(c.chunked_layers), 0};
        chunked.chunk = c.attention_chunk_size;
        out.push_back(chunked);
    } else if (c.sliding_layers == 0) {
        out.push_back({"full_attention", c.full_layers, per_gpu, 0});
    } else {
        const std::uint64_t per_layer = per_gpu / static_cast<std::uint64_t>(std::max<std::int64_t>(layers, 1));
        if (c.full_layers > 0) out.push_back({"full_attention", c.full_layers, per_layer * static_cast<std::uint64_t>(c.full_layers), 0});
        out.push_back({"sliding_attention", c.sliding_layers, per_layer * static_cast<std::uint64_t>(c.sliding_layers), c.sliding_window});
    }
    if (c.state_layers > 0) out.push_back({c.gdn.layers > 0 ? "linear_attention_state" : "mamba_state", c.state_layers, 0, 0, state_per_sequence});
    return out;
}

std::string cache_layout_text(const std::vector<CacheLayerType>& types) {
    std::string out;
    for (const CacheLayerType& t : types) {
        if (!out.empty()) out += " + ";
        out += std::to_string(t.layers) + " " + t.type;
        if (t.window > 0) out += " (window " + std::to_string(t.window) + ")";
        if (t.chunk > 0) out += " (chunk " + std::to_string(t.chunk) + ", cached whole)";
        if (t.bytes_per_sequence > 0) {
            char buf[48];
            std::snprintf(buf, sizeof buf, " (%.1f MiB per sequence)", d(t.bytes_per_sequence) / (1024.0 * 1024.0));
            out += buf;
        }
    }
    return out;
}

std::uint64_t resident_weight_bytes_per_gpu(const SchemeCosts& c, const Workload& w) {
    // Everything but the routed experts is split over one engine's TP GPUs (replicated per
    // data-parallel engine); the experts over the EP GPUs as whole experts, else sliced over TP.
    const auto tp = static_cast<std::uint64_t>(std::max<std::int64_t>(w.tensor_parallel, 1));
    const bool whole = w.expert_parallel > 1;
    const auto expert_ranks = whole ? static_cast<std::uint64_t>(w.expert_parallel) : tp;
    double experts = d(c.routed_expert_bytes) / d(expert_ranks);
    if (c.expert_width_pad > 0) {
        // vLLM's MXFP4 padding of each rank's expert width and of the hidden size.
        const auto round_up = [](std::int64_t v, std::int64_t to) { return to > 0 ? cdiv(v, to) * to : v; };
        const std::int64_t width = whole ? c.expert_width : cdiv(c.expert_width, static_cast<std::int64_t>(tp));
        experts *= d(round_up(width, c.expert_width_pad)) / d(width) * d(round_up(c.hidden_size, c.expert_hidden_pad)) / d(c.hidden_size);
    }
    return (c.resident_weight_bytes - c.routed_expert_bytes) / tp + static_cast<std::uint64_t>(experts);
}

std::int64_t kv_block_tokens_for(const SchemeCosts& c, std::int64_t configured) {
    const std::int64_t block = std::max<std::int64_t>(configured, 1);
    return c.mla && block % 64 != 0 ? 64 : block;
}

double kv_read_bytes_per_sequence(const SchemeCosts& c, std::int64_t tp, std::int64_t context) {
    const double per_token = d(kv_bytes_per_token_per_gpu(c, tp));
    // Mamba layers read their state and write it back once a step.
    const double state = 2.0 * d(state_bytes_per_sequence_per_gpu(c, tp));
    if ((c.sliding_kv_bytes_per_token == 0 && c.chunked_kv_bytes_per_token == 0) || c.kv_bytes_per_token == 0) return d(context) * per_token + state;
    const double sliding_share = d(c.sliding_kv_bytes_per_token) / d(c.kv_bytes_per_token);
    const double chunked_share = d(c.chunked_kv_bytes_per_token) / d(c.kv_bytes_per_token);
    return per_token * ((1.0 - sliding_share - chunked_share) * d(context) + sliding_share * d(std::min(context, c.sliding_window)) +
                        chunked_share * d(chunk_tokens(context, c.attention_chunk_size))) +
           state;
}

double attention_flop_per_token(const SchemeCosts& c, std::int64_t context) {
    const double sliding = c.sliding_attention_flop_per_token_per_context;
    const double chunked = c.chunked_attention_flop_per_token_per_context;
    return (c.attention_flop_per_token_per_context - sliding - chunked) * d(context) + sliding * d(std::min(context, c.sliding_window)) +
           chunked * d(chunk_tokens(context, c.attention_chunk_size)) + c.state_flop_per_token;
}

namespace {
// Sum over positions p = a + 1 .. a + n of min(p, w).
double sum_min_positions(std::int64_t a, std::int64_t n, std::int64_t w) {
    const auto upto = [w](std::int64_t m) {  // sum over p = 1..m of min(p, w)
        const std::int64_t k = std::min(m, w);
        return d(k) * (d(k) + 1.0) / 2.0 + d(std::max<std::int64_t>(m - w, 0)) * d(w);
    };
    return upto(a + n) - upto(a);
}
// Sum over positions p = a + 1 .. a + n of chunk_tokens(p, c): the tokens each attends to within its chunk.
double sum_chunk_positions(std::int64_t a, std::int64_t n, std::int64_t c) {
    const auto upto = [c](std::int64_t m) {  // whole chunks give c (c + 1) / 2 each, the rest r (r + 1) / 2
        const std::int64_t q = m / c, r = m % c;
        return d(q) * d(c) * (d(c) + 1.0) / 2.0 + d(r) * (d(r) + 1.0) / 2.0;
    };
    return upto(a + n) - upto(a);
}
}  // namespace

double prefill_attention_flop(const SchemeCosts& c, std::int64_t start, std::int64_t n) {
    const double attended = d(n) * (d(start) + (d(n) + 1.0) / 2.0);  // token i attends to start + i + 1 positions
    const double state = d(n) * c.state_flop_per_token;               // Mamba layers: the scan, per token
    const double sliding = c.sliding_attention_flop_per_token_per_context;
    const double chunked = c.chunked_attention_flop_per_token_per_context;
    if (sliding <= 0 && chunked <= 0) return attended * c.prefill_attention_flop_per_token_per_context + state;
    return attended * (c.prefill_attention_flop_per_token_per_context - sliding - chunked) +
           (sliding > 0 ? sum_min_positions(start, n, c.sliding_window) * sliding : 0.0) +
           (chunked > 0 ? sum_chunk_positions(start, n, c.attention_chunk_size) * chunked : 0.0) + state;
}

void divide_kv_budget(Admission& a, const SchemeCosts& c, std::int64_t block, std::int64_t context,
                      std::int64_t max_num_batched_tokens, bool hybrid, std::int64_t tp) {
    block = std::max<std::int64_t>(block, 1);
    if (hybrid) block = mamba_aligned_block_tokens(c, block, tp);
    a.kv_block_tokens = block;
    a.state_bytes_per_sequence = state_bytes_per_sequence_per_gpu(c, tp);
    const auto budget = static_cast<std::uint64_t>(std::max<std::int64_t>(a.budget_bytes, 0));
    const std::uint64_t block_bytes = a.kv_bytes_per_token * static_cast<std::uint64_t>(block);
    if (!hybrid || !has_hybrid_kv_groups(c) || block_bytes == 0) {
        a.kv_cache_blocks = block_bytes > 0 ? static_cast<std::int64_t>(budget / block_bytes) : 0;
        a.kv_cache_tokens = a.kv_cache_blocks * block;
        a.max_concurrency = d(a.kv_cache_tokens) / d(context);
        a.max_sequences = a.kv_cache_blocks / cdiv(context, block);
        if (c.state_layers > 0) {
            // Without the hybrid allocator a sequence holds its Mamba state beside its blocks.
            const double per_sequence = d(cdiv(context, block)) * d(block_bytes) + d(state_bytes_per_sequence_per_gpu(c, tp));
            a.max_concurrency = d(budget) / (d(context) * d(a.kv_bytes_per_token) + d(state_bytes_per_sequence_per_gpu(c, tp)));
            a.max_sequences = static_cast<std::int64_t>(d(budget) / per_sequence);
        }
        return;
    }
    const HybridKvGroups g = hybrid_kv_groups(c);
    const std::int64_t layers = c.sliding_layers + c.full_layers;
    // One layer's page: the token's bytes of one attention layer (every layer's spec has the same
    // page size; a Mamba layer's state is padded to it).
    const std::uint64_t page = a.kv_bytes_per_token / static_cast<std::uint64_t>(layers) * static_cast<std::uint64_t>(block);
    const std::int64_t num_blocks = static_cast<std::int64_t>(budget / (page * static_cast<std::uint64_t>(g.group_size)));
    a.kv_cache_blocks = num_blocks;
    // The logged size takes the smallest group block: a Mamba group's is max_model_len.
    a.kv_cache_tokens = num_blocks / g.groups() * (c.state_layers > 0 ? std::min(block, context) : block);
    const std::int64_t window_tokens = std::min(c.sliding_window - 1 + max_num_batched_tokens, context);
    const std::int64_t per_request = g.full_groups * cdiv(context, block) + g.sliding_groups * (cdiv(window_tokens, block) + 1) + g.state_groups;
    a.max_concurrency = d(num_blocks) / d(per_request);
    a.max_sequences = num_blocks / per_request;
}

HybridKvGroups hybrid_kv_groups(const SchemeCosts& c) {
    HybridKvGroups g;
    const std::int64_t counts[] = {c.full_layers, c.sliding_layers, c.state_layers};
    std::int64_t types = 0, smallest = 0;
    for (std::int64_t n : counts)
        if (n > 0) {
            ++types;
            smallest = smallest == 0 ? n : std::min(smallest, n);
        }
    if (types <= 1) {
        g.group_size = c.sliding_layers + c.full_layers + c.state_layers;
        (c.sliding_layers > 0 ? g.sliding_groups : c.state_layers > 0 ? g.state_groups : g.full_groups) = 1;
        return g;
    }
    g.group_size = smallest;
    g.full_groups = cdiv(c.full_layers, g.group_size);
    g.sliding_groups = cdiv(c.sliding_layers, g.group_size);
    g.state_groups = cdiv(c.state_layers, g.group_size);
    return g;
}

std::int64_t gpus_per_node(const Workload& w) {
    const std::int64_t gpus = std::max<std::int64_t>(w.data_parallel, 1) * std::max<std::int64_t>(w.tensor_parallel, 1);
    return std::max<std::int64_t>(gpus / std::max<std::int64_t>(w.nodes, 1), 1);
}

double allreduce_time_s(double bytes, const Workload& w, const GpuProfile& gpu) {
    const std::int64_t tp = w.tensor_parallel;
    if (tp <= 1 || w.nodes <= 1 || tp <= gpus_per_node(w) || gpu.internode_bytes_per_s <= 0) return allreduce_time_s(bytes, tp, gpu);
    // The ring crosses nodes: its slowest links are the network's.
    return bytes * 2.0 * d(tp - 1) / d(tp) / gpu.internode_bytes_per_s;
}

AllToAll moe_all_to_all(const SchemeCosts& c, const GpuProfile& gpu, const Workload& w, std::int64_t tokens_per_engine) {
    AllToAll a;
    const std::int64_t ep = w.expert_parallel;
    if (ep <= 1 || c.moe_layers == 0 || c.num_experts == 0 || tokens_per_engine <= 0) return a;
    const double tokens = d(tokens_per_engine) / d(std::max<std::int64_t>(w.tensor_parallel, 1));
    // Each of a token's k experts sits on a uniformly drawn GPU; it is sent once to each other GPU it needs.
    const double remote = d(ep - 1) * (1.0 - std::pow(1.0 - 1.0 / d(ep), d(c.experts_per_token)));
    const double h = d(c.hidden_size);
    const double dispatch = c.fp8_dispatch ? h + h / 128.0 * 4.0 : 2.0 * h;  // fp8 values and fp32 scales per 128, or bf16
    const double combine = 2.0 * h;
    a.bytes = tokens * remote * (dispatch + combine) * d(c.moe_layers);
    const std::int64_t per_node = std::min(gpus_per_node(w), ep);
    const double network_share = ep > per_node ? d(ep - per_node) / d(ep - 1) : 0.0;
    a.network_bytes = a.bytes * network_share;
    const double nvlink = gpu.interconnect_bytes_per_s / 2.0;
    const double nvlink_s = nvlink > 0 ? (a.bytes - a.network_bytes) / nvlink : 0.0;
    const double network_s = gpu.internode_bytes_per_s > 0 ? a.network_bytes / gpu.internode_bytes_per_s : 0.0;
    a.time_s = std::max(nvlink_s, network_s);
    return a;
}

std::optional<bool> parse_gpu_p2p(std::string_view value, const std::string& where) {
    if (value == "auto") return std::nullopt;
    if (value == "on" || value == "off") return value == "on";
    throw Error(where, "'" + std::string(value) + "' is not on, off or auto");
}

bool gpu_p2p(const Workload& w, const GpuProfile& gpu) {
    return w.gpu_p2p.value_or(gpu.p2p);
}

bool tp_all_reduces_through_host(const Workload& w, const GpuProfile& gpu) {
    const std::int64_t tp = w.tensor_parallel;
    return tp > 1 && !gpu_p2p(w, gpu) && gpu.host_link_bytes_per_s > 0 && !(w.nodes > 1 && tp > gpus_per_node(w));
}

double tp_allreduce_time_s(const SchemeCosts& c, double tokens, const Workload& w, const GpuProfile& gpu) {
    const double bytes = tokens * d(c.allreduce_bytes_per_token);
    const std::int64_t tp = w.tensor_parallel;
    // Across nodes, or peer-to-peer, or no host link to price the detour by: the bandwidth price.
    if (!tp_all_reduces_through_host(w, gpu)) return allreduce_time_s(bytes, w, gpu);
    const double busbw = ShmAllreduce::busbw_share_of_host_link * gpu.host_link_bytes_per_s / 2.0;
    return d(c.allreduces_per_step) * ShmAllreduce::latency_s + bytes * 2.0 * d(tp - 1) / d(tp) / busbw;
}

double allreduce_time_s(double bytes, std::int64_t tp, const GpuProfile& gpu) {
    if (tp <= 1 || gpu.interconnect_bytes_per_s <= 0) return 0.0;
    const double per_direction = gpu.interconnect_bytes_per_s / 2.0;
    return bytes * 2.0 * d(tp - 1) / d(tp) / per_direction;
}

double profile_activation_bytes_per_token(const SchemeCosts& c, const ModelConfig& m, std::int64_t tp) {
    std::int64_t mlp_width = m.intermediate_size;
    if (m.is_moe()) {
        const std::int64_t routed = m.experts_per_token * m.moe_intermediate_size + m.shared_expert_intermediate_size;
        mlp_width = c.moe_layers < m.num_layers ? std::max(m.intermediate_size, routed) : routed;
    }
    return 2.0 * (2.0 * d(m.hidden_size) + 3.0 * d(mlp_width) / d(tp));
}

const char* bound_name(Bound b) { return b == Bound::Memory ? "memory" : "compute"; }

double expected_distinct_experts(std::int64_t num_experts, std::int64_t experts_per_token, std::int64_t tokens) {
    if (num_experts <= 0) return 0.0;
    const double p_miss = 1.0 - d(experts_per_token) / d(num_experts);
    return d(num_experts) * (1.0 - std::pow(p_miss, d(tokens)));
}

namespace {

// E[max of `copies` independent Binomial(n, p)] = sum_{m=0}^{n-1} (1 - F(m)^copies), with the pmf
// built by its ratio recurrence in log space. Large n (many assignments) is summed where the
// terms matter: from the mean to 12 standard deviations above it (below the mean the F(m)^copies
// term is taken as 0 only where F(m) < 1e-300^(1/copies), which the loop checks).
double expected_max_binomial(std::int64_t n, double p, std::int64_t copies) {
    if (n <= 0 || p <= 0) return 0.0;
    if (p >= 1) return d(n);
    const double mean = d(n) * p;
    if (copies <= 1) return mean;
    const double sd = std::sqrt(mean * (1 - p));
    const std::int64_t hi = std::min<std::int64_t>(n, static_cast<std::int64_t>(std::ceil(mean + 12 * sd + 2)));
    // Below mean - 12 sd the CDF is below 1e-30: each of those terms is 1, summed at once; from
    // there the log pmf (lgamma) and F(m) accumulated. Large batches over many GPUs need this
    // (65,536 token-expert assignments would otherwise loop from 0).
    const std::int64_t lo = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(mean - 12 * sd - 2)));
    double log_pmf = std::lgamma(d(n) + 1) - std::lgamma(d(lo) + 1) - std::lgamma(d(n - lo) + 1) + d(lo) * std::log(p) + d(n - lo) * std::log1p(-p);
    const double log_ratio_p = std::log(p) - std::log1p(-p);
    double cdf = 0, sum = d(lo);
    for (std::int64_t m = lo; m < hi; ++m) {
        cdf = std::min(1.0, cdf + std::exp(log_pmf));
        sum += 1.0 - std::pow(cdf, d(copies));
        log_pmf += std::log(d(n - m)) - std::log(d(m + 1)) + log_ratio_p;
    }
    return sum;  // terms from hi to n are 1 - F^copies ~ 0
}

}  // namespace

BusiestGpuLoad busiest_gpu_load(std::int64_t num_experts, std::int64_t experts_per_token, std::int64_t tokens, std::int64_t ep) {
    BusiestGpuLoad l;
    if (num_experts <= 0 || ep < 1 || tokens <= 0) return l;
    const std::int64_t per_gpu = num_experts / ep;
    const double touched = 1.0 - std::pow(1.0 - d(experts_per_token) / d(num_experts), d(tokens));
    l.distinct_experts = expected_max_binomial(per_gpu, touched, ep);
    l.assignments = expected_max_binomial(tokens * experts_per_token, 1.0 / d(ep), ep);
    return l;
}

NativeScheme resolve_native_scheme(const ModelConfig& m, const std::vector<TensorInfo>& inventory) {
    NativeScheme n;
    n.representative.native = true;
    if (!m.declared_quantization_error.empty())
        throw Error("native", m.name + ": its quantization config cannot be priced: " + m.declared_quantization_error);
    if (!m.declared_quantization) {
        n.description = "config.json declares no quantization: the checkpoint is stored in bf16";
        return n;
    }
    const std::shared_ptr<const QuantizationConfig> q = m.declared_quantization;
    n.model_dtype = q->model_dtype;
    n.scheme_for = [q](const TensorInfo& t) -> const Scheme* {
        const QuantRule* rule = tensor_rule(*q, t);
        return rule ? &rule->scheme : nullptr;
    };
    // The scheme most parameters are stored with stands for the checkpoint (its matmul type and
    // kernel family): gpt-oss's MXFP4 experts, DeepSeek-V3's FP8 blocks.
    std::vector<std::pair<const Scheme*, std::int64_t>> stored;
    for (const TensorInfo& t : inventory) {
        const Scheme* sch = n.scheme_for(t);
        if (!sch) continue;
        auto it = std::find_if(stored.begin(), stored.end(), [&](const auto& e) { return e.first == sch; });
        if (it == stored.end()) it = stored.insert(stored.end(), {sch, 0});
        it->second += t.elements() * t.count;
    }
    const auto most = std::max_element(stored.begin(), stored.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    if (most != stored.end()) {
        n.representative = *most->first;
        n.representative.native = true;
    }
    n.description = std::string(quant_method_name(q->method)) + " as " + q->source + " declares it" +
                    (most != stored.end() ? "; most weights stored as " + scheme_name(*most->first) : "; no module quantized");
    return n;
}

SchemeCosts scheme_costs(const ModelConfig& m, const std::vector<TensorInfo>& inventory, const Scheme& asked,
                         const KvFormat& kv, const GpuProfile& gpu) {
    SchemeCosts c;
    c.kv = kv;
    Scheme scheme = asked;
    std::optional<NativeScheme> native;
    if (asked.native) {
        native = resolve_native_scheme(m, inventory);
        scheme = native->representative;
    }
    const auto budget_of = [&](const std::vector<TensorInfo>& tensors) {
        if (native && native->scheme_for) return checkpoint_budget(tensors, native->scheme_for, scheme, native->model_dtype);
        return checkpoint_budget(tensors, scheme);
    };
    c.scheme = scheme;
    c.budget = budget_of(inventory);
    // What a server holds: the checkpoint less its MTP modules (loaded only for MTP speculative decoding).
    std::vector<TensorInfo> served_inventory;
    if (c.budget.speculative_bytes > 0)
        std::copy_if(inventory.begin(), inventory.end(), std::back_inserter(served_inventory), [](const TensorInfo& t) { return !t.speculative; });
    const std::vector<TensorInfo>& served_tensors = c.budget.speculative_bytes > 0 ? served_inventory : inventory;
    const CheckpointBudget served = c.budget.speculative_bytes > 0 ? budget_of(served_tensors) : c.budget;
    c.resident_weight_bytes = served.checkpoint_bytes;
    const std::uint64_t embedding = role_bytes(served, TensorRole::Embedding);
    const std::uint64_t experts = role_bytes(served, TensorRole::ExpertLinear);
    for (std::int64_t l = 0; l < m.num_layers; ++l) c.moe_layers += m.layer_is_moe(l) ? 1 : 0;
    if (m.is_moe() && c.moe_layers > 0)
        c.expert_bytes_per_layer_expert = experts / static_cast<std::uint64_t>(c.moe_layers * m.num_experts);
    // A decode step reads every weight once, except the embedding table (only the looked-up rows),
    // the routed experts no token of the batch chose and a vision encoder (text steps never run it).
    // A tied table is also the lm_head: read whole.
    c.streamed_weight_bytes = c.resident_weight_bytes - experts - (m.tie_word_embeddings ? 0 : embedding) - role_bytes(served, TensorRole::Vision);
    c.embedding_row_bytes = m.tie_word_embeddings ? 0 : embedding / static_cast<std::uint64_t>(m.vocab_size);

    const ParameterCounts p = count_parameters(m, served_tensors);
    // Every linear FLOP, lm_head included, runs at the scheme's matmul rate, as in seed 003's
    // simulation (docs/roofline.md: this prices a bf16 lm_head at the quantized rate).
    c.linear_flop_per_token = 2.0 * (d(p.active_block_linears) + d(m.vocab_size) * d(m.hidden_size));
    if (m.is_mla()) {
        // vLLM's MLA backends decode in the absorbed form: q_nope goes through W_UK into the latent
        // space, scores are taken over the kv_lora_rank + qk_rope cache, the output is a
        // kv_lora_rank vector per head that W_UV maps back (those two projections are kv_b_proj's
        // weights, priced once per token with the linears). Prefill runs the expanded form.
        const double heads = d(m.num_attention_heads), layers = d(m.attention_layer_count());
        c.attention_flop_per_token_per_context = 2.0 * heads * d(2 * m.kv_lora_rank + m.qk_rope_head_dim) * layers;
        c.prefill_attention_flop_per_token_per_context = 2.0 * heads * d(m.head_dim + m.v_head_dim) * layers;
        c.kv_bytes_per_token = static_cast<std::uint64_t>(m.attention_layer_count()) * latent_cache_bytes_per_token_per_layer(kv, m.kv_lora_rank, m.qk_rope_head_dim);
        c.full_layers = m.attention_layer_count();
    } else {
        const std::int64_t attention_layers = m.attention_layer_count();
        c.attention_flop_per_token_per_context = 4.0 * d(m.q_dim()) * d(attention_layers);
        c.prefill_attention_flop_per_token_per_context = c.attention_flop_per_token_per_context;
        c.kv_bytes_per_token = static_cast<std::uint64_t>(attention_layers) * kv_bytes_per_token_per_layer(kv, m.num_kv_heads, m.head_dim);
        c.sliding_layers = m.sliding_layer_count();
        c.full_layers = attention_layers - c.sliding_layers;
        c.chunked_layers = m.chunked_layer_count();
        if (c.chunked_layers > 0) {
            c.attention_chunk_size = m.attention_chunk_size;
            c.chunked_kv_bytes_per_token = static_cast<std::uint64_t>(c.chunked_layers) * kv_bytes_per_token_per_layer(kv, m.num_kv_heads, m.head_dim);
            c.chunked_attention_flop_per_token_per_context = 4.0 * d(m.q_dim()) * d(c.chunked_layers);
        }
        if (c.sliding_layers > 0) {
            c.sliding_window = m.sliding_window;
            c.sliding_kv_bytes_per_token = static_cast<std::uint64_t>(c.sliding_layers) * kv_bytes_per_token_per_layer(kv, m.num_kv_heads, m.head_dim);
            c.sliding_attention_flop_per_token_per_context = 4.0 * d(m.q_dim()) * d(c.sliding_layers);
        }
    }
    c.kv_split_heads = m.cache_split_heads();
    c.hidden_size = m.hidden_size;
    c.routed_expert_bytes = experts;
    c.fp8_dispatch = scheme.matmul_type() == MatmulType::Fp8 && scheme.weights.scale && scheme.weights.scale->group.is_block();
    // MXFP4 experts as vLLM allocates them (gpt-oss).
    const bool mxfp4_experts = m.gpt_oss_experts && experts > 0 && scheme.weights.storage == DType::Fp4E2M1 && scheme.weights.scale &&
                               scheme.weights.scale->dtype == DType::Fp8E8M0 && (native || scheme.covers.moe_experts);
    if (mxfp4_experts) {
        c.mxfp4_experts = true;
        c.mxfp4_native_capable = gpu.peak.fp4_flop_per_s > 0 && matmul_peak_flop_per_s(gpu, MatmulType::Fp8) > 0;
        const std::string& cc = gpu.compute_capability;  // "sm_80", "sm_100"
        const bool marlin = (cc.rfind("sm_", 0) == 0 ? std::atoi(cc.c_str() + 3) : 90) < 90;
        c.expert_width_pad = marlin ? 128 : 64;
        c.expert_hidden_pad = marlin ? 256 : 0;
        c.expert_width = m.moe_intermediate_size;
    }
    c.mla = m.is_mla();
    if (c.mla && (dtype_bits(kv.quant.storage) < 8 || (kv.quant.scale && kv.quant.scale->group.is_per_row())))
        throw Error("--kv", kv_format_name(kv) + " is not an MLA cache format: vLLM's MLA backends cache the latent in bf16, fp16 or fp8");
    c.kv_fixed_bytes = static_cast<std::uint64_t>(m.attention_layer_count()) * kv_fixed_bytes_per_layer(kv);
    c.activation_bytes_per_token = static_cast<std::uint64_t>(m.num_layers * m.hidden_size) * 2;
    // Two row-parallel outputs per layer (attention's o_proj, the MLP's down_proj); one per layer
    // of a hybrid stack, whose layers hold one mixer each.
    const std::int64_t reduced = m.is_hybrid_stack() ? m.num_layers : 2 * m.num_layers;
    c.allreduce_bytes_per_token = static_cast<std::uint64_t>(reduced * m.hidden_size) * 2;
    c.allreduces_per_step = reduced;
    // The state layers' shapes (the model dtype, bf16), and their FLOPs per token: the recurrence
    // per state value (Mamba2: the decay and the B x input update, 3, and the C readout, 2; the
    // gated delta rule: the decay, the S k product and the rank-1 update, 5, and the readout, 2)
    // and the conv1d's taps per channel.
    c.mamba.layers = m.mamba_layer_count();
    if (c.mamba.layers > 0) {
        c.mamba.conv_kernel = m.mamba_conv_kernel;
        c.mamba.conv_fixed_channels = m.mamba_intermediate_size();
        c.mamba.groups = m.mamba_n_groups;
        c.mamba.group_channels = m.ssm_state_size;
        c.mamba.heads = m.mamba_num_heads;
        c.mamba.values_per_head = m.mamba_head_dim * m.ssm_state_size;
    }
    c.gdn.layers = m.linear_attention_layer_count();
    if (c.gdn.layers > 0) {
        c.gdn.conv_kernel = m.linear_conv_kernel;
        c.gdn.conv_fixed_channels = m.linear_conv_dim();
        c.gdn.heads = m.linear_num_value_heads;
        c.gdn.values_per_head = m.linear_key_head_dim * m.linear_value_head_dim;
        c.gdn.recurrent_dtype_bytes = static_cast<std::uint64_t>(m.linear_state_value_bytes);
    }
    c.state_layers = c.mamba.layers + c.gdn.layers;
    const auto state_flop = [](const RecurrentState& r, double per_value) {
        const double channels = d(r.conv_fixed_channels + 2 * r.groups * r.group_channels);
        return d(r.layers) * (per_value * d(r.heads) * d(r.values_per_head) + 2.0 * d(r.conv_kernel) * channels);
    };
    c.state_flop_per_token = state_flop(c.mamba, 5.0) + state_flop(c.gdn, 7.0);

    c.num_experts = m.num_experts;
    c.experts_per_token = m.experts_per_token;
    if (m.is_moe() && c.moe_layers > 0 && m.num_experts > 0)
        c.expert_flop_per_assignment = 2.0 * d(p.experts) / d(m.num_experts);  // every MoE layer's expert weights, once
    c.matmul = scheme.matmul_type();
    c.weight_only_path = scheme.is_weight_only();
    if (native) c.note = "native: " + native->description;
    if (matmul_peak_flop_per_s(gpu, c.matmul) <= 0) {
        // No tensor cores for this input type (FP8 on an A100): engines fall back to a weight-only
        // kernel on bf16 tensor cores (vLLM's Marlin W8A16 path).
        c.note = (c.note.empty() ? "" : c.note + "; ") + std::string("no ") + matmul_type_name(c.matmul) + " tensor cores on " + gpu.id + ": priced as weight-only on bf16 tensor cores";
        c.matmul = MatmulType::Bf16;
        c.weight_only_path = true;
    }
    return c;
}

DecodeStep decode_step(const SchemeCosts& c, const GpuProfile& gpu, const EfficiencyProfile& eff, const Workload& w,
                       std::int64_t batch, std::int64_t context) {
    assert(batch > 0 && context > 0 && w.tensor_parallel > 0);
    const std::uint64_t tp = static_cast<std::uint64_t>(w.tensor_parallel);
    const std::uint64_t b = static_cast<std::uint64_t>(batch);
    DecodeStep s;
    s.batch = batch;
    s.context_tokens = context;
    s.weight_bytes = (c.streamed_weight_bytes + b * c.embedding_row_bytes) / tp;
    s.linear_flop = d(batch) * c.linear_flop_per_token / d(w.tensor_parallel);
    double expert_flop = d(batch) * d(c.experts_per_token) * c.expert_flop_per_assignment / d(w.tensor_parallel);
    if (c.expert_bytes_per_layer_expert > 0) {
        // Which experts a batch touches is decided per layer; uniform routing assumed.
        if (w.expert_parallel > 1) {
            // Whole experts per GPU: the step waits, layer by layer, for the busiest GPU, which
            // serves the tokens of every data-parallel engine.
            const BusiestGpuLoad busiest = busiest_gpu_load(c.num_experts, c.experts_per_token, batch * std::max<std::int64_t>(w.data_parallel, 1), w.expert_parallel);
            s.weight_bytes += static_cast<std::uint64_t>(d(c.moe_layers) * busiest.distinct_experts * d(c.expert_bytes_per_layer_expert));
            s.linear_flop += (busiest.assignments - d(batch) * d(c.experts_per_token) / d(w.tensor_parallel)) * c.expert_flop_per_assignment;
            expert_flop = busiest.assignments * c.expert_flop_per_assignment;
        } else {
            const double touched = expected_distinct_experts(c.num_experts, c.experts_per_token, batch);
            s.weight_bytes += static_cast<std::uint64_t>(d(c.moe_layers) * touched * d(c.expert_bytes_per_layer_expert) / d(tp));
        }
    }
    // The heads (or the MLA latent) this rank holds, sliding layers' windows.
    s.kv_bytes = static_cast<std::uint64_t>(d(batch) * kv_read_bytes_per_sequence(c, w.tensor_parallel, context)) + c.kv_fixed_bytes / tp;
    s.activation_bytes = b * c.activation_bytes_per_token;
    s.attention_flop = d(batch) * attention_flop_per_token(c, context) / d(w.tensor_parallel);
    s.memory_time_s = d(s.total_bytes()) / bandwidth(gpu, eff);
    s.compute_time_s = linear_time_s(c, gpu, eff, w, s.linear_flop, expert_flop) + s.attention_flop / attention_rate_flop_per_s(gpu, eff);
    s.communication_time_s = tp_allreduce_time_s(c, d(batch), w, gpu);
    if (w.data_parallel > 1 && c.expert_bytes_per_layer_expert > 0) {
        const AllToAll a2a = moe_all_to_all(c, gpu, w, batch);
        s.all_to_all_bytes = a2a.bytes;
        s.communication_time_s += a2a.time_s;
    }
    s.bound = s.compute_time_s > s.memory_time_s ? Bound::Compute : Bound::Memory;
    s.time_s = std::max(s.memory_time_s, s.compute_time_s) + s.communication_time_s;
    return s;
}

DecodeStep verify_step(const SchemeCosts& c, const GpuProfile& gpu, const EfficiencyProfile& eff, const Workload& w,
                       std::int64_t batch, std::int64_t query_tokens, std::int64_t context) {
    assert(batch > 0 && query_tokens > 0);
    if (query_tokens == 1) return decode_step(c, gpu, eff, w, batch, context);
    DecodeStep s = decode_step(c, gpu, eff, w, batch * query_tokens, context);
    // decode_step of batch x q rows counts every row as a sequence reading its own cache: each
    // sequence reads it once.
    s.batch = batch;
    s.kv_bytes = static_cast<std::uint64_t>(d(batch) * kv_read_bytes_per_sequence(c, w.tensor_parallel, context)) +
                 c.kv_fixed_bytes / static_cast<std::uint64_t>(w.tensor_parallel);
    s.memory_time_s = d(s.total_bytes()) / bandwidth(gpu, eff);
    s.bound = s.compute_time_s > s.memory_time_s ? Bound::Compute : Bound::Memory;
    s.time_s = std::max(s.memory_time_s, s.compute_time_s) + s.communication_time_s;
    return s;
}

PrefillResult prefill(const SchemeCosts& c, const GpuProfile& gpu, const EfficiencyProfile& eff, const Workload& w,
                      std::int64_t prompt_tokens) {
    assert(prompt_tokens > 0);
    PrefillResult r;
    r.prompt_tokens = prompt_tokens;
    r.chunk_tokens = std::min(prompt_tokens, w.engine.max_num_batched_tokens);
    const double tp = d(w.tensor_parallel);
    const double bw = bandwidth(gpu, eff);
    const double lin_rate = linear_rate_flop_per_s(c, gpu, eff, w.kernel);
    const double att_rate = attention_rate_flop_per_s(gpu, eff);
    double largest_chunk_time = -1.0;
    for (std::int64_t start = 0; start < prompt_tokens; start += r.chunk_tokens) {
        const std::int64_t n = std::min(r.chunk_tokens, prompt_tokens - start);
        double weights = d(c.streamed_weight_bytes) + d(n) * d(c.embedding_row_bytes);
        double lin = d(n) * c.linear_flop_per_token / tp;
        double expert_flop = d(n) * d(c.experts_per_token) * c.expert_flop_per_assignment / tp;
        double expert_bytes_per_gpu = 0;  // under expert parallelism: the busiest GPU's, not split by tp
        if (c.expert_bytes_per_layer_expert > 0) {
            if (w.expert_parallel > 1) {
                const BusiestGpuLoad busiest = busiest_gpu_load(c.num_experts, c.experts_per_token, n, w.expert_parallel);
                expert_bytes_per_gpu = d(c.moe_layers) * busiest.distinct_experts * d(c.expert_bytes_per_layer_expert);
                lin += (busiest.assignments - d(n) * d(c.experts_per_token) / tp) * c.expert_flop_per_assignment;
                expert_flop = busiest.assignments * c.expert_flop_per_assignment;
            } else {
                weights += d(c.moe_layers) * expected_distinct_experts(c.num_experts, c.experts_per_token, n) * d(c.expert_bytes_per_layer_expert);
            }
        }
        // The chunk reads the cache of the tokens before it and writes its own.
        const double kv = kv_read_bytes_per_sequence(c, w.tensor_parallel, start + n);
        const double bytes = weights / tp + kv + expert_bytes_per_gpu + d(n) * d(c.activation_bytes_per_token);
        // Causal attention: token i of the chunk attends to start + i + 1 positions (sliding layers: at most their window).
        const double att = prefill_attention_flop(c, start, n) / tp;
        const double mem_t = bytes / bw;
        const double comp_t = (native_mxfp4(c, w) ? linear_time_s(c, gpu, eff, w, lin, expert_flop) : lin / lin_rate) + att / att_rate;
        double comm = tp_allreduce_time_s(c, d(n), w, gpu);
        if (w.data_parallel > 1 && c.expert_bytes_per_layer_expert > 0) comm += moe_all_to_all(c, gpu, w, n).time_s;
        const double t = std::max(mem_t, comp_t) + comm;
        r.flop += lin + att;
        r.bytes += static_cast<std::uint64_t>(bytes);
        r.time_s += t;
        ++r.chunks;
        if (t > largest_chunk_time) {
            largest_chunk_time = t;
            r.bound = comp_t > mem_t ? Bound::Compute : Bound::Memory;
        }
    }
    return r;
}

Admission admission(const SchemeCosts& c, const ModelConfig& m, const GpuProfile& gpu, const Workload& w) {
    Admission a;
    const std::int64_t tp = w.tensor_parallel;
    a.usable_memory_bytes = gpu.memory_usable_bytes;
    a.gpu_memory_utilization = w.engine.gpu_memory_utilization;
    a.engine_memory_bytes = static_cast<std::uint64_t>(w.engine.gpu_memory_utilization * d(gpu.memory_usable_bytes));
    a.weight_bytes = resident_weight_bytes_per_gpu(c, w) + w.engine.draft_weight_bytes_per_gpu;
    // Peak activations of the profiling forward over max_num_batched_tokens.
    const double per_token = profile_activation_bytes_per_token(c, m, tp);
    a.activation_workspace_bytes = static_cast<std::uint64_t>(d(w.engine.max_num_batched_tokens) * per_token);
    // The sampler's dummy run holds fp32 logits for max_num_seqs sequences.
    a.sampler_workspace_bytes = static_cast<std::uint64_t>(w.engine.max_num_seqs) * static_cast<std::uint64_t>(m.vocab_size) * 4;
    a.runtime_overhead_bytes = w.engine.runtime_overhead_bytes;
    a.budget_bytes = static_cast<std::int64_t>(a.engine_memory_bytes) - static_cast<std::int64_t>(a.weight_bytes) -
                     static_cast<std::int64_t>(a.activation_workspace_bytes + a.sampler_workspace_bytes + a.runtime_overhead_bytes);
    a.kv_bytes_per_token = kv_bytes_per_token_per_gpu(c, tp) + w.engine.draft_kv_bytes_per_token_per_gpu;
    const double gib = 1024.0 * 1024.0 * 1024.0;
    const auto fmt = [&](double bytes) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / gib);
        return std::string(buf);
    };
    std::string too_big;  // kv_cache_memory_bytes past the GPU's memory: divided as asked, then refused
    if (w.engine.kv_cache_memory_bytes > 0) {
        // vLLM's --kv-cache-memory-bytes: the cache as given, beside the weights and workspace.
        a.budget_bytes = static_cast<std::int64_t>(std::min<std::uint64_t>(w.engine.kv_cache_memory_bytes, std::uint64_t{1} << 62));
        const double workspace = d(a.activation_workspace_bytes + a.sampler_workspace_bytes + a.runtime_overhead_bytes);
        if (d(a.weight_bytes) + workspace + d(w.engine.kv_cache_memory_bytes) > d(a.usable_memory_bytes))
            too_big = "kv_cache_memory_bytes " + fmt(d(w.engine.kv_cache_memory_bytes)) + " with " + fmt(d(a.weight_bytes)) + " of weights and " +
                      fmt(workspace) + " of workspace is more than the GPU's " + fmt(d(a.usable_memory_bytes));
    }
    if (a.budget_bytes <= 0) {
        a.reason = "weights need " + fmt(d(a.weight_bytes)) + " per GPU but only " +
                   fmt(d(a.engine_memory_bytes) - d(a.activation_workspace_bytes + a.sampler_workspace_bytes + a.runtime_overhead_bytes)) +
                   " is left after workspace (gpu_memory_utilization " + std::to_string(w.engine.gpu_memory_utilization).substr(0, 4) +
                   " of " + fmt(d(a.usable_memory_bytes)) + ")";
        return a;
    }
    divide_kv_budget(a, c, kv_block_tokens_for(c, w.engine.kv_block_tokens), w.context_tokens + w.engine.lookahead_tokens,
                     w.engine.max_num_batched_tokens, true, tp);
    a.fits = a.max_sequences >= 1 && too_big.empty();
    if (!too_big.empty())
        a.reason = too_big;
    else if (!a.fits)
        a.reason = "one sequence of " + std::to_string(w.context_tokens + w.engine.lookahead_tokens) + " tokens needs " +
                   fmt(d(a.kv_bytes_per_token) * d(w.context_tokens)) + " of KV cache but the budget is " + fmt(d(a.budget_bytes));
    return a;
}

std::vector<double> step_times(const SchemeCosts& c, const GpuProfile& gpu, const EfficiencyProfile& eff, const Workload& w,
                               std::int64_t max_batch) {
    std::vector<double> t;
    t.reserve(static_cast<std::size_t>(std::max<std::int64_t>(max_batch, 0)));
    for (std::int64_t batch = 1; batch <= max_batch; ++batch) t.push_back(decode_step(c, gpu, eff, w, batch, w.context_tokens).time_s);
    return t;
}

std::vector<Crossover> sparse_numeric_crossovers(const std::string& na, const std::function<double(std::int64_t)>& times_a, const std::string& nb,
                                                 const std::function<double(std::int64_t)>& times_b, std::int64_t max_batch,
                                                 std::int64_t dense_up_to, double grid_ratio) {
    std::vector<Crossover> out;
    int previous = 0;  // sign of t_a - t_b at the last batch where they differed, as numeric_crossovers
    const auto sign_at = [&](std::int64_t batch) {
        const double ta = times_a(batch), tb = times_b(batch);
        const double diff = ta - tb;
        return std::abs(diff) <= 1e-12 * std::max(ta, tb) ? 0 : (diff < 0 ? -1 : 1);
    };
    // Walks batches (from, to] one by one, as numeric_crossovers does.
    const auto scan = [&](std::int64_t from, std::int64_t to) {
        for (std::int64_t batch = from + 1; batch <= to; ++batch) {
            const int sign = sign_at(batch);
            if (sign != 0 && previous != 0 && sign != previous) out.push_back({na, nb, d(batch), previous < 0 ? na : nb, sign < 0 ? na : nb});
            if (sign != 0) previous = sign;
        }
    };
    const std::int64_t dense = std::min(max_batch, std::max<std::int64_t>(dense_up_to, 1));
    scan(0, dense);
    // `anchor`: the last batch priced whose sign is `previous`. A tie (equal times, as W8A8 INT8 and
    // FP8 on a GPU with equal peaks once compute-bound) carries no order and is stepped over.
    std::int64_t anchor = dense, last = dense;
    const auto flipped = [&](std::int64_t batch) {
        const int sign = sign_at(batch);
        return sign != 0 && sign != previous;
    };
    while (last < max_batch) {
        const std::int64_t next = std::min(max_batch, std::max(last + 1, static_cast<std::int64_t>(std::ceil(d(last) * grid_ratio))));
        last = next;
        const int sign = sign_at(next);
        if (sign == 0) continue;
        if (previous != 0 && sign != previous) {
            // A flip inside (anchor, next]: bisect for the first batch of the new sign.
            std::int64_t lo = anchor, hi = next;
            while (hi - lo > 1) {
                const std::int64_t mid = lo + (hi - lo) / 2;
                (flipped(mid) ? hi : lo) = mid;
            }
            out.push_back({na, nb, d(hi), previous < 0 ? na : nb, sign < 0 ? na : nb});
        }
        previous = sign;
        anchor = next;
    }
    return out;
}

std::vector<Crossover> numeric_crossovers(const std::string& na, const std::vector<double>& times_a, const std::string& nb,
                                          const std::vector<double>& times_b) {
    // Every batch priced already: the sparse search with its dense part over the whole range.
    const auto n = static_cast<std::int64_t>(std::min(times_a.size(), times_b.size()));
    const auto at = [](const std::vector<double>& t) {
        return std::function<double(std::int64_t)>([&t](std::int64_t batch) { return t[static_cast<std::size_t>(batch - 1)]; });
    };
    return sparse_numeric_crossovers(na, at(times_a), nb, at(times_b), n, n);
}

std::vector<Crossover> closed_form_crossovers(const SchemeCosts& a, const SchemeCosts& b, const GpuProfile& gpu,
                                              const EfficiencyProfile& eff, const Workload& w) {
    const Pieces pa = pieces(a, gpu, eff, w), pb = pieces(b, gpu, eff, w);
    const std::string na = scheme_name(a.scheme), nb = scheme_name(b.scheme);
    // Each scheme is max of two lines (memory: m0 + k0 + (m1+k) B, compute: k0 + (c1+k) B); a flip is
    // where an active line of one meets an active line of the other.
    const double la[2][2] = {{pa.m0 + pa.k0, pa.m1 + pa.k}, {pa.k0, pa.c1 + pa.k}};
    const double lb[2][2] = {{pb.m0 + pb.k0, pb.m1 + pb.k}, {pb.k0, pb.c1 + pb.k}};
    std::vector<double> roots;
    for (const auto& x : la)
        for (const auto& y : lb) {
            const double slope = x[1] - y[1];
            if (std::abs(slope) < 1e-30) continue;
            const double batch = (y[0] - x[0]) / slope;
            if (!(batch > 0.0) || !std::isfinite(batch)) continue;
            const double va = x[0] + x[1] * batch, vb = y[0] + y[1] * batch;
            if (std::abs(va - pa.at(batch)) > 1e-9 * va || std::abs(vb - pb.at(batch)) > 1e-9 * vb) continue;
            roots.push_back(batch);
        }
    std::sort(roots.begin(), roots.end());
    std::vector<Crossover> out;
    for (double r : roots) {
        if (!out.empty() && std::abs(out.back().batch - r) <= 1e-9 * r) continue;
        const double lo = r * (1.0 - 1e-6), hi = r * (1.0 + 1e-6);
        const bool a_faster_below = pa.at(lo) < pb.at(lo), a_faster_above = pa.at(hi) < pb.at(hi);
        if (a_faster_below == a_faster_above) continue;  // touching, not crossing
        out.push_back({na, nb, r, a_faster_below ? na : nb, a_faster_above ? na : nb});
    }
    return out;
}

double ridge_batch(const SchemeCosts& c, const GpuProfile& gpu, const EfficiencyProfile& eff, const Workload& w) {
    const Pieces p = pieces(c, gpu, eff, w);
    if (p.c1 <= p.m1) return std::numeric_limits<double>::infinity();
    return p.m0 / (p.c1 - p.m1);
}

double gemm_ridge_batch(const GpuProfile& gpu, const EfficiencyProfile& eff, MatmulType type, double bytes_per_weight) {
    return ridge_point_flop_per_byte(gpu, eff, type) * bytes_per_weight / 2.0;
}

std::vector<double> gemm_crossover_batches(const GpuProfile& gpu, const EfficiencyProfile& eff, MatmulType type_a,
                                           double bytes_a, MatmulType type_b, double bytes_b) {
    const double bw = bandwidth(gpu, eff);
    const auto rate = [&](MatmulType t) { return matmul_peak_flop_per_s(gpu, t) * eff.compute_efficiency_for(t); };
    // Seconds per weight: memory piece b/beta (constant), compute piece 2B/pi (linear in B).
    const double ma = bytes_a / bw, ca = 2.0 / rate(type_a), mb = bytes_b / bw, cb = 2.0 / rate(type_b);
    const auto ta = [&](double b) { return std::max(ma, ca * b); };
    const auto tb = [&](double b) { return std::max(mb, cb * b); };
    std::vector<double> candidates;
    if (ca != cb) candidates.push_back(0.0);  // compute vs compute meet only at 0
    candidates.push_back(mb / ca);            // a compute meets b memory
    candidates.push_back(ma / cb);            // a memory meets b compute
    std::vector<double> out;
    for (double b : candidates) {
        if (!(b > 0.0) || !std::isfinite(b)) continue;
        const double lo = b * (1.0 - 1e-6), hi = b * (1.0 + 1e-6);
        if (std::abs(ta(b) - tb(b)) > 1e-9 * ta(b)) continue;
        if ((ta(lo) < tb(lo)) != (ta(hi) < tb(hi))) out.push_back(b);
    }
    std::sort(out.begin(), out.end());
    return out;
}

double ridge_point_flop_per_byte(const GpuProfile& gpu, const EfficiencyProfile& eff, MatmulType type) {
    return matmul_peak_flop_per_s(gpu, type) * eff.compute_efficiency_for(type) / bandwidth(gpu, eff);
}

}  // namespace quantplan
