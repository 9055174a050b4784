#pragma once
// The roofline engine: decode and prefill step times, KV-cache admission, crossovers.
//
// A step moves bytes (weights, KV cache, activations) and does FLOPs (linears at the scheme's
// matmul rate, attention at the attention dtype's rate); its time is max(memory, compute) plus
// tensor-parallel communication. docs/roofline.md derives every term and cites the seeds.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/hardware/gpu.h"
#include "core/model/model.h"
#include "core/roofline/evidence.h"
#include "core/scheme/bytes.h"
#include "core/scheme/scheme.h"

namespace quantplan {

// Engine settings that decide the KV-cache budget (vLLM defaults).
struct EngineSettings {
    double gpu_memory_utilization = 0.9;             // fraction of usable memory the engine may take
    std::int64_t max_num_batched_tokens = 8192;      // tokens in one forward pass (chunked prefill size)
    std::int64_t max_num_seqs = 256;                 // sequences the sampler is sized for
    std::uint64_t runtime_overhead_bytes = 512ull << 20;  // CUDA context, cuBLAS workspaces, graphs (estimate)
    std::int64_t kv_block_tokens = 16;               // paged-attention block size
    // vLLM's --kv-cache-memory-bytes: the KV cache per GPU as given, gpu_memory_utilization not
    // consulted (v1/worker/gpu_worker.py determine_available_memory returns it after the profile
    // run). 0: not set, the utilization decides. SGLang has no such setting.
    std::uint64_t kv_cache_memory_bytes = 0;
    // Speculative decoding (core/engine/speculative.h): the draft's weights resident beside the
    // target's, the draft's own KV bytes per token (its layers share the engine's block pool), and
    // the slots each running sequence holds for its speculative tokens (vLLM V1's
    // num_lookahead_tokens). All 0 without speculation.
    std::uint64_t draft_weight_bytes_per_gpu = 0;
    std::uint64_t draft_kv_bytes_per_token_per_gpu = 0;
    std::int64_t lookahead_tokens = 0;
    // vLLM V0's multi-step scheduling (--num-scheduler-steps, 0.5.5 to 0.10.0): a decode batch
    // scheduled once runs this many forward passes (serve::EngineLimits::multi_steps). 1: off.
    std::int64_t num_scheduler_steps = 1;
};

// What is being priced, apart from the scheme.
struct Workload {
    std::int64_t batch = 1;                 // concurrent sequences requested
    std::int64_t context_tokens = 4096;     // tokens in each sequence's KV cache at this step
    KvFormat kv;                            // KV-cache format
    // --kv auto (the engines' --kv-cache-dtype default): `kv` is the 16-bit model dtype, except that
    // the checkpoint as it ships (`native`) is cached in the KV format its quantization config
    // declares where the engine resolves auto to it (plan.h scheme_kv_format).
    bool kv_auto = false;
    std::int64_t tensor_parallel = 1;       // GPUs the model is split over (1..8)
    // Expert parallelism of an MoE model over the tensor-parallel group (vLLM's
    // --enable-expert-parallel at data-parallel size 1): each GPU holds num_experts / ep whole
    // experts instead of a 1/tp slice of every one, and a step waits for the GPU whose experts the
    // batch loads most. 1: none (experts sliced as every other linear). When above 1 it equals
    // tensor_parallel; attention stays tensor-parallel and the tokens stay on every GPU, so the
    // communication is TP's all-reduce.
    std::int64_t expert_parallel = 1;
    // Data-parallel attention (vLLM --data-parallel-size with --enable-expert-parallel): this many
    // engines, each with its own `batch` of sequences and attention over its own tensor_parallel
    // GPUs, share the routed experts over expert_parallel = data_parallel x tensor_parallel GPUs
    // (vLLM 0.11.0 FusedMoEParallelConfig.make); every MoE layer dispatches its tokens to the GPUs
    // of their experts and combines the outputs (all-to-all). 1: none.
    std::int64_t data_parallel = 1;
    // Nodes the data_parallel x tensor_parallel GPUs span (GPUs split evenly, at most 8 per node):
    // traffic between nodes runs at the GPU profile's internode_bytes_per_s.
    std::int64_t nodes = 1;
    KernelQuality kernel = KernelQuality::Fused;
    // MXFP4 experts (gpt-oss) with MXFP8 activations on a GPU with block-scaled FP4/FP8 tensor cores
    // (B200, RTX 5090: their expert matmuls at the FP8 rate), as vLLM runs them on sm_100 when
    // VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1 (0.11.0 quantization/mxfp4.py get_mxfp4_backend).
    // false: W4A16 on bf16 tensor cores, vLLM's default everywhere.
    bool mxfp4_mxfp8 = false;
    // Peer-to-peer between the tensor-parallel GPUs of a node: nullopt takes the GPU profile's
    // (GpuProfile::p2p: none on GeForce cards); false where the platform lacks it (vLLM logs "Custom
    // allreduce is disabled because your platform lacks GPU P2P capability"): NCCL then moves each
    // all-reduce through host memory (tp_allreduce_time_s).
    std::optional<bool> gpu_p2p;
    EngineSettings engine;
};

// The state one kind of recurrent layer keeps per sequence, in the shape vLLM 0.11.0 gives it
// over TP ranks (model_executor/layers/mamba/mamba_utils.py MambaStateShapeCalculator): a conv
// window of (conv_kernel - 1) x conv channels, the channels conv_fixed_channels + 2 x groups x
// group_channels with `groups` widened to TP when TP does not divide it
// (extra_groups_for_head_shards; Mamba2's B and C), split over ranks; and heads x values_per_head
// recurrent values, heads split over ranks. Mamba2: channels I + 2 x n_groups x state, heads x
// (head_dim x state). Gated DeltaNet: channels 2 x key_dim + value_dim, value heads x (key_head_dim x
// value_head_dim).
struct RecurrentState {
    std::int64_t layers = 0;
    std::int64_t conv_kernel = 0;
    std::int64_t conv_fixed_channels = 0;
    std::int64_t groups = 0;
    std::int64_t group_channels = 0;
    std::int64_t heads = 0;
    std::int64_t values_per_head = 0;
    std::uint64_t dtype_bytes = 2;            // a conv state value (the model dtype)
    std::uint64_t recurrent_dtype_bytes = 2;  // a recurrent state value (Qwen3.5: float32)
    // One layer's state for one sequence on one GPU of a `tp`-way group; 0 without layers.
    std::uint64_t bytes_per_layer(std::int64_t tp) const;
};

// Per-scheme constants of a model, computed once; decode_step() then prices any (B, L) in O(1).
struct SchemeCosts {
    Scheme scheme;
    KvFormat kv;                             // the KV-cache format the costs are priced with
    CheckpointBudget budget;                 // whole-checkpoint bytes
    std::uint64_t resident_weight_bytes = 0;  // bytes in GPU memory (whole checkpoint)
    std::uint64_t streamed_weight_bytes = 0;  // read every decode step: all but the embedding table and routed experts
    std::uint64_t expert_bytes_per_layer_expert = 0;  // bytes of one routed expert in one layer (0 dense)
    std::int64_t moe_layers = 0;
    std::int64_t num_experts = 0;             // routed experts per MoE layer (0 dense)
    double expert_flop_per_assignment = 0;    // FLOPs of one token through one routed expert, summed over the MoE layers
    std::int64_t experts_per_token = 0;
    std::uint64_t embedding_row_bytes = 0;    // one embedding row as stored
    double linear_flop_per_token = 0;         // 2 x active linear parameters (incl. lm_head, routers)
    // Attention FLOPs per token per cached token at decode: 4 x q_dim x layers (QK^T and PV) for
    // GQA; MLA decodes in the absorbed form over the latent, 2 x heads x (2 kv_lora_rank + qk_rope) x layers.
    double attention_flop_per_token_per_context = 0;
    // The same at prefill: GQA as at decode; MLA prefills in the expanded form (heads of
    // qk_nope + qk_rope for QK^T, v_head_dim for PV): 2 x heads x (qk_head + v_head) x layers.
    double prefill_attention_flop_per_token_per_context = 0;
    std::uint64_t kv_bytes_per_token = 0;     // all layers, K and V (MLA: the latent), with per-token scales, whole model
    std::int64_t kv_split_heads = 1;          // ModelConfig::cache_split_heads(): how the cache divides over TP ranks
    // Sliding-window layers (gpt-oss, Gemma 3, Mistral's model-wide window): their share of kv_bytes_per_token and of the attention FLOPs,
    // which read at most `sliding_window` cached tokens; the layer counts group the cache as
    // vLLM's hybrid allocator does (hybrid_kv_groups).
    std::uint64_t sliding_kv_bytes_per_token = 0;
    double sliding_attention_flop_per_token_per_context = 0;
    std::int64_t sliding_window = 0;
    std::int64_t sliding_layers = 0;
    std::int64_t full_layers = 0;             // attention layers that cache every token (chunked ones included)
    // Chunked local attention (Llama 4): of the full layers, chunked_layers attend only to the
    // earlier tokens of their attention_chunk_size-token chunk, and read only those; vLLM 0.11.0
    // still caches every token for them (its hybrid allocator is off for chunked attention by
    // default, config/__init__.py, VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE).
    std::int64_t chunked_layers = 0;
    std::int64_t attention_chunk_size = 0;
    std::uint64_t chunked_kv_bytes_per_token = 0;
    double chunked_attention_flop_per_token_per_context = 0;
    // Layers with a constant state per sequence (Mamba2: Nemotron-H; gated DeltaNet: Qwen3-Next),
    // read and written once a step, in the model dtype whatever the KV format (vLLM 0.11.0
    // mamba_cache_dtype "auto"): one RecurrentState per kind.
    RecurrentState mamba;
    RecurrentState gdn;
    std::int64_t state_layers = 0;            // mamba.layers + gdn.layers
    double state_flop_per_token = 0;          // the recurrences' FLOPs per token over every state layer
    // vLLM pads MXFP4 expert weights for its kernels (vllm 0.10.1 quantization/mxfp4.py
    // Mxfp4MoEMethod.create_weights): Marlin, below sm_90, rounds each rank's expert width up to 128
    // and the hidden size to 256; the Triton kernels (sm_90 and up) round the width to 64. 0: no padding.
    std::int64_t expert_width_pad = 0;
    std::int64_t expert_hidden_pad = 0;
    std::int64_t expert_width = 0;            // moe_intermediate_size
    std::uint64_t routed_expert_bytes = 0;    // all routed experts' resident bytes (every MoE model; before padding)
    // The routed experts are MXFP4 (gpt-oss as shipped); on a GPU whose tensor cores take MXFP4 x
    // MXFP8 (peak fp4 > 0) Workload::mxfp4_mxfp8 runs their matmuls at the FP8 rate, the rest at
    // `matmul`'s.
    bool mxfp4_experts = false;
    bool mxfp4_native_capable = false;
    bool mla = false;                         // the cache is an MLA latent (vLLM pages it in blocks of 64: kv_block_tokens_for)
    std::uint64_t kv_fixed_bytes = 0;         // per-tensor KV scales
    std::uint64_t activation_bytes_per_token = 0;  // residual stream handed between layers
    std::uint64_t allreduce_bytes_per_token = 0;   // payload of the two all-reduces per layer (TP > 1)
    std::int64_t allreduces_per_step = 0;          // the all-reduces one forward runs (TP > 1), whatever its tokens
    std::int64_t hidden_size = 0;             // the all-to-all's token width
    bool fp8_dispatch = false;                // FP8 block scheme: tokens dispatched in fp8 (vLLM DeepEP)
    MatmulType matmul = MatmulType::Bf16;     // the rate the linears run at on this GPU
    bool weight_only_path = false;            // pays the weight-only kernel factor
    std::string note;                         // e.g. "no FP8 tensor cores: runs as W8A16"
};

// Scheme `native` resolved for a model: what each tensor is stored with, as the model's
// config.json declares it (core/checkpoint/quant_config.h module_rule, the inspector's rules).
struct NativeScheme {
    Scheme representative;   // the declared scheme that stores most parameters, with native set
    std::function<const Scheme*(const TensorInfo&)> scheme_for;  // empty: nothing declared (bf16)
    DType model_dtype = DType::Bf16;  // what unquantized tensors are stored in
    std::string description;  // e.g. "fp8 as config.json: quantization_config declares it; most weights stored as w8a8-fp8-block128"
};
// Throws Error("native", ...) when the declared quantization cannot be read.
NativeScheme resolve_native_scheme(const ModelConfig& model, const std::vector<TensorInfo>& inventory);

// Computes the costs of `scheme` on `model` with KV format `kv`, for `gpu` (which decides
// whether the scheme's matmul type exists there; if not, it runs weight-only at bf16 as engines do).
SchemeCosts scheme_costs(const ModelConfig& model, const std::vector<TensorInfo>& inventory, const Scheme& scheme,
                         const KvFormat& kv, const GpuProfile& gpu);

// Layers vLLM's hybrid allocator groups by type (sliding windows, Mamba / gated DeltaNet state);
// without them every layer holds every token in one group.
inline bool has_hybrid_kv_groups(const SchemeCosts& c) { return c.sliding_layers > 0 || c.state_layers > 0; }
// The cache is one full-attention K/V per token in every layer (no MLA latent, windows, chunks or
// state): its split by layer type says nothing more.
inline bool cache_is_uniform(const SchemeCosts& c) { return !c.mla && c.sliding_layers == 0 && c.chunked_layers == 0 && c.state_layers == 0; }

// The cache split by layer type, per GPU: what each kind of layer keeps per token.
struct CacheLayerType {
    std::string type;                 // "full_attention", "sliding_attention", "chunked_attention", "mla_latent", "mamba_state" or "linear_attention_state"
    std::int64_t layers = 0;
    std::uint64_t bytes_per_token = 0;  // all layers of this type, per GPU
    std::int64_t window = 0;          // sliding_attention: tokens a layer keeps at most (0: all)
    std::uint64_t bytes_per_sequence = 0;  // mamba_state, linear_attention_state: the constant state of all its layers, per GPU
    std::int64_t chunk = 0;           // chunked_attention: the chunk a token attends within (cached whole)
};
// From the admission's per-GPU bytes per token (kv_bytes_per_token_per_gpu) and per-GPU Mamba
// state per sequence (Admission::state_bytes_per_sequence).
std::vector<CacheLayerType> cache_by_layer_type(const SchemeCosts& costs, std::uint64_t per_gpu_bytes_per_token,
                                                std::uint64_t state_bytes_per_sequence = 0);
// One line: "18 full_attention + 18 sliding_attention (window 128)", "61 mla_latent".
std::string cache_layout_text(const std::vector<CacheLayerType>& types);

// Weight bytes one GPU holds under workload `w`: everything but the routed experts split over one
// engine's tensor_parallel GPUs (replicated per data-parallel engine), the routed experts over the
// expert_parallel GPUs as whole experts (else sliced over TP), at the padded shapes vLLM allocates
// for MXFP4 (expert_width_pad).
std::uint64_t resident_weight_bytes_per_gpu(const SchemeCosts& costs, const Workload& w);

// Every state layer's (Mamba and gated DeltaNet) state for one sequence on one GPU.
std::uint64_t state_bytes_per_sequence_per_gpu(const SchemeCosts& costs, std::int64_t tp);
// The page one state layer takes in vLLM's hybrid allocator, before padding: the largest state
// layer's bytes (a model has one kind).
std::uint64_t state_page_bytes(const SchemeCosts& costs, std::int64_t tp);
// The attention block size vLLM pages a hybrid Mamba model's cache in so that one attention
// layer's block holds a Mamba layer's state (vLLM 0.11.0 model_executor/models/config.py
// HybridAttentionMambaModelConfig): 16 x ceil(state page / (16 x attention bytes per token per
// layer)), or `configured` when larger; `configured` for other models.
std::int64_t mamba_aligned_block_tokens(const SchemeCosts& costs, std::int64_t configured, std::int64_t tp);

// KV-cache bytes of one token on one GPU of a `tp`-way group: a GQA rank holds ceil(kv_heads / tp)
// heads (vLLM replicates heads when tp exceeds them); every MLA rank holds the whole latent.
std::uint64_t kv_bytes_per_token_per_gpu(const SchemeCosts& costs, std::int64_t tp);


// The KV block size an engine pages this cache in: `configured`, except that vLLM forces 64 tokens
// for an MLA cache whose block size is not a multiple of 64 (FlashMLA on Hopper; vLLM 0.11.0
// platforms/cuda.py check_and_update_config).
std::int64_t kv_block_tokens_for(const SchemeCosts& costs, std::int64_t configured);

// The tokens a chunked-attention layer attends to at position `context` (1-based): those of its
// chunk up to it, (context - 1) % chunk + 1; `context` when chunk is 0.
inline std::int64_t chunk_tokens(std::int64_t context, std::int64_t chunk) {
    return chunk > 0 && context > 0 ? (context - 1) % chunk + 1 : context;
}

// KV-cache bytes one sequence at `context` tokens reads in one step on one GPU: full-attention
// layers every token, sliding-window layers at most their window, chunked layers their chunk so far.
double kv_read_bytes_per_sequence(const SchemeCosts& costs, std::int64_t tp, std::int64_t context);

// Attention FLOPs of one new token attending to `context` cached positions (decode form), all layers.
double attention_flop_per_token(const SchemeCosts& costs, std::int64_t context);

// Attention FLOPs of a prefill chunk of n tokens after `start` (expanded form for MLA; causal;
// sliding layers attend to at most their window).
double prefill_attention_flop(const SchemeCosts& costs, std::int64_t start, std::int64_t n);

// vLLM's hybrid KV-cache groups (vllm/v1/core/kv_cache_utils.py _get_kv_cache_groups_uniform_page_size,
// 0.11.0): layers bucketed by type, every group `group_size` = the smallest type's layer count, each
// type cut into ceil(count / group_size) groups. One group of every layer without sliding layers.
struct HybridKvGroups {
    std::int64_t group_size = 0;
    std::int64_t full_groups = 0;
    std::int64_t sliding_groups = 0;
    std::int64_t state_groups = 0;  // Mamba layers: one block (their state) per request each
    std::int64_t groups() const { return full_groups + sliding_groups + state_groups; }
};
HybridKvGroups hybrid_kv_groups(const SchemeCosts& costs);

// Which resource bounds a step.
enum class Bound : std::uint8_t { Memory, Compute };
const char* bound_name(Bound b);

// One decode step (every sequence of the batch generates one token), per GPU.
struct DecodeStep {
    std::int64_t batch = 0;
    std::int64_t context_tokens = 0;
    std::uint64_t weight_bytes = 0;
    std::uint64_t kv_bytes = 0;
    std::uint64_t activation_bytes = 0;
    double linear_flop = 0;
    double attention_flop = 0;
    double memory_time_s = 0;
    double compute_time_s = 0;
    double communication_time_s = 0;
    double all_to_all_bytes = 0;         // data-parallel expert parallelism: sent by one GPU this step
    double time_s = 0;
    Bound bound = Bound::Memory;

    std::uint64_t total_bytes() const { return weight_bytes + kv_bytes + activation_bytes; }
    double total_flop() const { return linear_flop + attention_flop; }
};

// Prices one decode step at batch `batch` and context `context_tokens`.
DecodeStep decode_step(const SchemeCosts& costs, const GpuProfile& gpu, const EfficiencyProfile& eff, const Workload& w,
                       std::int64_t batch, std::int64_t context_tokens);

// A speculative-decoding verify step: `batch` sequences each run `query_tokens` tokens (the last
// accepted one and the K speculative ones) through the model. The weights are read once and the
// linears' FLOPs, the lm_head and the all-reduce grow with batch x query_tokens rows; each sequence's
// KV cache is read once, its attention FLOPs times query_tokens. query_tokens 1 is decode_step.
DecodeStep verify_step(const SchemeCosts& costs, const GpuProfile& gpu, const EfficiencyProfile& eff, const Workload& w,
                       std::int64_t batch, std::int64_t query_tokens, std::int64_t context_tokens);

// Prefill of one prompt of `prompt_tokens`, in chunks of max_num_batched_tokens.
struct PrefillResult {
    std::int64_t prompt_tokens = 0;
    std::int64_t chunk_tokens = 0;
    std::int64_t chunks = 0;
    double flop = 0;
    std::uint64_t bytes = 0;
    double time_s = 0;        // time to first token
    Bound bound = Bound::Memory;  // of the largest chunk
};
PrefillResult prefill(const SchemeCosts& costs, const GpuProfile& gpu, const EfficiencyProfile& eff, const Workload& w,
                      std::int64_t prompt_tokens);

// The KV-cache budget as an engine computes it, and what it admits.
struct Admission {
    std::uint64_t usable_memory_bytes = 0;      // runtime total per GPU
    double gpu_memory_utilization = 0;
    std::uint64_t engine_memory_bytes = 0;      // utilization x usable
    std::uint64_t weight_bytes = 0;             // resident weights per GPU
    std::uint64_t activation_workspace_bytes = 0;  // peak activations of a max_num_batched_tokens forward
    std::uint64_t sampler_workspace_bytes = 0;  // fp32 logits for max_num_seqs
    std::uint64_t runtime_overhead_bytes = 0;
    std::int64_t budget_bytes = 0;              // what is left for the KV cache (negative: weights do not fit)
    std::uint64_t kv_bytes_per_token = 0;       // per GPU
    std::uint64_t state_bytes_per_sequence = 0;  // per GPU: every Mamba layer's state for one sequence (0: none)
    std::int64_t kv_cache_blocks = 0;
    std::int64_t kv_block_tokens = 0;           // the block size the cache is paged in (kv_block_tokens_for)
    std::int64_t kv_cache_tokens = 0;           // "GPU KV cache size: N tokens"
    double max_concurrency = 0;                 // kv_cache_tokens / context ("Maximum concurrency ... : X.XXx")
    std::int64_t max_sequences = 0;             // whole sequences of `context` tokens that fit
    bool fits = false;                          // weights and at least one sequence fit
    std::string reason;                         // why not, with both numbers
};
Admission admission(const SchemeCosts& costs, const ModelConfig& model, const GpuProfile& gpu, const Workload& w);

// Divides a KV budget (a.budget_bytes > 0, a.kv_bytes_per_token set) into blocks of `block`
// tokens and fills the admission's blocks, tokens, concurrency and sequences at `context`. With
// sliding-window layers and vLLM's hybrid allocator (`hybrid`), as vLLM 0.11.0 kv_cache_utils.py
// counts it: num_blocks = budget / (page x group_size); "GPU KV cache size" = num_blocks / groups x
// block; a request of L tokens takes ceil(L / block) blocks in each full-attention group and
// ceil(min(window - 1 + max_num_batched_tokens, L) / block) + 1 in each sliding one
// (SlidingWindowSpec.max_memory_usage_bytes), which gives the concurrency. Without the hybrid
// allocator every layer holds every token.
// Mamba layers (hybrid allocator): the block is raised to mamba_aligned_block_tokens, each state
// group takes one block per request (MambaSpec.max_memory_usage_bytes), and the logged size is
// num_blocks / groups x min(block, context) (the Mamba groups' block is max_model_len). Without
// the hybrid allocator a sequence holds its state beside its tokens' blocks.
void divide_kv_budget(Admission& a, const SchemeCosts& costs, std::int64_t block, std::int64_t context,
                      std::int64_t max_num_batched_tokens, bool hybrid, std::int64_t tp = 1);

// Where the measured value of a figure is expected to lie: the prediction moved by the p10 and p90
// of the engine profile's leave-one-out errors (docs/fidelity.md).
struct FigureBand {
    double low = 0;
    double high = 0;
};

// The bands of one scheme's figures under an engine profile, and what they stand on.
struct SchemeBands {
    FigureBand throughput_tokens_per_s;
    FigureBand step_time_s;
    FigureBand ttft_s;
    FigureBand kv_cache_tokens;
    // The step band as factors on a predicted step time, for a sweep's other batches: step time T
    // has the band [T x step_low_factor, T x step_high_factor].
    double step_low_factor = 1.0;
    double step_high_factor = 1.0;
    // Which figures have a band: a figure class with fewer than kMinBandPoints corpus points has none.
    bool has_step = false;
    bool has_ttft = false;
    bool has_kv = false;
    std::string basis;          // which corpus points the bands come from, per figure
    bool covered = true;        // the corpus has kernel points for this GPU and scheme family
    std::string coverage_note;  // why not, and that the band was widened
};

// A scheme priced at a workload.
struct SchemeResult {
    SchemeCosts costs;
    Admission admission;
    DecodeStep decode;                 // at min(batch, max_sequences) (requested batch if nothing fits)
    std::int64_t requested_batch = 0;
    PrefillResult prefill;
    double throughput_tokens_per_s = 0;  // decode tokens/s at the admitted batch
    double speedup_vs_bf16 = 0;          // throughput / bf16's throughput at the same workload (NaN when bf16 does not fit)
    std::optional<SchemeBands> bands;    // under an engine profile with a fit (profile "engine")
    // The measured corpus points nearest to this scheme's configuration (same model family and GPU
    // architecture first), with what the fit predicts for each: the evidence behind the figures.
    std::vector<EvidencePoint> evidence;
    // The smallest tensor-parallel degree of 1, 2, 4, 8 at which the scheme fits on this GPU (at
    // the workload's other settings); nullopt when none does.
    std::optional<std::int64_t> fits_from_tp;
};

// A batch size where two schemes swap order (step time at equal batch).
struct Crossover {
    std::string scheme_a;
    std::string scheme_b;
    double batch = 0;             // first batch at which the order differs from the batch before
    std::string faster_below;     // which scheme is faster just below
    std::string faster_above;
};

// Decode step times of `c` at batches 1..max_batch (element i is batch i + 1) at context L.
std::vector<double> step_times(const SchemeCosts& c, const GpuProfile& gpu, const EfficiencyProfile& eff, const Workload& w,
                               std::int64_t max_batch);

// Every order flip of step time between schemes `a` and `b`, from their step_times() (same length:
// integer batches 1..max_batch at context L); a plan prices each scheme's curve once for all pairs.
std::vector<Crossover> numeric_crossovers(const std::string& a, const std::vector<double>& times_a, const std::string& b,
                                          const std::vector<double>& times_b);

// The same flips from step-time functions that are costly to evaluate (the engine step model):
// both are priced at every batch up to `dense_up_to`, then on a geometric grid (each point
// `grid_ratio` times the last, rounded up), and a grid interval whose ends differ in sign is
// bisected for its flip (a tie between grid points is stepped over). Identical to
// numeric_crossovers over the full curves unless more than one flip, or a flip beside a tie,
// falls inside one grid interval (a touch within a few percent of batch).
// `times_a(b)` and `times_b(b)` return the step time at batch b (1-based); callers memoize.
std::vector<Crossover> sparse_numeric_crossovers(const std::string& a, const std::function<double(std::int64_t)>& times_a, const std::string& b,
                                                 const std::function<double(std::int64_t)>& times_b, std::int64_t max_batch,
                                                 std::int64_t dense_up_to = 64, double grid_ratio = 1.02);

// Closed-form crossovers (real-valued batch) of two dense schemes: each step time is
// max(m0 + m1 B, c1 B) + comm B, so flips are intersections of affine pieces.
std::vector<Crossover> closed_form_crossovers(const SchemeCosts& a, const SchemeCosts& b, const GpuProfile& gpu,
                                              const EfficiencyProfile& eff, const Workload& w);

// The batch at which a scheme's decode step turns compute-bound (real-valued, closed form; dense).
double ridge_batch(const SchemeCosts& c, const GpuProfile& gpu, const EfficiencyProfile& eff, const Workload& w);

// Textbook ridge point pi/beta in FLOP/byte for a matmul type (seed 000: 295 bf16, 591 fp8 on H100 SXM).
double ridge_point_flop_per_byte(const GpuProfile& gpu, const EfficiencyProfile& eff, MatmulType type);

// Textbook ridge of one weight-stationary GEMM (seed 000 §4.1.4): a decode GEMM at batch B does 2B
// FLOP per weight read, so it turns compute-bound at B = I* x b_w / 2 with I* = pi/beta the ridge
// point of `type` and b_w the bytes per stored weight (295 for bf16 and for fp8 W8A8, 74 for
// 4-bit weight-only on an H100 SXM, ideal profile).
double gemm_ridge_batch(const GpuProfile& gpu, const EfficiencyProfile& eff, MatmulType type, double bytes_per_weight);

// Batches where two weight-stationary GEMMs swap order: step time per weight is
// max(b_w / beta, 2B / pi_type) for each; W4A16 (bf16 rate) and W8A8-FP8 cross at pi_bf16/(2 beta)
// = 148 on an H100 SXM.
std::vector<double> gemm_crossover_batches(const GpuProfile& gpu, const EfficiencyProfile& eff, MatmulType type_a,
                                           double bytes_per_weight_a, MatmulType type_b, double bytes_per_weight_b);

// Seconds to ring-all-reduce `bytes` over `tp` GPUs on the interconnect (half of it per direction).
double allreduce_time_s(double bytes, std::int64_t tp, const GpuProfile& gpu);

// The same for workload `w`: over the network between nodes when the tensor-parallel group spans
// nodes (tensor_parallel above the GPUs per node).
double allreduce_time_s(double bytes, const Workload& w, const GpuProfile& gpu);

// NCCL's all-reduce without GPU peer-to-peer (its SHM transport: each rank's share staged through
// host memory), from nccl-tests all_reduce_perf on two RTX 2080 Ti on one PCIe3 x16 switch with
// P2P "NS" (assets/collectives/autodl-2080ti-x2-no-p2p.json): 12.25 us for 8 bytes, and a
// bus bandwidth of 4.00 GB/s from 128 MiB up, a quarter of the link's 16 GB/s a direction. A
// 4-GPU RTX 5090 run (PCIe5, NVIDIA/nccl-tests#287) reaches 27 GB/s, 0.42 of its link: the share
// taken here is the two-GPU one, pessimistic on PCIe5 (docs/capacity.md).
struct ShmAllreduce {
    static constexpr double latency_s = 12.25e-6;
    static constexpr double busbw_share_of_host_link = 4.00e9 / 16.0e9;  // of the host link's bandwidth a direction
};

// The peer-to-peer setting as the command line, scenarios and the window spell it: "on", "off" or
// "auto" (nullopt: the GPU profile's). Throws Error(where) for anything else.
std::optional<bool> parse_gpu_p2p(std::string_view value, const std::string& where);

// Whether the tensor-parallel ranks of `w` reach each other peer-to-peer (Workload::gpu_p2p, else
// the GPU profile's).
bool gpu_p2p(const Workload& w, const GpuProfile& gpu);

// Whether tp_allreduce_time_s prices `w`'s all-reduces through host memory: TP above 1 within a
// node, no peer-to-peer, and a host link figure to price the detour by.
bool tp_all_reduces_through_host(const Workload& w, const GpuProfile& gpu);

// The all-reduces of one forward of `tokens` tokens under tensor parallelism: with peer-to-peer,
// allreduce_time_s of their bytes; without it, each all-reduce's SHM latency plus the bytes at the
// SHM bus bandwidth of the GPU's host link (a GPU profile without a host link figure keeps the
// peer-to-peer price).
double tp_allreduce_time_s(const SchemeCosts& c, double tokens, const Workload& w, const GpuProfile& gpu);

// GPUs per node of a workload: data_parallel x tensor_parallel / nodes.
std::int64_t gpus_per_node(const Workload& w);

// The all-to-all of one decode or prefill step under data-parallel expert parallelism, per GPU:
// each of its tokens (batch / tensor_parallel of its engine's, vLLM's sequence-parallel MoE) goes
// to every other GPU holding one of its k experts (expected (EP - 1)(1 - (1 - 1/EP)^k) GPUs under
// uniform routing) and its outputs come back: dispatch in fp8 with 128-wide fp32 scales when the
// scheme is FP8 with 2-D blocks (vLLM's DeepEP path), else bf16; combine bf16 (DeepEP README).
struct AllToAll {
    double bytes = 0;           // sent by one GPU over all MoE layers
    double network_bytes = 0;   // of those, to GPUs on other nodes
    double time_s = 0;          // max(NVLink share / per-direction NVLink, network share / internode)
};
AllToAll moe_all_to_all(const SchemeCosts& costs, const GpuProfile& gpu, const Workload& w, std::int64_t tokens_per_engine);

// Bytes per token of a profiling forward's activation peak: the residual and its normed copy (2h)
// plus the MLP's gate/up output and activation (3I), 2 bytes each, the MLP width split over
// tensor-parallel ranks (MoE: the k routed experts' widths per token).
double profile_activation_bytes_per_token(const SchemeCosts& costs, const ModelConfig& model, std::int64_t tp);

// Expected number of distinct experts a batch of `tokens` touches with k of E routed per token
// (uniform routing): E (1 - (1 - k/E)^tokens).
double expected_distinct_experts(std::int64_t num_experts, std::int64_t experts_per_token, std::int64_t tokens);

// Under expert parallelism over `ep` GPUs (num_experts / ep experts each, uniform routing), the
// busiest GPU's expected load in one layer for a batch of `tokens`:
//   distinct_experts: the most distinct experts any GPU runs (its weight reads);
//   assignments: the most token-expert assignments any GPU computes (its FLOPs).
// Each GPU's count is taken as binomial (experts touched independently with probability
// 1 - (1 - k/E)^tokens; assignments landing with probability 1/ep) and the expected maximum of ep
// of them from the binomial CDF: E[max] = sum over m of (1 - F(m)^ep). ep = 1 gives the means.
struct BusiestGpuLoad {
    double distinct_experts = 0;
    double assignments = 0;
};
BusiestGpuLoad busiest_gpu_load(std::int64_t num_experts, std::int64_t experts_per_token, std::int64_t tokens, std::int64_t ep);

}  // namespace quantplan
